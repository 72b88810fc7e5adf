//! The fake claude's command line and inline MCP configs come from the
//! driver under test: parsing any of them must fail cleanly.
#![no_main]
use libfuzzer_sys::fuzz_target;

// The body lives in harness::fuzzing, where the main build compiles it.
fuzz_target!(|data: &[u8]| harness::fuzzing::claude_args(data));
