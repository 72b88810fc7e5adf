//! Runs planned trials to verdicts: [`run_with`] is the one function that
//! runs a trial (skip check, the trial, its verdict, keeping its run
//! directory); [`run_all`] fans a plan out over the pool and turns each
//! verdict into a report record.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use fakes::version::Version;

use crate::driver::{Driver, Failure};
use crate::plan::{self, SkipReason, Target, Trial};
use crate::scenario::design::{self, Design};
use crate::scenario::Scenario;
use crate::trial::{self, Fakes};
use crate::verdict::{self, fidelity, Verdict};

/// A trial's verdict and what fidelity comparisons read of its run (empty
/// when it did not run).
pub struct Outcome {
    pub verdict: Verdict,
    pub capture: fidelity::Capture,
    /// The last lines the shim wrote to stderr, for a failed verdict
    /// (secrets redacted).
    pub stderr: Option<String>,
}

/// Runs one trial of `scenario` against `driver` on `target` (a version
/// alone: tool search off).
pub fn run_with(scenario: &Scenario, target: impl Into<Target>, driver: &mut dyn Driver, fakes: &Fakes) -> Outcome {
    let target = target.into();
    let version = target.version;
    let skipped = |reason| Outcome { verdict: Verdict::Skip(reason), capture: fidelity::Capture::default(), stderr: None };
    let capabilities = driver.capabilities();
    let unknown = crate::driver::unknown_capabilities(&capabilities);
    if !unknown.is_empty() {
        let message = format!("the driver claims unknown capabilities {} (known: {})", unknown.join(", "), crate::scenario::capability_names());
        let reason = verdict::NotTestable { at: "hello".into(), message };
        return Outcome { verdict: Verdict::NotTestable { reason, mismatches: Vec::new() }, capture: fidelity::Capture::default(), stderr: None };
    }
    if let Some(reason) = plan::skip_reason(scenario, version, &capabilities) {
        return skipped(reason);
    }
    if let Some(reason) = plan::driver_version_skip(scenario, version, &driver.provider_versions()) {
        return skipped(reason);
    }
    if fakes.real_only {
        if let Some(reason) = plan::real_run_skip(scenario) {
            return skipped(reason);
        }
        if fakes.real_binary(scenario.provider, version).is_none() {
            let version = version.map(|v| v.to_string()).unwrap_or_default();
            return skipped(SkipReason::NoRealBinary { provider: scenario.provider.as_str(), version });
        }
    }
    let mut obs = trial::run(scenario, target, driver, fakes);
    // Judged as the driver's prompt design has it; played as written.
    let expected = design::expectations(scenario, Design::of(&capabilities, scenario.provider));
    let mut verdict = verdict::judge(&expected, version, &obs);
    verdict.redact(&obs.run.secrets);
    let stderr = verdict
        .failed()
        .then(|| crate::shim::stderr_tail(&obs.run.path, 5))
        .flatten()
        .map(|t| verdict::redact(&t, &obs.run.secrets));
    let capture = fidelity::capture(&obs.run.path, &obs, &fakes.mcp);
    // An interrupted trial's failure is ours, not the driver's.
    if crate::limits::keep_run_dir(verdict.failed() && !crate::stop::requested()) {
        if let Some(dir) = obs.run.dir.take() {
            eprintln!("kept run directory {} ({})", dir.keep().display(), plan::trial_name(scenario, target));
        }
    }
    Outcome { verdict, capture, stderr }
}

/// Runs one planned trial with a fresh driver; Err if the driver cannot start.
pub fn run_one(trial: &Trial, fakes: &Fakes) -> Result<Outcome, Failure> {
    let mut driver = trial.driver.make(&fakes.supervise)?;
    Ok(run_with(&trial.scenario, trial.target, driver.as_mut(), fakes))
}

