//! The verdict on one trial: the every-trial invariants, then the scenario's
//! expectations, in one [`Verdict`]. Expected-failure lists and the fidelity
//! comparison with real recordings judge results too, so they live here.

pub mod expected;
pub mod fidelity;
mod invariants;
pub use invariants::redact;
mod judge;
mod rendering;

use std::fmt;

use fakes::version::Version;

pub use judge::describe_step;
/// One expectation that did not hold: `at` is `step 3 (tool_call
/// files.read_file)`, `launch`, `invariant` ...
pub use reports::Mismatch;

use crate::plan::SkipReason;
use crate::scenario::Scenario;
use crate::trial::Observations;

/// The error kind a driver uses for an operation it does not implement.
pub const NOT_TESTABLE: &str = "not-testable";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail(Vec<Mismatch>),
    /// The driver does not implement an operation the scenario needs, so
    /// the scenario could not be checked (it fails the run all the same).
    NotTestable { reason: NotTestable, mismatches: Vec<Mismatch> },
    /// Not applicable, or not claimed; the reason says which.
    Skip(SkipReason),
}

/// Which operation the driver could not do, in its own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotTestable {
    /// `launch`, or the step whose driver call it was.
    pub at: String,
    pub message: String,
}

impl fmt::Display for NotTestable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not testable: {}: {}", self.at, self.message)
    }
}

/// Judges one trial's observations.
pub fn judge(scenario: &Scenario, version: Option<Version>, obs: &Observations) -> Verdict {
    let mut mismatches = invariants::check(scenario, version, obs);
    if obs.run.setup_error.is_none() {
        mismatches.extend(judge::judge(scenario, obs));
        mismatches.extend(rendering::check(scenario, obs));
    }
    if mismatches.is_empty() {
        return Verdict::Pass;
    }
    match not_testable(scenario, obs) {
        Some(reason) => Verdict::NotTestable { reason, mismatches },
        None => Verdict::Fail(mismatches),
    }
}

fn not_testable(scenario: &Scenario, obs: &Observations) -> Option<NotTestable> {
    let at_launch = obs.launch_error.iter().map(|e| ("launch".to_string(), e));
    let at_steps = obs
        .steps
        .iter()
        .zip(&scenario.steps)
        .enumerate()
        .filter_map(|(i, (o, step))| o.driver.error.as_ref().map(|e| (format!("step {} ({})", i + 1, describe_step(step)), e)));
    at_launch
        .chain(at_steps)
        .find(|(_, e)| e.kind == NOT_TESTABLE)
        .map(|(at, e)| NotTestable { at, message: e.message.clone() })
}

impl Verdict {
    /// `pass`, `fail`, `not-testable` or `skip`.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail(_) => "fail",
            Verdict::NotTestable { .. } => NOT_TESTABLE,
            Verdict::Skip(_) => "skip",
        }
    }

    pub fn failed(&self) -> bool {
        matches!(self, Verdict::Fail(_) | Verdict::NotTestable { .. })
    }

    pub fn mismatches(&self) -> &[Mismatch] {
        match self {
            Verdict::Fail(m) | Verdict::NotTestable { mismatches: m, .. } => m,
            _ => &[],
        }
    }

    /// The skip reason or the not-testable reason, for a report's note.
    pub fn note(&self) -> Option<String> {
        match self {
            Verdict::Skip(reason) => Some(reason.to_string()),
            Verdict::NotTestable { reason, .. } => Some(reason.to_string()),
            _ => None,
        }
    }

    /// Every secret value in the verdict's words replaced; a leak itself is
    /// already a mismatch naming where, never the value.
    pub fn redact(&mut self, secrets: &[String]) {
        let fix = |m: &mut Mismatch| {
            for t in [&mut m.at, &mut m.field, &mut m.expected, &mut m.actual] {
                *t = invariants::redact(t, secrets);
            }
        };
        match self {
            Verdict::Fail(ms) => ms.iter_mut().for_each(fix),
            Verdict::NotTestable { reason, mismatches } => {
                reason.message = invariants::redact(&reason.message, secrets);
                mismatches.iter_mut().for_each(fix);
            }
            _ => {}
        }
    }

    /// Ok for a pass or a skip; otherwise every mismatch, one per line.
    pub fn into_result(self) -> Result<(), String> {
        if !self.failed() {
            return Ok(());
        }
        let mut lines: Vec<String> = self.note().into_iter().collect();
        lines.extend(self.mismatches().iter().map(describe));
        Err(lines.join("\n"))
    }
}

/// `at: field: expected X, got Y`.
pub fn describe(m: &Mismatch) -> String {
    format!("{}: {}: expected {}, got {}", m.at, m.field, m.expected, m.actual)
}
