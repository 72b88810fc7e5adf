//! Trials: which (scenario, provider version, driver) runs exist, whether
//! they apply, and running one to a verdict.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use fakes::codex::profile::MEASURED;
use fakes::version::Version;

use crate::driver::Driver;
use crate::judge::{judge, Mismatch};
use crate::reference::{mutants, ReferenceDriver};
use crate::run::{run_trial, Fakes};
use crate::scenario::{Provider, Scenario, ScenarioError};

/// The scenario files compiled into the harness (the default suite).
pub const EMBEDDED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded_scenarios.rs"));

#[derive(Debug)]
pub enum Verdict {
    Pass,
    Fail(Vec<Mismatch>),
    /// Not applicable or not claimed; the reason says which.
    Skip(String),
}

/// Parses the embedded scenarios; errors name the embedded file.
pub fn embedded() -> (Vec<Scenario>, Vec<ScenarioError>) {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (name, text) in EMBEDDED {
        match Scenario::parse(&Path::new("scenarios").join(name), text) {
            Ok(s) => ok.push(s),
            Err(e) => bad.push(e),
        }
    }
    (ok, bad)
}

/// Loads every scenario file below `dir`.
pub fn load_dir(dir: &Path) -> Result<(Vec<Scenario>, Vec<ScenarioError>), ScenarioError> {
    let files = crate::scenario::discover(dir)
        .map_err(|e| ScenarioError::unreadable(dir, format!("cannot list scenarios: {e}")))?;
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for f in files {
        match Scenario::load(&f) {
            Ok(s) => ok.push(s),
            Err(e) => bad.push(e),
        }
    }
    Ok((ok, bad))
}

/// Checks across scenarios: unique ids, and every `caught_by` names a mutant.
pub fn check_set(scenarios: &[Scenario]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut ids = BTreeSet::new();
    let known: BTreeSet<&str> = mutants().iter().map(|m| m.name).collect();
    for s in scenarios {
        if !ids.insert(s.id.clone()) {
            problems.push(format!("{}: scenario id `{}` is used twice", s.path.display(), s.id));
        }
        for m in &s.caught_by {
            if !known.contains(m.as_str()) {
                problems.push(format!("{}: caught_by names unknown mutant `{m}`", s.path.display()));
            }
        }
    }
    problems
}

/// Codex versions measured on the real binary.
pub fn versions() -> &'static [Version] {
    &MEASURED
}

/// Claude Code versions measured on the real binary.
pub const CLAUDE_MEASURED: [Version; 2] = [Version::new(2, 1, 266), Version::new(2, 1, 332)];

/// The versions a scenario's provider is simulated at: one trial each.
/// Providers without a fake get one nominal version.
pub fn versions_for(provider: Provider) -> Vec<Version> {
    match provider {
        Provider::Codex => MEASURED.to_vec(),
        Provider::Claude => CLAUDE_MEASURED.to_vec(),
        Provider::Cursor | Provider::Codebuddy => vec![Version::new(0, 0, 0)],
    }
}

/// `codex-0.148.0::id`, `claude-2.1.332::id`, `cursor::id`.
pub fn trial_name(scenario: &Scenario, version: Version) -> String {
    match scenario.provider {
        Provider::Cursor | Provider::Codebuddy => format!("{}::{}", scenario.provider.as_str(), scenario.id),
        p => format!("{}-{version}::{}", p.as_str(), scenario.id),
    }
}

/// Why a trial does not apply, if it does not.
pub fn skip_reason(scenario: &Scenario, version: Version, capabilities: &BTreeSet<String>) -> Option<String> {
    if !scenario.version_range().contains(version) {
        return Some(format!("not applicable: needs {} {}", scenario.provider.as_str(), scenario.versions));
    }
    if !capabilities.contains(scenario.provider.as_str()) {
        return Some(format!("driver does not claim provider {}", scenario.provider.as_str()));
    }
    let missing: Vec<&str> =
        scenario.requires.iter().filter(|c| !capabilities.contains(*c)).map(String::as_str).collect();
    if !missing.is_empty() {
        return Some(format!("driver does not claim: {}", missing.join(", ")));
    }
    None
}

/// Runs one trial in a fresh temporary directory.
pub fn run(scenario: &Scenario, version: Version, driver: &mut dyn Driver, fakes: &Fakes) -> Verdict {
    run_summarized(scenario, version, driver, fakes).0
}

