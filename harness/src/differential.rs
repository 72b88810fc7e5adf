//! Differential fidelity: generated cases (`generate`) played on the fake
//! and on a real CLI, their recordings compared message by message as the
//! offline fidelity trials compare a committed recording. A case agrees
//! when every normalized message matches (within the allow-list); it is
//! flaky when two real runs of it differ, and crashed when a real run ended
//! without a verdict (a hang stopped by the trial's watchdog, a crash).

use std::sync::Arc;

use fakes::version::Version;

use crate::generate;
use crate::plan::{Target, ToolSearch, Trial};
use crate::recordings::record_trial;
use crate::scenario::{Provider, Scenario};
use crate::source::DriverSource;
use crate::trial::Fakes;
use crate::verdict::fidelity::allow::AllowList;
use crate::verdict::fidelity::compare::compare;
use crate::verdict::fidelity::{summary_diff, Recording};
use crate::verdict::Verdict;

/// What one case came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every message agrees: how many there were.
    Agree(usize),
    /// The fake and the real CLI differ: the differences, readably.
    Disagree(Vec<String>),
    /// Two real runs differ: the differences between them.
    Flaky(Vec<String>),
    /// A real run gave no recording: why.
    Crashed(String),
}

/// Case `n` of `seed` as a scenario, with its id `gen-<seed>-<n>`.
pub fn case_scenario(provider: Provider, seed: u64, n: u64) -> Result<(String, Scenario), String> {
    let id = format!("gen-{seed}-{n}");
    let scenario = generate::nth(provider, seed, n).scenario(&id, &format!("seed {seed} case {n}"))?;
    Ok((id, scenario))
}

/// Plays `scenario` on `real` twice and on `fake` once with `driver`, and
/// compares; with the first real recording, when there was one.
pub fn run_case(scenario: Arc<Scenario>, version: Version, driver: &DriverSource, real: &Fakes, fake: &Fakes, allow: &AllowList) -> (Outcome, Option<Recording>) {
    let trial = Trial { scenario, target: Target { version: Some(version), tool_search: ToolSearch::Off }, driver: driver.clone() };
    // A real run the driver could not finish (the CLI crashed, or hung
    // until the trial's watchdog) is reported as such, never compared.
    let record = |fakes: &Fakes| -> Result<Recording, String> {
        match record_trial(&trial, fakes)? {
            (Verdict::NotTestable { reason, .. }, _) => Err(format!("{}: {}", reason.at, reason.message)),
            (_, Some(r)) => Ok(r),
            (Verdict::Skip(why), None) => Err(format!("skipped: {why}")),
            (v, None) => Err(format!("no recording ({v:?})")),
        }
    };
    let (first, second) = match (record(real), record(real)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return (Outcome::Crashed(e), None),
    };
    let between = differences(&first, &second, None);
    if !between.is_empty() {
        return (Outcome::Flaky(between), Some(first));
    }
    let outcome = match record(fake) {
        Ok(f) => {
            let found = differences(&first, &f, Some((allow, version)));
            if found.is_empty() {
                Outcome::Agree(compare(&first.conversations, &f.conversations).messages)
            } else {
                Outcome::Disagree(found)
            }
        }
        Err(e) => Outcome::Disagree(vec![format!("the fake gave no recording: {e}")]),
    };
    (outcome, Some(first))
}

/// The summary difference and each message difference of `other` against
/// `real`, those the allow-list covers left out.
fn differences(real: &Recording, other: &Recording, allow: Option<(&AllowList, Version)>) -> Vec<String> {
    let mut out: Vec<String> = summary_diff(&real.summary, &other.summary).into_iter().map(|d| format!("outcome summary: {d}")).collect();
    for d in compare(&real.conversations, &other.conversations).differences {
        if allow.is_some_and(|(list, v)| list.allows(&real.provider, v, &d).is_some()) {
            continue;
        }
        out.push(d.to_string());
    }
    out
}

/// `agree/cases (rate%), flaky F, crashed C`.
pub fn tally(runs: &[Outcome]) -> String {
    let count = |f: fn(&Outcome) -> bool| runs.iter().filter(|o| f(o)).count();
    let agree = count(|o| matches!(o, Outcome::Agree(_)));
    let flaky = count(|o| matches!(o, Outcome::Flaky(_)));
    let crashed = count(|o| matches!(o, Outcome::Crashed(_)));
    let compared = runs.len() - flaky - crashed;
    let rate = if compared == 0 { 0.0 } else { 100.0 * agree as f64 / compared as f64 };
    format!("{agree}/{compared} agree ({rate:.1}%), {flaky} flaky, {crashed} crashed, of {} cases", runs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tally_counts_flaky_and_crashed_cases_apart() {
        let runs = [Outcome::Agree(3), Outcome::Agree(4), Outcome::Disagree(vec!["x".into()]), Outcome::Flaky(vec![]), Outcome::Crashed("hang".into())];
        assert_eq!(tally(&runs), "2/3 agree (66.7%), 1 flaky, 1 crashed, of 5 cases");
    }

    #[test]
    fn case_ids_and_scenarios_follow_the_seed() {
        let (id, s) = case_scenario(Provider::Codex, 42, 7).unwrap();
        assert_eq!(id, "gen-42-7");
        assert_eq!(s.generated.as_deref(), Some("seed 42 case 7"));
        let again = case_scenario(Provider::Codex, 42, 7).unwrap().1;
        assert_eq!((format!("{:?}", s.servers), format!("{:?}", s.steps)), (format!("{:?}", again.servers), format!("{:?}", again.steps)));
    }
}
