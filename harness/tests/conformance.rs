//! `cargo test -p harness`: every scenario against the reference driver (as
//! written, and fail-closed: refusing every prompt itself) on
//! every measured Codex version, and every scenario against the mutants it
//! names in `caught_by`, which must fail it. Discovery and fan-out live here;
//! policy lives in the library.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use harness::mutants::mutants;
use harness::plan;
use harness::recordings::{self, Replay};
use harness::runner::{run_mutant, run_one, run_with};
use harness::scenario::Scenario;
use harness::source::DriverSource;
use harness::trial::Fakes;
use harness::verdict::fidelity::allow::AllowList;
use libtest_mimic::{Arguments, Failed, Trial};

const SHIM: &str = env!("CARGO_BIN_EXE_conformance");

fn fakes() -> Fakes {
    Fakes::from_bins(env!("CARGO_BIN_EXE_fake-codex"), env!("CARGO_BIN_EXE_fake-claude"), env!("CARGO_BIN_EXE_fake-mcp"), env!("CARGO_BIN_EXE_conformance"))
}

fn main() {
    let args = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut trials = Vec::new();
    let (scenarios, broken) = match plan::load_dir(&dir) {
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
    let problems = plan::check_set(&scenarios);
    trials.push(Trial::test("suite::consistent", move || {
        if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
    }));
    trials.push(every_mutant_is_used(&scenarios));
    let capabilities = harness::driver::reference_capabilities();
    let scenarios: Vec<Arc<Scenario>> = scenarios.into_iter().map(Arc::new).collect();
    let scenarios_by_id: BTreeMap<String, Arc<Scenario>> =
        scenarios.iter().map(|s| (s.id.clone(), Arc::clone(s))).collect();
    // The plan's trials, each a libtest-mimic trial.
    for t in plan::trials(&scenarios, &[DriverSource::reference()], &[]) {
        let skip = plan::skip_reason(&t.scenario, t.target.version, &capabilities);
        let trial = Trial::test(t.name(), move || {
            let outcome = run_one(&t, &fakes()).map_err(|e| Failed::from(e.to_string()))?;
            outcome.verdict.into_result().map_err(Failed::from)
        });
        trials.push(trial.with_ignored_flag(skip.is_some()));
    }
    // The same design refusing every prompt itself must pass too.
    let fail_closed = DriverSource::fail_closed();
    let fc_capabilities = fail_closed.make().map(|d| d.capabilities()).unwrap_or_default();
    for t in plan::trials(&scenarios, &[fail_closed], &[]) {
        let skip = plan::skip_reason(&t.scenario, t.target.version, &fc_capabilities);
        let trial = Trial::test(format!("fail-closed::{}", t.name()), move || {
            let outcome = run_one(&t, &fakes()).map_err(|e| Failed::from(e.to_string()))?;
            outcome.verdict.into_result().map_err(Failed::from)
        });
        trials.push(trial.with_ignored_flag(skip.is_some()));
    }
    for scenario in &scenarios {
        for mutant in &scenario.caught_by {
            let s = Arc::clone(scenario);
            let m = mutant.clone();
            trials.push(Trial::test(format!("mutant::{mutant}::{}", scenario.id), move || {
                run_mutant(&s, &m, &fakes()).map(|_| ()).map_err(Failed::from)
            }));
        }
        let s = Arc::clone(scenario);
        trials.push(Trial::test(format!("shim::same-verdicts::{}", scenario.id), move || same_verdicts_through_shim(&s)));
        for (name, script) in [("python-shim", "python-shim/shim.py"), ("go-style-shim", "go-style-shim/shim.py")] {
            let s = Arc::clone(scenario);
            trials.push(Trial::test(format!("{name}::{}", scenario.id), move || example_shim_passes(script, &s)));
        }
    }
    trials.extend(fidelity_trials(&scenarios_by_id));
    libtest_mimic::run(&args, trials).exit();
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

/// The reference driver, and each mutant the scenario names, get the same
/// verdict through the shim protocol as in process, on every version.
fn same_verdicts_through_shim(s: &Scenario) -> Result<(), Failed> {
    let variants = std::iter::once("reference".to_string()).chain(s.caught_by.iter().map(|m| format!("mutant:{m}")));
    let mut diffs = Vec::new();
    for variant in variants {
        for version in plan::versions(s.provider) {
            let direct = run_with(s, version, DriverSource::Builtin(variant.clone()).make()?.as_mut(), &fakes()).verdict;
            let cmd = vec![SHIM.to_string(), "shim".into(), "--driver".into(), variant.clone()];
            let shimmed = run_with(s, version, DriverSource::Shim(cmd).make()?.as_mut(), &fakes()).verdict;
            if direct.kind() != shimmed.kind() {
                let name = plan::trial_name(s, version);
                diffs.push(format!("{variant} on {name}: in process {direct:?}, through the shim {shimmed:?}"));
            }
        }
    }
    if diffs.is_empty() { Ok(()) } else { Err(diffs.join("\n").into()) }
}

/// An example shim (`script` under examples/) passes every scenario it
/// claims and skips the rest: the Python example (host-prompts) and the
/// Go-style one (fail-closed), each with no expected failures.
fn example_shim_passes(script: &str, s: &Scenario) -> Result<(), Failed> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(script);
    let cmd = vec!["python3".to_string(), script.display().to_string()];
    for version in plan::versions(s.provider) {
        let mut driver = DriverSource::Shim(cmd.clone()).make()?;
        run_with(s, version, driver.as_mut(), &fakes())
            .verdict
            .into_result()
            .map_err(|e| format!("{}: {e}", plan::trial_name(s, version)))?;
    }
    Ok(())
}

/// One trial per recording of a real provider run (recordings/, made by
/// scripts/record-real.sh): the same scenario on the fake must agree with it
/// message by message, but for what recordings/ALLOWED.toml allows. One more
/// trial fails on allow-list entries nothing needs any more and prints the
/// totals. Runs offline.
fn fidelity_trials(scenarios: &BTreeMap<String, Arc<Scenario>>) -> Vec<Trial> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings");
    let allow = match recordings::allow_list(&root) {
        Ok(a) => a,
        Err(e) => return vec![Trial::test("fidelity::allow_list", move || Err(e.into()))],
    };
    let files = recordings::files(&root);
    let cells = files.iter().map(|_| OnceLock::new()).collect();
    let all = Arc::new(Replays { files, cells, allow, scenarios: scenarios.clone() });
    let mut trials: Vec<Trial> = (0..all.files.len())
        .map(|i| {
            let all = Arc::clone(&all);
            Trial::test(recordings::trial_name(&all.files[i]), move || match all.get(i) {
                Ok(r) => r.failure().map_or(Ok(()), |f| Err(f.into())),
                Err(e) => Err(e.clone().into()),
            })
        })
        .collect();
    trials.push(Trial::test("fidelity::allow_list_is_current", move || {
        let indices: Vec<usize> = (0..all.files.len()).collect();
        harness::pool::map_ordered(&indices, harness::pool::default_jobs(), |&i| { all.get(i); }, |_, _| {});
        let replays: Vec<&Replay> = all.cells.iter().filter_map(|c| c.get()?.as_ref().ok()).collect();
        println!("{}", recordings::totals(&replays, &all.allow));
        let used: BTreeSet<_> = replays.iter().flat_map(|r| r.used.iter().copied()).collect();
        let stale = all.allow.stale(&used);
        if stale.is_empty() {
            Ok(())
        } else {
            Err(format!("allow-list entries that cover no difference any more (remove them):\n  {}", stale.join("\n  ")).into())
        }
    }));
    trials
}

/// Each recording replayed once, shared by its own trial and the stale check.
struct Replays {
    files: Vec<PathBuf>,
    cells: Vec<OnceLock<Result<Replay, String>>>,
    allow: AllowList,
    scenarios: BTreeMap<String, Arc<Scenario>>,
}

impl Replays {
    fn get(&self, i: usize) -> &Result<Replay, String> {
        self.cells[i].get_or_init(|| recordings::replay(&self.files[i], &self.scenarios, &self.allow, &fakes()))
    }
}
