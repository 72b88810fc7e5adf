//! Scenario files are untrusted input: parsing any bytes must return a
//! located error or a scenario, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body lives in harness::fuzzing, where the main build compiles it.
fuzz_target!(|data: &[u8]| harness::fuzzing::scenario_parse(data));
