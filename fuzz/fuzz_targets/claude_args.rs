//! The fake claude's command line and inline MCP configs come from the
//! driver under test: parsing any of them must fail cleanly.
#![no_main]
use std::collections::BTreeMap;
use std::path::Path;

use fakes::claude::profile::{Profile, MEASURED};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let args: Vec<String> = text.split('\0').map(String::from).collect();
    let _ = fakes::claude::cli::parse(&args);
    let profile = Profile::new(MEASURED[data.len() % 2]);
    let _ = fakes::claude::config::load_mcp_configs(&[text.to_string()], Path::new("/nonexistent"), &BTreeMap::new(), &profile);
});
