//! One trial: a scenario played against one driver on one provider version,
//! in a fresh run directory, under a watchdog. A trial yields
//! [`Observations`] and nothing else; judging them is the verdict's job.

mod host;
mod observe;
mod play;
mod providers;
pub mod real;
mod setup;
mod wrapper;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use fakes::wire::read_jsonl;
use serde_json::Value;
use tempfile::TempDir;

pub use providers::{FakeCommand, Fakes};
pub use wrapper::CODEX_WRAPPER_KEYS;

use crate::contain;
use crate::stop::NoMessage;
use crate::driver::{Driver, Failure, Prompt};
use crate::limits::trial_timeout;
use crate::plan::Target;
use crate::scenario::Scenario;

/// The provider's transcript in a run directory, whichever fake wrote it.
pub const TRANSCRIPT: &str = "provider.jsonl";

/// Everything observed during one trial.
#[derive(Debug, Default)]
pub struct Observations {
    /// The driver refused to open the session (or failed to).
    pub launch_error: Option<Failure>,
    /// Host prompts no step accounts for.
    pub stray_prompts: Vec<Prompt>,
    pub steps: Vec<StepObservation>,
    pub provider: ProviderRecord,
    pub run: RunRecord,
    /// The capabilities the driver claimed: some change how it is judged.
    pub claimed: BTreeSet<String>,
}

/// What the provider processes recorded: their transcript, wire and events.
#[derive(Debug, Default)]
pub struct ProviderRecord {
    pub transcript: Vec<Value>,
}

impl ProviderRecord {
    /// Provider processes started (from the fake's own launch records).
    pub fn launches(&self) -> usize {
        self.events("launch").count()
    }

    /// Every approvalPolicy the provider's threads were opened with.
    pub fn approval_policies(&self) -> Vec<&Value> {
        self.events("thread").map(|e| &e["approvalPolicy"]).collect()
    }

    /// Threads the provider opened (on a real run, as the wire shows them).
    pub fn threads(&self) -> usize {
        self.events("thread").count()
    }

    /// The effective approval settings of each thread, as the fake Codex
    /// records them (a real CLI reports none).
    pub fn approval_settings(&self) -> Vec<&Value> {
        self.events(fakes::codex::effective::EVENT).collect()
    }

    /// Whether each initialize asked for experimentalApi.
    pub fn experimental_api(&self) -> Vec<bool> {
        let initialize = self.transcript.iter().filter(|e| e["dir"] == "c2s" && e["msg"]["method"] == "initialize");
        initialize.map(|e| e["msg"]["params"]["capabilities"]["experimentalApi"] == true).collect()
    }

    fn events<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.transcript.iter().filter(move |e| e["event"] == kind)
    }
}

/// The run itself: its directory, the secrets handed out, what went wrong.
#[derive(Debug, Default)]
pub struct RunRecord {
    pub path: PathBuf,
    /// The run directory; removed when dropped unless kept.
    pub dir: Option<TempDir>,
    /// Every secret value the host handed out, initial and rotated.
    pub secrets: Vec<String>,
    /// The harness could not prepare the run.
    pub setup_error: Option<String>,
    /// The trial hit its time limit.
    pub timed_out: bool,
    /// It ran a real provider binary, not a fake.
    pub real: bool,
}

#[derive(Debug, Default, Clone)]
pub struct StepObservation {
    /// The fake provider's outcome record for this step, if any.
    pub outcome: Option<Value>,
    /// How many times the MCP server (or, for the host's own tools, the
    /// host) received this step's call.
    pub server_calls: u64,
    pub host: HostSaw,
    pub driver: DriverSaw,
}

/// What reached the host during a step.
#[derive(Debug, Default, Clone)]
pub struct HostSaw {
    /// The driver passed a decision to the host.
    pub asked: bool,
    /// Calls of the host's own tool this step made through the bridge.
    pub bridge_calls: u64,
    /// Gateway pauses the driver made for this step, and the row it bound.
    pub interrupted: bool,
    pub oauth_required: bool,
    pub bound_row: Option<String>,
}

/// What the driver reported for a step.
#[derive(Debug, Default, Clone)]
pub struct DriverSaw {
    /// A driver call made for this step (turn, resume ...) failed.
    pub error: Option<Failure>,
    pub fingerprint: Option<String>,
    /// The driver reported a bridged record under this step's call id.
    pub recorded: bool,
}

/// Runs one trial in a fresh temporary directory. If it outlives the limit,
/// the provider processes are killed, which unblocks a driver waiting on
/// them, and the observations say it timed out.
pub fn run(scenario: &Scenario, target: Target, driver: &mut dyn Driver, fakes: &Fakes) -> Observations {
    let dir = match tempfile::Builder::new().prefix("conformance-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            let run = RunRecord { setup_error: Some(format!("no temp dir: {e}")), ..RunRecord::default() };
            return Observations { run, ..Observations::default() };
        }
    };
    let mut obs = run_in(scenario, target, driver, fakes, dir.path());
    obs.run.dir = Some(dir);
    obs
}

/// Runs one trial in `dir` under the watchdog, which kills the provider
/// processes when the trial outlives its limit or the run is stopped.
pub fn run_in(scenario: &Scenario, target: impl Into<Target>, driver: &mut dyn Driver, fakes: &Fakes, dir: &Path) -> Observations {
    let target = target.into();
    driver.record_to(&dir.join("driver"));
    let (done, finished) = mpsc::channel::<()>();
    let fired = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let fired = &fired;
        scope.spawn(move || {
            match crate::stop::recv_until(&finished, Instant::now() + trial_timeout()) {
                Ok(()) | Err(NoMessage::Disconnected) => return,
                Err(NoMessage::Stopped) => {}
                Err(NoMessage::TimedOut) => fired.store(true, Ordering::SeqCst),
            }
            kill_providers(dir);
        });
        let mut obs = play::play(scenario, target, driver, fakes, dir);
        let _ = done.send(());
        obs.run.timed_out = fired.load(Ordering::SeqCst);
        obs
    })
}

/// Waits, at most [`SETTLE`], for the stdio MCP servers a trial started to
/// end, so their recordings are whole (a server whose provider died reads
/// end of input and records it as it exits), then kills any still running:
/// a trial leaves no process behind.
pub fn settle_servers(recordings: &std::collections::BTreeMap<String, std::path::PathBuf>) {
    let pids: Vec<libc::pid_t> = recordings
        .values()
        .flat_map(|p| read_jsonl(p).unwrap_or_default())
        .filter(|e| e["event"] == "start" && e["transport"] == "stdio")
        .filter_map(|e| e["pid"].as_i64()?.try_into().ok())
        .collect();
    let deadline = std::time::Instant::now() + SETTLE;
    while pids.iter().any(|&p| contain::alive(p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    pids.into_iter().filter(|&p| contain::alive(p)).for_each(contain::kill);
}

/// How long a trial's stdio MCP servers get to end after the driver closed.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// Kills the provider processes the fake recorded launching in `dir`.
pub fn kill_providers(dir: &Path) {
    for e in read_jsonl(&dir.join(TRANSCRIPT)).unwrap_or_default() {
        if e["event"] == "launch" {
            if let Some(pid) = e["pid"].as_i64().and_then(|p| p.try_into().ok()) {
                contain::kill(pid);
            }
        }
    }
}