/// The report record of a finished trial.
pub fn record(trial: &Trial, verdict: &Verdict, stderr: Option<&str>, seconds: f64) -> reports::Trial {
    let outcome = match verdict {
        Verdict::Pass => reports::Outcome::Pass,
        Verdict::Skip(_) => reports::Outcome::Skip,
        Verdict::Fail(_) | Verdict::NotTestable { .. } => reports::Outcome::Fail,
    };
    reports::Trial {
        name: trial.name(),
        scenario: trial.scenario.id.clone(),
        provider: trial.provider_label(),
        driver: trial.driver.label(),
        outcome,
        note: match (verdict.note(), stderr.map(|t| format!("shim stderr, last lines:\n{t}"))) {
            (Some(note), Some(tail)) => Some(format!("{note}\n{tail}")),
            (note, tail) => note.or(tail),
        },
        mismatches: verdict.mismatches().to_vec(),
        seconds,
    }
}

/// Runs every trial on `jobs` threads; `progress` sees each record in plan
/// order. A driver that cannot even start fails its trials as not testable,
/// with the reason; after its first failure the rest fail at once instead of
/// each waiting for it again, and every other driver's results stand.
///
/// Once the run is stopped ([`crate::stop`]) no trial starts, and those are
/// left out; a trial that failed while it was stopped is `Interrupted`, not
/// a failure of the driver.
pub fn run_all(trials: &[Trial], fakes: &Fakes, jobs: usize, mut progress: impl FnMut(&reports::Trial)) -> Vec<reports::Trial> {
    let broken: Mutex<BTreeMap<String, Failure>> = Mutex::new(BTreeMap::new());
    let records = crate::pool::map_ordered(
        trials,
        jobs,
        |t| {
            if crate::stop::requested() {
                return None;
            }
            let started = Instant::now();
            let label = t.driver.label();
            let known = broken.lock().ok().and_then(|b| b.get(&label).cloned());
            let (verdict, stderr) = match known {
                Some(first) => (not_started(&first, true), None),
                None => match run_one(t, fakes) {
                    Ok(o) => (o.verdict, o.stderr),
                    Err(e) => {
                        let verdict = not_started(&e, false);
                        if let Ok(mut b) = broken.lock() {
                            b.entry(label).or_insert(e);
                        }
                        (verdict, None)
                    }
                },
            };
            let mut r = record(t, &verdict, stderr.as_deref(), started.elapsed().as_secs_f64());
            if r.outcome == reports::Outcome::Fail && crate::stop::requested() {
                r.outcome = reports::Outcome::Interrupted;
                r.note = Some("the run was stopped while this trial ran; no verdict".into());
                r.mismatches.clear();
            }
            Some(r)
        },
        |_, r| {
            if let Some(r) = r {
                progress(r)
            }
        },
    );
    records.into_iter().flatten().collect()
}

fn not_started(e: &Failure, again: bool) -> Verdict {
    let seen = if again { " (as in its first trial)" } else { "" };
    let message = format!("the driver could not start{seen}: {}: {}", e.kind, e.message);
    Verdict::NotTestable { reason: verdict::NotTestable { at: "hello".into(), message }, mismatches: Vec::new() }
}

/// Runs a mutant on every applicable measured version. Ok(versions that failed it)
/// when at least one did; Err(explanation) when it got through everywhere.
pub fn run_mutant(scenario: &Scenario, mutant: &str, fakes: &Fakes) -> Result<Vec<Option<Version>>, String> {
    let Some(m) = crate::mutants::mutants().into_iter().find(|m| m.name == mutant) else {
        return Err(format!("no mutant named `{mutant}`"));
    };
    let mut caught = Vec::new();
    let mut ran = 0;
    for v in plan::measured(scenario.provider) {
        let verdict = run_with(scenario, v, &mut m.build(), fakes).verdict;
        if verdict.failed() {
            caught.push(v);
        } else if verdict == Verdict::Pass {
            ran += 1;
        }
    }
    if caught.is_empty() {
        Err(format!("mutant `{mutant}` ({}) passed scenario `{}` on all {ran} applicable versions", m.bug, scenario.id))
    } else {
        Ok(caught)
    }
}
