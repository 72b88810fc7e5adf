//! The fakes' line reader faces whatever a driver writes: it must frame any
//! byte stream without panicking and never keep more than its limit.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body lives in harness::fuzzing, where the main build compiles it.
fuzz_target!(|data: &[u8]| harness::fuzzing::jsonrpc_line(data));
