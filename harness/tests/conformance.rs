//! `cargo test -p harness`: every scenario against the reference driver (as
//! written, fail-closed: refusing every prompt itself, driving Claude
//! Code in SDK host mode, and driving `codex exec`) on every measured
//! provider version it drives, and every scenario against the mutants it
//! names in `caught_by`, which must fail it; every scenario through each
//! example shim of harness::examples, strictly against its baseline, where
//! its package is installed (its setup.sh, which .ci/run calls; else ignored
//! with how to install it), and the README's real-drivers table checked
//! against those same runs; every real-provider recording replayed on the
//! fake. Discovery and fan-out live here; policy lives in the library.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use harness::examples;
use harness::matrix;
use harness::mutants::mutants;
use harness::plan;
use harness::recordings::{self, Replay};
use harness::runner::{run_mutant, run_one, run_with};
use harness::scenario::Scenario;
use harness::source::DriverSource;
use harness::trial::Fakes;
use harness::verdict::describe;
use harness::verdict::expected::ExpectedFailures;
use harness::verdict::fidelity::allow::AllowList;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use reports::Outcome;

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
    trials.push(coverage_page_is_current(&dir, &scenarios));
    let uncovered = harness::scenario::criteria::uncovered(&scenarios);
    trials.push(Trial::test("suite::every_criterion_has_a_scenario_and_a_mutant", move || {
        if uncovered.is_empty() { Ok(()) } else { Err(uncovered.join("\n").into()) }
    }));
    let scenarios: Vec<Arc<Scenario>> = scenarios.into_iter().map(Arc::new).collect();
    let scenarios_by_id: BTreeMap<String, Arc<Scenario>> =
        scenarios.iter().map(|s| (s.id.clone(), Arc::clone(s))).collect();
    // The plan's trials, each a libtest-mimic trial; the same design refusing
    // every prompt itself must pass too.
    trials.extend(planned_trials("", DriverSource::reference(), &scenarios));
    trials.extend(planned_trials("fail-closed::", DriverSource::fail_closed(), &scenarios));
    trials.extend(planned_trials("claude-sdk::", DriverSource::claude_sdk(), &scenarios));
    trials.extend(planned_trials("codex-exec::", DriverSource::codex_exec(), &scenarios));
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
    }
    let examples = Arc::new(Examples::new(&scenarios));
    trials.extend(example_shim_trials(&examples));
    trials.push(readme_matrix_is_current(&examples));
    trials.extend(fidelity_trials(&scenarios_by_id, &examples));
    libtest_mimic::run(&args, trials).exit();
}

