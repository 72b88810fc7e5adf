//! Report writers for conformance runs. They take plain [`Trial`] records so
//! they know nothing of how trials ran.

mod junit;
mod matrix;
mod tap;

pub use junit::junit;
pub use matrix::matrix_html;
pub use tap::{tap, tap_with_version};

/// Who ran what.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunInfo {
    pub harness: String,
    pub driver: String,
    /// `provider version` pairs the run covered, e.g. `codex 0.148.0`.
    pub providers: Vec<String>,
    /// The criteria the scenarios cover, in the order to show them.
    pub criteria: Vec<Criterion>,
    /// Why the run ended before all its trials did (e.g. `interrupted by
    /// SIGINT: 3 of 10 trials finished`); every report says so visibly.
    pub incomplete: Option<String>,
}

/// One criterion (a source document's acceptance item, or the project's
/// own) and the scenarios claiming to cover it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Criterion {
    pub tag: String,
    /// The group it belongs to, e.g. the acceptance list it is quoted from.
    pub group: String,
    pub text: String,
    pub scenarios: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Fail,
    /// Not applicable, or needs a capability the driver does not claim.
    Skip,
    /// Listed as an expected failure and failed.
    ExpectedFail,
    /// Listed as an expected failure but passed (fails a strict run).
    UnexpectedPass,
    /// The run was stopped while the trial ran: no verdict on the driver.
    Interrupted,
}

/// One expectation that did not hold.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mismatch {
    pub at: String,
    pub field: String,
    pub expected: String,
    pub actual: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Trial {
    /// `codex-0.148.0::scenario-id`.
    pub name: String,
    pub scenario: String,
    /// `codex 0.148.0`.
    pub provider: String,
    pub driver: String,
    pub outcome: Outcome,
    /// Skip reason, expected-failure note, or harness error.
    pub note: Option<String>,
    pub mismatches: Vec<Mismatch>,
    pub seconds: f64,
}

/// A line-by-line diff of expected against actual, for humans.
pub fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .header("expected", "actual")
        .to_string()
}

/// Totals in the plain form CI reads: `N passed, N failed, N skipped`, and
/// `, N interrupted` after it when some were.
pub fn summary(trials: &[Trial]) -> String {
    let count = |o: &[Outcome]| trials.iter().filter(|t| o.contains(&t.outcome)).count();
    let mut line = format!(
        "{} passed, {} failed, {} skipped",
        count(&[Outcome::Pass, Outcome::ExpectedFail]),
        count(&[Outcome::Fail, Outcome::UnexpectedPass]),
        count(&[Outcome::Skip])
    );
    let interrupted = count(&[Outcome::Interrupted]);
    if interrupted > 0 {
        line.push_str(&format!(", {interrupted} interrupted"));
    }
    line
}
