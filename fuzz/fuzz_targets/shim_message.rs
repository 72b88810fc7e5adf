//! Lines from a driver shim are untrusted: checking them against the
//! protocol schema and reading them must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body lives in harness::fuzzing, where the main build compiles it.
fuzz_target!(|data: &[u8]| harness::fuzzing::shim_message(data));