/// One trial per planned trial of `source`, named `{prefix}{trial}`, ignored
/// where the driver's claims or the provider versions it drives skip it.
fn planned_trials(prefix: &str, source: DriverSource, scenarios: &[Arc<Scenario>]) -> Vec<Trial> {
    let driver = source.make(&fakes().supervise);
    let capabilities = driver.as_ref().map(|d| d.capabilities()).unwrap_or_default();
    let versions = driver.as_ref().map(|d| d.provider_versions()).unwrap_or_default();
    plan::trials(scenarios, &[source], &plan::measured_releases())
        .into_iter()
        .map(|t| {
            let skip = plan::skip_reason(&t.scenario, t.target.version, &capabilities)
                .or_else(|| plan::driver_version_skip(&t.scenario, t.target.version, &versions));
            Trial::test(format!("{prefix}{}", t.name()), move || {
                let outcome = run_one(&t, &fakes()).map_err(|e| Failed::from(e.to_string()))?;
                outcome.verdict.into_result().map_err(Failed::from)
            })
            .with_ignored_flag(skip.is_some())
        })
        .collect()
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

/// scenarios/COVERAGE.md is what `conformance list --criteria` prints.
fn coverage_page_is_current(dir: &Path, scenarios: &[Scenario]) -> Trial {
    let expected = harness::scenario::criteria::markdown(scenarios);
    let actual = std::fs::read_to_string(dir.join("COVERAGE.md")).unwrap_or_default();
    Trial::test("suite::coverage_page_is_current", move || {
        if expected == actual {
            Ok(())
        } else {
            let diff = reports::diff(&expected, &actual);
            Err(format!("scenarios/COVERAGE.md is stale; regenerate it with `conformance list --criteria > scenarios/COVERAGE.md`:\n{diff}").into())
        }
    })
}

/// The reference driver (and the one driving Claude Code's SDK host mode,
/// or `codex exec`), and
/// each mutant the scenario names, get the same verdict through the shim
/// protocol as in process, on every version.
fn same_verdicts_through_shim(s: &Scenario) -> Result<(), Failed> {
    let other_mode = match s.provider {
        harness::scenario::Provider::Claude => Some(harness::reference::CLAUDE_SDK.to_string()),
        harness::scenario::Provider::Codex => Some(harness::reference::CODEX_EXEC.to_string()),
        _ => None,
    };
    let variants = std::iter::once("reference".to_string()).chain(other_mode).chain(s.caught_by.iter().map(|m| format!("mutant:{m}")));
    let mut diffs = Vec::new();
    for variant in variants {
        for version in plan::measured(s.provider) {
            let direct = run_with(s, version, DriverSource::Builtin(variant.clone()).make(&fakes().supervise)?.as_mut(), &fakes()).verdict;
            let cmd = vec![SHIM.to_string(), "shim".into(), "--driver".into(), variant.clone()];
            let shimmed = run_with(s, version, DriverSource::Shim(cmd).make(&fakes().supervise)?.as_mut(), &fakes()).verdict;
            if direct.kind() != shimmed.kind() {
                let name = plan::trial_name(s, version);
                diffs.push(format!("{variant} on {name}: in process {direct:?}, through the shim {shimmed:?}"));
            }
        }
    }
    if diffs.is_empty() { Ok(()) } else { Err(diffs.join("\n").into()) }
}

/// The example shims (harness::examples), each with its command when its
/// package is installed and its baseline, and one cell per scenario for its
/// results: shared by the scenario's own trial and the README check.
struct Examples {
    shims: Vec<ExampleShim>,
    scenarios: Vec<Arc<Scenario>>,
}

struct ExampleShim {
    example: &'static harness::examples::Example,
    shim: Result<Option<(Vec<String>, ExpectedFailures)>, String>,
    cells: Vec<OnceLock<Result<Vec<reports::Trial>, String>>>,
}

impl Examples {
    fn new(scenarios: &[Arc<Scenario>]) -> Examples {
        let root = examples::root();
        let known: BTreeSet<String> = scenarios.iter().map(|s| s.id.clone()).collect();
        let shims = examples::EXAMPLES
            .iter()
            .map(|example| {
                let shim = example.command(&root).and_then(|cmd| match cmd {
                    Some(cmd) => Ok(Some((cmd, example.baseline(&root, &known)?))),
                    None => Ok(None),
                });
                ExampleShim { example, shim, cells: scenarios.iter().map(|_| OnceLock::new()).collect() }
            })
            .collect();
        Examples { shims, scenarios: scenarios.to_vec() }
    }

    /// Shim `e`'s records for scenario `i`, run once.
    fn results(&self, e: usize, i: usize) -> &Result<Vec<reports::Trial>, String> {
        let shim = &self.shims[e];
        shim.cells[i].get_or_init(|| match &shim.shim {
            Ok(Some((cmd, expected))) => examples::run_scenario(cmd, &self.scenarios[i], expected, &fakes()),
            Ok(None) => Ok(Vec::new()),
            Err(e) => Err(e.clone()),
        })
    }
}

/// One trial per scenario for each example shim: strict against its
/// baseline (an unexpected failure fails, and so does an entry that no
/// longer fails); ignored with the reason where every version skipped it.
fn example_shim_trials(all: &Arc<Examples>) -> Vec<Trial> {
    let mut trials = Vec::new();
    for (e, shim) in all.shims.iter().enumerate() {
        for (i, scenario) in all.scenarios.iter().enumerate() {
            let all = Arc::clone(all);
            let label = shim.example.label;
            trials.push(Trial::ignorable_test(format!("{label}::{}", scenario.id), move || {
                if matches!(all.shims[e].shim, Ok(None)) {
                    return Ok(Completion::ignored_with(all.shims[e].example.absent()));
                }
                let records = all.results(e, i).as_ref().map_err(|e| Failed::from(e.clone()))?;
                if let Some(skip) = records.iter().all(|r| r.outcome == Outcome::Skip).then(|| records.first()).flatten() {
                    return Ok(Completion::ignored_with(skip.note.clone().unwrap_or_default()));
                }
                let failed: Vec<String> = records
                    .iter()
                    .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::UnexpectedPass))
                    .map(|r| {
                        let lines = r.note.iter().cloned().chain(r.mismatches.iter().map(describe));
                        format!("{}:\n  {}", r.name, lines.collect::<Vec<_>>().join("\n  "))
                    })
                    .collect();
                if failed.is_empty() { Ok(Completion::Completed) } else { Err(failed.join("\n").into()) }
            }));
        }
    }
    trials
}

/// The README's real-drivers table is what `conformance matrix` makes of
/// these same runs; ignored unless every example shim is installed.
fn readme_matrix_is_current(all: &Arc<Examples>) -> Trial {
    let all = Arc::clone(all);
    Trial::ignorable_test("suite::readme_matrix_is_current", move || {
        if let Some(absent) = all.shims.iter().find(|s| matches!(s.shim, Ok(None))) {
            return Ok(Completion::ignored_with(absent.example.absent()));
        }
        let root = examples::root();
        let pairs: Vec<(usize, usize)> = (0..all.shims.len()).flat_map(|e| (0..all.scenarios.len()).map(move |i| (e, i))).collect();
        harness::pool::map_ordered(&pairs, harness::pool::default_jobs(), |&(e, i)| { all.results(e, i); }, |_, _| {});
        let mut runs = Vec::new();
        for (e, shim) in all.shims.iter().enumerate() {
            let expected = match &shim.shim {
                Ok(Some((_, expected))) => expected.clone(),
                Ok(None) => unreachable!("checked above"),
                Err(e) => return Err(e.clone().into()),
            };
            let mut trials = Vec::new();
            for i in 0..all.scenarios.len() {
                trials.extend(all.results(e, i).clone().map_err(Failed::from)?);
            }
            runs.push(matrix::ExampleRun { example: shim.example, package: shim.example.package(&root), trials, expected });
        }
        let table = matrix::table(&runs, &all.scenarios);
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
        let readme = std::fs::read_to_string(&path).map_err(|e| Failed::from(e.to_string()))?;
        let want = matrix::splice(&readme, &table).map_err(Failed::from)?;
        if want == readme {
            Ok(Completion::Completed)
        } else {
            Err(format!("README.md's real-drivers table is stale; regenerate it with `conformance matrix --write-readme README.md`:\n{}", reports::diff(&want, &readme)).into())
        }
    })
}

