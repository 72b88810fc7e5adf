//! The bodies of the cargo-fuzz targets in `fuzz/`, one per parser of
//! untrusted input. They live here so that the main build compiles them
//! (an API change breaks `cargo build`, not only the fuzz workspace nobody
//! builds by default) and `cargo test` runs each over a seed corpus.
//! Each must never panic; where a parser's answer has a promised shape, it
//! asserts it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fakes::wire::{read_line, Line};

/// Scenario files: an error, always located in the file it names.
pub fn scenario_parse(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = crate::scenario::Scenario::parse(Path::new("fuzz.toml"), text) {
            assert!(e.to_string().starts_with("fuzz.toml:"), "{e}");
        }
    }
}

/// The fakes' JSON-RPC line reader, with a tiny limit so long lines occur.
pub fn jsonrpc_line(data: &[u8]) {
    let mut reader = std::io::Cursor::new(data);
    for _ in 0..data.len() + 1 {
        match read_line(&mut reader, 64) {
            Ok(Line::Eof) | Err(_) => break,
            Ok(Line::Garbage { text, .. }) => assert!(text.chars().count() <= 512),
            Ok(_) => {}
        }
    }
}

/// Codex config.toml and `-c` overrides (split at the first NUL).
pub fn codex_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (file, overrides) = text.split_once('\0').unwrap_or((text, ""));
    let Ok(dir) = tempfile::tempdir() else { return };
    let _ = std::fs::write(dir.path().join("config.toml"), file);
    let overrides: Vec<String> = overrides.lines().map(String::from).collect();
    if let Ok(base) = fakes::codex::config::BaseConfig::load(dir.path(), &overrides) {
        let _ = base.for_thread(None);
    }
}

/// The fake claude's command line (NUL-separated) and inline MCP configs.
pub fn claude_args(data: &[u8]) {
    use fakes::claude::profile::{Profile, MEASURED};
    let Ok(text) = std::str::from_utf8(data) else { return };
    let args: Vec<String> = text.split('\0').map(String::from).collect();
    let _ = fakes::claude::cli::parse(&args);
    let profile = Profile { version: MEASURED[data.len() % MEASURED.len()] };
    let _ = fakes::claude::config::load_mcp_configs(&[text.to_string()], Path::new("/nonexistent"), &BTreeMap::new(), &profile);
}

/// Lines from a driver shim: the schema check and the typed reads.
pub fn shim_message(data: &[u8]) {
    if let Ok(msg) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = crate::shim::check_message(&msg);
        let _ = serde_json::from_value::<crate::driver::TurnOutput>(msg.get("result").cloned().unwrap_or_default());
        let _ = serde_json::from_value::<crate::driver::Prompt>(msg.pointer("/params/prompt").cloned().unwrap_or_default());
    }
}

/// The user's own lists: expected failures, the fidelity allow-list,
/// version ranges, the agreement log, probe recordings.
pub fn lists(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let known: BTreeSet<String> = ["approve-tool-runs-without-prompt".to_string()].into();
        let _ = crate::verdict::expected::ExpectedFailures::parse(Path::new("fuzz.expected"), text, &known);
        let _ = crate::verdict::fidelity::allow::AllowList::parse(text);
        let _ = text.parse::<fakes::version::VersionRange>();
        let _ = crate::agreement::parse(text);
        let _ = serde_json::from_str::<crate::probes::ProbeRun>(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every target over the scenario files, the malformed ones, and a few
    /// hand-made edge cases: what the fuzzers start from.
    #[test]
    fn every_target_takes_the_seed_corpus() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut seeds: Vec<Vec<u8>> = ["../scenarios", "tests/bad-scenarios"]
            .iter()
            .flat_map(|d| std::fs::read_dir(root.join(d)).into_iter().flatten().flatten())
            .filter_map(|e| std::fs::read(e.path()).ok())
            .collect();
        seeds.extend([
            b"".to_vec(),
            b"\xff\xfe".to_vec(),
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"host/decide\",\"params\":{\"prompt\":{\"type\":\"command\"}}}\n".to_vec(),
            b"[mcp_servers.a.tools.t]\napproval_mode = \"approve\"\0mcp_servers.a.enabled=true".to_vec(),
            b"-p\0hi\0--mcp-config\0{\"mcpServers\":{}}".to_vec(),
            b"# c\napprove-tool-runs-without-prompt:prompted\n>=0.1.0".to_vec(),
        ]);
        let targets: [fn(&[u8]); 6] = [scenario_parse, jsonrpc_line, codex_config, claude_args, shim_message, lists];
        for target in targets {
            for seed in &seeds {
                target(seed);
            }
        }
    }
}
