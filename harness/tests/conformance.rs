//! `cargo test -p harness`: every scenario against the reference driver on
//! every measured Codex version, and every scenario against the mutants it
//! names in `caught_by`, which must fail it. Discovery and fan-out live here;
//! policy lives in the library.

use std::path::Path;
use std::sync::Arc;

use harness::reference::mutants;
use harness::run::Fakes;
use harness::scenario::Scenario;
use harness::suite::{self, Verdict};
use libtest_mimic::{Arguments, Failed, Trial};

fn fakes() -> Fakes {
    Fakes::from_bins(env!("CARGO_BIN_EXE_fake-codex"), env!("CARGO_BIN_EXE_fake-claude"), env!("CARGO_BIN_EXE_fake-mcp"))
}

fn main() {
    let args = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut trials = Vec::new();
    let (scenarios, broken) = match suite::load_dir(&dir) {
        Ok(x) => x,
        Err(e) => {
            trials.push(Trial::test("load", move || Err(e.to_string().into())));
            (Vec::new(), Vec::new())
        }
    };
    for e in broken {
        let name = format!("load::{}", e.path.file_name().unwrap_or_default().to_string_lossy());
        trials.push(Trial::test(name, move || Err(e.to_string().into())));
    }
    let problems = suite::check_set(&scenarios);
    trials.push(Trial::test("suite::consistent", move || {
        if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
    }));
    trials.push(every_mutant_is_used(&scenarios));
    let capabilities = harness::driver::reference_capabilities();
    for scenario in scenarios.into_iter().map(Arc::new) {
        for version in suite::versions_for(scenario.provider) {
            let name = suite::trial_name(&scenario, version);
            let skip = suite::skip_reason(&scenario, version, &capabilities);
            let s = Arc::clone(&scenario);
            let trial = Trial::test(name, move || verdict(suite::run_reference(&s, version, &fakes())));
            trials.push(match skip {
                Some(_) => trial.with_ignored_flag(true),
                None => trial,
            });
        }
        for mutant in &scenario.caught_by {
            let s = Arc::clone(&scenario);
            let m = mutant.clone();
            trials.push(Trial::test(format!("mutant::{mutant}::{}", scenario.id), move || {
                suite::run_mutant(&s, &m, &fakes()).map(|_| ()).map_err(Failed::from)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

fn verdict(v: Verdict) -> Result<(), Failed> {
    match v {
        Verdict::Pass | Verdict::Skip(_) => Ok(()),
        Verdict::Fail(mismatches) => {
            Err(mismatches.iter().map(harness::judge::describe).collect::<Vec<_>>().join("\n").into())
        }
    }
}

/// A mutant no scenario names proves nothing; the list must stay in use.
fn every_mutant_is_used(scenarios: &[Scenario]) -> Trial {
    let unused: Vec<&'static str> = mutants()
        .iter()
        .map(|m| m.name)
        .filter(|name| !scenarios.iter().any(|s| s.caught_by.iter().any(|c| c == name)))
        .collect();
    Trial::test("suite::every_mutant_is_caught_somewhere", move || {
        if unused.is_empty() { Ok(()) } else { Err(format!("no scenario names these mutants: {unused:?}").into()) }
    })
}
