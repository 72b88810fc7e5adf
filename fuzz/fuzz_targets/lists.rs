//! The user's own lists are untrusted text: an expected-failures file, the
//! fidelity allow-list, version ranges, the agreement log and probe
//! recordings must give an error, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body lives in harness::fuzzing, where the main build compiles it.
fuzz_target!(|data: &[u8]| harness::fuzzing::lists(data));
