//! Every committed CLI probe recording (recordings/probes/, written by
//! `conformance probe` on the real binaries) replayed on the fake: the same
//! exit code, stdout and stderr.

use std::path::Path;

use harness::probes::{self, ProbeRun, PROBES};
use harness::scenario::Provider;
use serde_json::json;

const FAKE_CLAUDE: &str = env!("CARGO_BIN_EXE_fake-claude");
const FAKE_CODEX: &str = env!("CARGO_BIN_EXE_fake-codex");

#[test]
fn the_fake_answers_every_recorded_probe_as_the_real_cli_did() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings");
    let files = probes::recordings(&root);
    assert!(files.len() >= PROBES.len(), "no probe recordings below {}", root.display());
    let mut failures = Vec::new();
    for file in &files {
        let real: ProbeRun = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let probe = PROBES.iter().find(|p| p.name == real.probe).unwrap_or_else(|| panic!("{}: no probe `{}`", file.display(), real.probe));
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script.json");
        let text = json!({"version": real.version, "transcript": dir.path().join("cli.jsonl"), "state": dir.path().join("state.json"), "turns": []});
        std::fs::write(&script, text.to_string()).unwrap();
        let fake_cli = if probe.provider == Provider::Codex { FAKE_CODEX } else { FAKE_CLAUDE };
        let fake = probes::run(Path::new(fake_cli), &["--run".into(), script.display().to_string()], probe, &real.version, dir.path()).unwrap();
        if fake != real {
            failures.push(format!("{}:\n  real {real:?}\n  fake {fake:?}", file.display()));
        }
    }
    assert!(failures.is_empty(), "{} of {} probes differ:\n{}", failures.len(), files.len(), failures.join("\n"));
}
