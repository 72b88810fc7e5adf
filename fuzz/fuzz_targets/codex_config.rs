//! config.toml and `-c key=value` overrides come from the driver under test:
//! loading them must fail cleanly, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body lives in harness::fuzzing, where the main build compiles it.
fuzz_target!(|data: &[u8]| harness::fuzzing::codex_config(data));