/// Runs one trial; also returns its fidelity summary (Null when skipped).
pub fn run_summarized(scenario: &Scenario, version: Version, driver: &mut dyn Driver, fakes: &Fakes) -> (Verdict, serde_json::Value) {
    if let Some(reason) = skip_reason(scenario, version, &driver.capabilities()) {
        return (Verdict::Skip(reason), serde_json::Value::Null);
    }
    if fakes.real_only {
        let unsupported = crate::real::unsupported(scenario).or_else(|| {
            fakes.real_binary(scenario.provider, version).is_none().then(|| {
                format!("no real {} {version}: run scripts/fetch-provider.sh {} {version}", scenario.provider.as_str(), scenario.provider.as_str())
            })
        });
        if let Some(reason) = unsupported {
            return (Verdict::Skip(reason), serde_json::Value::Null);
        }
    }
    let dir = match tempfile::Builder::new().prefix("conformance-").tempdir() {
        Ok(d) => d,
        Err(e) => return (Verdict::Fail(vec![harness_error(format!("no temp dir: {e}"))]), serde_json::Value::Null),
    };
    let obs = watchdog(dir.path(), || run_trial(scenario, version, driver, fakes, dir.path()));
    let summary = crate::fidelity::summarize(dir.path(), &obs);
    let mut mismatches = judge(scenario, &obs);
    if obs.timed_out {
        mismatches.insert(0, Mismatch {
            at: "trial".into(),
            field: "time".into(),
            expected: format!("done within {:?}", trial_timeout()),
            actual: "timed out; provider processes were killed".into(),
        });
    }
    // CONFORMANCE_KEEP=1 keeps the run directories of failed trials, =all of every trial.
    let keep = std::env::var("CONFORMANCE_KEEP").unwrap_or_default();
    if keep == "all" || (!keep.is_empty() && !mismatches.is_empty()) {
        let kept: PathBuf = dir.keep();
        eprintln!("kept run directory {} ({})", kept.display(), trial_name(scenario, version));
    }
    let verdict = if mismatches.is_empty() { Verdict::Pass } else { Verdict::Fail(mismatches) };
    (verdict, summary)
}

pub fn run_reference(scenario: &Scenario, version: Version, fakes: &Fakes) -> Verdict {
    run(scenario, version, &mut ReferenceDriver::new(), fakes)
}

/// Runs a mutant on every applicable version. Ok(versions that failed it)
/// when at least one did; Err(explanation) when it got through everywhere.
pub fn run_mutant(scenario: &Scenario, mutant: &str, fakes: &Fakes) -> Result<Vec<Version>, String> {
    let Some(m) = mutants().into_iter().find(|m| m.name == mutant) else {
        return Err(format!("no mutant named `{mutant}`"));
    };
    let mut caught = Vec::new();
    let mut ran = 0;
    for v in versions_for(scenario.provider) {
        let mut driver = (m.build)();
        match run(scenario, v, &mut driver, fakes) {
            Verdict::Fail(_) => caught.push(v),
            Verdict::Pass => ran += 1,
            Verdict::Skip(_) => {}
        }
    }
    if caught.is_empty() {
        Err(format!(
            "mutant `{mutant}` ({}) passed scenario `{}` on all {ran} applicable versions",
            m.bug, scenario.id
        ))
    } else {
        Ok(caught)
    }
}

fn harness_error(message: String) -> Mismatch {
    Mismatch { at: "harness".into(), field: "setup".into(), expected: "a usable run".into(), actual: message }
}

/// Per-trial limit; CONFORMANCE_TRIAL_TIMEOUT (seconds) overrides it.
pub fn trial_timeout() -> Duration {
    std::env::var("CONFORMANCE_TRIAL_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(60))
}

/// Runs `trial`; if it outlives the limit, kills every provider process the
/// fake recorded, which unblocks a driver waiting on it.
fn watchdog(dir: &Path, trial: impl FnOnce() -> crate::run::Observations) -> crate::run::Observations {
    let (done, finished) = mpsc::channel::<()>();
    let fired = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let fired = &fired;
        scope.spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(trial_timeout()) {
                fired.store(true, Ordering::SeqCst);
                crate::run::kill_providers(dir);
            }
        });
        let mut obs = trial();
        let _ = done.send(());
        obs.timed_out = fired.load(Ordering::SeqCst);
        obs
    })
}

// ---- whole runs ---------------------------------------------------------------

