//! A driver stuck waiting on its provider is unblocked by the trial time
//! limit and judged as timed out, instead of hanging the run.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use harness::driver::{Driver, Failure, Host, Launch, ServerSpec, TurnOutput};
use harness::trial::Fakes;
use harness::verdict::Verdict;

/// Starts the provider and waits for output that never comes (it never
/// sends `initialize`).
struct SilentDriver;

impl Driver for SilentDriver {
    fn name(&self) -> String {
        "silent".into()
    }
    fn capabilities(&self) -> BTreeSet<String> {
        harness::driver::reference_capabilities()
    }
    fn fingerprint(&mut self, _: &[ServerSpec], _: &str) -> Result<String, Failure> {
        Ok(String::new())
    }
    fn open(&mut self, launch: &Launch) -> Result<(), Failure> {
        let mut child = Command::new(&launch.process.binary)
            .arg("app-server")
            .env("CODEX_HOME", &launch.process.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| Failure::new("launch-failed", e.to_string()))?;
        let mut out = Vec::new();
        let _ = child.stdout.take().unwrap().read_to_end(&mut out);
        Err(Failure::new("provider-exited", "provider closed its output"))
    }
    fn turn(&mut self, _: &str, _: &[ServerSpec], _: &mut dyn Host) -> Result<TurnOutput, Failure> {
        Ok(TurnOutput::default())
    }
    fn resume(&mut self, _: &Launch) -> Result<(), Failure> {
        Ok(())
    }
    fn close(&mut self) {}
}

#[test]
fn a_stuck_trial_is_killed_and_judged_timed_out() {
    std::env::set_var("CONFORMANCE_TRIAL_TIMEOUT", "1");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/approve-tool-runs-without-prompt.toml");
    let scenario = harness::scenario::Scenario::load(&dir).unwrap();
    let fakes = Fakes::from_bins(env!("CARGO_BIN_EXE_fake-codex"), env!("CARGO_BIN_EXE_fake-claude"), env!("CARGO_BIN_EXE_fake-mcp"), env!("CARGO_BIN_EXE_conformance"));
    let started = Instant::now();
    let version = harness::plan::versions(scenario.provider)[0];
    let verdict = harness::runner::run_with(&scenario, version, &mut SilentDriver, &fakes).verdict;
    assert!(started.elapsed().as_secs() < 10, "the watchdog did not fire");
    match verdict {
        Verdict::Fail(m) => assert_eq!(m[0].field, "time", "{m:?}"),
        other => panic!("expected a timeout failure, got {other:?}"),
    }
}
