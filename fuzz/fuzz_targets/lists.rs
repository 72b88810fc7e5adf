//! The user's own lists are untrusted text: an expected-failures file, the
//! fidelity allow-list and version ranges must give an error, never panic.
#![no_main]
use std::collections::BTreeSet;
use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let known: BTreeSet<String> = ["approve-tool-runs-without-prompt".to_string()].into();
        let _ = harness::verdict::expected::ExpectedFailures::parse(Path::new("fuzz.expected"), text, &known);
        let _ = harness::verdict::fidelity::allow::AllowList::parse(text);
        let _ = text.parse::<fakes::version::VersionRange>();
    }
});