/// One trial per recording of a real provider run (recordings/, made by
/// scripts/record-real.sh): the same scenario on the fake must agree with it
/// message by message, but for what recordings/ALLOWED.toml allows. One more
/// trial fails on allow-list entries nothing needs any more and prints the
/// totals. Runs offline.
fn fidelity_trials(scenarios: &BTreeMap<String, Arc<Scenario>>, examples: &Examples) -> Vec<Trial> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings");
    let allow = match recordings::allow_list(&root) {
        Ok(a) => a,
        Err(e) => return vec![Trial::test("fidelity::allow_list", move || Err(e.into()))],
    };
    let files = recordings::files(&root);
    let cells = files.iter().map(|_| OnceLock::new()).collect();
    // The example shims that made recordings, by the name they report.
    let drivers = examples
        .shims
        .iter()
        .map(|e| (e.example.label.to_string(), (e.shim.clone().map(|s| s.map(|(cmd, _)| cmd)), e.example.absent())))
        .collect();
    let all = Arc::new(Replays { files, cells, allow, scenarios: scenarios.clone(), drivers });
    let mut trials: Vec<Trial> = (0..all.files.len())
        .map(|i| {
            let all = Arc::clone(&all);
            Trial::ignorable_test(recordings::trial_name(&all.files[i]), move || match all.get(i) {
                Ok(Some(r)) => r.failure().map_or(Ok(Completion::Completed), |f| Err(f.into())),
                Ok(None) => Ok(Completion::ignored_with(all.absent(i))),
                Err(e) => Err(e.clone().into()),
            })
        })
        .collect();
    trials.push(Trial::test("fidelity::allow_list_is_current", move || {
        let indices: Vec<usize> = (0..all.files.len()).collect();
        harness::pool::map_ordered(&indices, harness::pool::default_jobs(), |&i| { all.get(i); }, |_, _| {});
        if let Some(i) = indices.iter().find(|&&i| matches!(all.get(i), Ok(None))) {
            // Its recordings might be what an entry is for.
            println!("not checked: {} was not replayed ({})", all.files[*i].display(), all.absent(*i));
            return Ok(());
        }
        let replays: Vec<&Replay> = all.cells.iter().filter_map(|c| c.get()?.as_ref().ok()?.as_ref()).collect();
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

/// The command of each example shim that is installed (None: not
/// installed), and how to install it.
type ShimCommands = BTreeMap<String, (Result<Option<Vec<String>>, String>, String)>;

/// Each recording replayed once, shared by its own trial and the stale
/// check; Ok(None) when the shim that made it is not installed.
struct Replays {
    files: Vec<PathBuf>,
    cells: Vec<OnceLock<Result<Option<Replay>, String>>>,
    allow: AllowList,
    scenarios: BTreeMap<String, Arc<Scenario>>,
    drivers: ShimCommands,
}

impl Replays {
    fn get(&self, i: usize) -> &Result<Option<Replay>, String> {
        self.cells[i].get_or_init(|| {
            let file = &self.files[i];
            let real = recordings::load(file)?;
            let source = match (DriverSource::builtin_named(&real.driver), self.drivers.get(&real.driver)) {
                (Some(builtin), _) => builtin,
                (None, Some((Ok(Some(cmd)), _))) => DriverSource::Shim(cmd.clone()),
                (None, Some((Ok(None), _))) => return Ok(None),
                (None, Some((Err(e), _))) => return Err(e.clone()),
                (None, None) => return Err(format!("{}: made by `{}`, which is no example shim", file.display(), real.driver)),
            };
            let fakes = fakes();
            let mut driver = source.make(&fakes.supervise).map_err(|e| e.to_string())?;
            recordings::replay(file, &real, driver.as_mut(), &self.scenarios, &self.allow, &fakes).map(Some)
        })
    }

    /// Why recording `i` was not replayed.
    fn absent(&self, i: usize) -> String {
        let driver = recordings::load(&self.files[i]).map(|r| r.driver).unwrap_or_default();
        self.drivers.get(&driver).map(|(_, absent)| absent.clone()).unwrap_or_default()
    }
}
