//! Lines from a driver shim are untrusted: checking them against the
//! protocol schema and reading them must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(msg) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = harness::shim::check_message(&msg);
        let _ = serde_json::from_value::<harness::driver::TurnOutput>(msg.get("result").cloned().unwrap_or_default());
        let _ = serde_json::from_value::<harness::driver::Prompt>(msg.pointer("/params/prompt").cloned().unwrap_or_default());
    }
});
