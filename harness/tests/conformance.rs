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

const SHIM: &str = env!("CARGO_BIN_EXE_conformance");

fn fakes() -> Fakes {
    Fakes::from_bins(env!("CARGO_BIN_EXE_fake-codex"), env!("CARGO_BIN_EXE_fake-claude"), env!("CARGO_BIN_EXE_fake-mcp"), env!("CARGO_BIN_EXE_conformance"))
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
    let scenarios_by_id: std::collections::BTreeMap<String, Arc<Scenario>> =
        scenarios.iter().map(|s| (s.id.clone(), Arc::new(s.clone()))).collect();
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
        let s = Arc::clone(&scenario);
        trials.push(Trial::test(format!("shim::same-verdicts::{}", scenario.id), move || same_verdicts_through_shim(&s)));
        let s = Arc::clone(&scenario);
        trials.push(Trial::test(format!("python-shim::{}", scenario.id), move || python_shim_passes(&s)));
    }
    trials.extend(fidelity_trials(&scenarios_by_id));
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

fn kind(v: &Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail(_) => "fail",
        Verdict::Skip(_) => "skip",
    }
}

/// The reference driver, and each mutant the scenario names, get the same
/// verdict through the shim protocol as in process, on every version.
fn same_verdicts_through_shim(s: &Scenario) -> Result<(), Failed> {
    let variants = std::iter::once("reference".to_string()).chain(s.caught_by.iter().map(|m| format!("mutant:{m}")));
    let mut diffs = Vec::new();
    for variant in variants {
        for version in suite::versions_for(s.provider) {
            let direct = suite::run(s, version, suite::DriverSource::Builtin(variant.clone()).make()?.as_mut(), &fakes());
            let cmd = vec![SHIM.to_string(), "shim".into(), "--driver".into(), variant.clone()];
            let shimmed = suite::run(s, version, suite::DriverSource::Shim(cmd).make()?.as_mut(), &fakes());
            if kind(&direct) != kind(&shimmed) {
                diffs.push(format!("{variant} on {version}: in process {direct:?}, through the shim {shimmed:?}"));
            }
        }
    }
    if diffs.is_empty() { Ok(()) } else { Err(diffs.join("\n").into()) }
}

/// The example Python shim passes every scenario it claims and skips the rest.
fn python_shim_passes(s: &Scenario) -> Result<(), Failed> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/python-shim/shim.py");
    let cmd = vec!["python3".to_string(), script.display().to_string()];
    for version in suite::versions_for(s.provider) {
        let mut driver = suite::DriverSource::Shim(cmd.clone()).make()?;
        if let Verdict::Fail(m) = suite::run(s, version, driver.as_mut(), &fakes()) {
            return Err(format!("{version}: {}", m.iter().map(harness::judge::describe).collect::<Vec<_>>().join("; ")).into());
        }
    }
    Ok(())
}

/// One trial per recording of a real provider run (recordings/, made by
/// scripts/record-real.sh): the same scenario on the fake must leave the
/// same normalized summary. Runs offline.
fn fidelity_trials(scenarios: &std::collections::BTreeMap<String, Arc<Scenario>>) -> Vec<Trial> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings");
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for provider in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        for version in std::fs::read_dir(provider.path()).into_iter().flatten().flatten() {
            files.extend(std::fs::read_dir(version.path()).into_iter().flatten().flatten().map(|f| f.path()));
        }
    }
    files.sort();
    files
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .map(|file| {
            let doc: serde_json::Value =
                std::fs::read_to_string(&file).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
            let id = doc["scenario"].as_str().unwrap_or("?").to_string();
            let version = doc["version"].as_str().unwrap_or("?").to_string();
            let name = format!("fidelity::{}-{version}::{id}", doc["provider"].as_str().unwrap_or("?"));
            let scenario = scenarios.get(&id).cloned();
            Trial::test(name, move || {
                let scenario = scenario.ok_or_else(|| format!("{}: no scenario `{id}`", file.display()))?;
                let version = version.parse().map_err(|e| format!("{}: {e}", file.display()))?;
                let (_, fake) = suite::run_summarized(&scenario, version, &mut harness::reference::ReferenceDriver::new(), &fakes());
                match harness::fidelity::diff(&doc["summary"], &fake) {
                    None => Ok(()),
                    Some(d) => Err(format!("the fake differs from the real recording {}:\n{d}", file.display()).into()),
                }
            })
        })
        .collect()
}