/// Where the driver under test comes from.
#[derive(Debug, Clone)]
pub enum DriverSource {
    /// `reference` or `mutant:NAME`, in process.
    Builtin(String),
    /// A shim program and its arguments (docs/driver-protocol.md).
    Shim(Vec<String>),
}

impl DriverSource {
    pub fn label(&self) -> String {
        match self {
            DriverSource::Builtin(n) => n.clone(),
            DriverSource::Shim(cmd) => cmd.join(" "),
        }
    }

    /// A fresh driver for one trial.
    pub fn make(&self) -> Result<Box<dyn Driver>, crate::driver::Failure> {
        match self {
            DriverSource::Shim(cmd) => Ok(Box::new(crate::shim::ShimDriver::start(cmd)?)),
            DriverSource::Builtin(name) if name == "reference" => Ok(Box::new(ReferenceDriver::new())),
            DriverSource::Builtin(name) => {
                let wanted = name.strip_prefix("mutant:").unwrap_or(name);
                mutants()
                    .into_iter()
                    .find(|m| m.name == wanted)
                    .map(|m| Box::new((m.build)()) as Box<dyn Driver>)
                    .ok_or_else(|| crate::driver::Failure::new("bad-driver", format!("no built-in driver `{name}`")))
            }
        }
    }
}

/// Runs every applicable trial; `progress` sees each as it finishes. Err if
/// the driver cannot even be started.
pub fn run_all(
    scenarios: &[&Scenario],
    source: &DriverSource,
    only_versions: &[Version],
    fakes: &Fakes,
    progress: &mut dyn FnMut(&reports::Trial),
) -> Result<Vec<reports::Trial>, crate::driver::Failure> {
    let mut out = Vec::new();
    for s in scenarios {
        for v in versions_for(s.provider).into_iter().filter(|v| only_versions.is_empty() || only_versions.contains(v)) {
            let started = std::time::Instant::now();
            let mut driver = source.make()?;
            let verdict = run(s, v, driver.as_mut(), fakes);
            let (outcome, note, mismatches) = match verdict {
                Verdict::Pass => (reports::Outcome::Pass, None, Vec::new()),
                Verdict::Skip(reason) => (reports::Outcome::Skip, Some(reason), Vec::new()),
                Verdict::Fail(m) => {
                    let untestable = m.iter().find(|m| m.actual.starts_with("not-testable"));
                    (reports::Outcome::Fail, untestable.map(|m| format!("not testable: {}", m.actual)), m)
                }
            };
            let trial = reports::Trial {
                name: trial_name(s, v),
                scenario: s.id.clone(),
                provider: format!("{} {v}", s.provider.as_str()),
                driver: source.label(),
                outcome,
                note,
                mismatches,
                seconds: started.elapsed().as_secs_f64(),
            };
            progress(&trial);
            out.push(trial);
        }
    }
    Ok(out)
}

/// Applies an expected-failure list: matching failures become expected,
/// and each entry that matched nothing becomes a failing record of its own.
pub fn apply_expected(trials: &mut Vec<reports::Trial>, expected: &crate::expected::ExpectedFailures) {
    let mut used = BTreeSet::new();
    for t in trials.iter_mut().filter(|t| t.outcome == reports::Outcome::Fail) {
        if let Some(entries) = expected.excuse(&t.scenario, &t.mismatches) {
            let names: Vec<String> = entries.iter().map(|e| entry_text(e)).collect();
            used.extend(entries.iter().map(|e| e.line));
            t.outcome = reports::Outcome::ExpectedFail;
            t.note = Some(format!("expected by {}", names.join(", ")));
        }
    }
    for e in expected.entries.iter().filter(|e| !used.contains(&e.line)) {
        trials.push(reports::Trial {
            name: format!("expected-failures::{}", entry_text(e)),
            scenario: e.scenario.clone(),
            provider: "expected-failures".into(),
            driver: trials.first().map(|t| t.driver.clone()).unwrap_or_default(),
            outcome: reports::Outcome::UnexpectedPass,
            note: Some(format!("line {}: `{}` no longer fails; remove it", e.line, entry_text(e))),
            mismatches: Vec::new(),
            seconds: 0.0,
        });
    }
}

fn entry_text(e: &crate::expected::Entry) -> String {
    match &e.check {
        Some(c) => format!("{}:{c}", e.scenario),
        None => e.scenario.clone(),
    }
}
