//! Scenario files are untrusted input: parsing any bytes must return a
//! located error or a scenario, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = harness::scenario::Scenario::parse(std::path::Path::new("fuzz.toml"), text) {
            assert!(e.to_string().starts_with("fuzz.toml:"));
        }
    }
});
