//! The fakes' HTTP/1.1 request parser faces whatever a provider (or a
//! hostile peer) sends to an MCP server or the mock model: any bytes must
//! give a request, a clean end, or a 400/413, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(status) = fakes::http::parse_request_bytes(data) {
        assert!(status == 400 || status == 413, "status {status}");
    }
});
