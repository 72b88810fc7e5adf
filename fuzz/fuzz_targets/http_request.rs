//! The loopback HTTP server (hyper, as configured for the fakes' MCP and
//! mock-model servers and the drivers' bridge) faces whatever a provider or
//! a hostile peer sends. Any bytes on one connection must give answers or a
//! silent close, never a panic; every answer is 200 (the echo handler),
//! 100 Continue, or a refusal: 400, 413, 414 or 431.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let out = loopback_http::answer_bytes(data);
    if out.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1."), "not an answer: {text:?}");
    let status: u16 = text.get(9..12).and_then(|s| s.parse().ok()).expect("status code");
    assert!([100, 200, 400, 413, 414, 431].contains(&status), "status {status}");
});
