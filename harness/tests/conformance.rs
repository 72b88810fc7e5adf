//! `cargo test -p harness`: every scenario against the reference driver (as
//! written, fail-closed: refusing every prompt itself, driving Claude
//! Code in SDK host mode, and driving `codex exec`) on every measured provider version it drives, and every scenario against the mutants it
//! names in `caught_by`, which must fail it, and every scenario through the
//! example shims under examples/ (the codex-app-server-sdk one only where its
//! venv exists: examples/codex-app-server-sdk/setup.sh, or
//! $CODEX_APP_SERVER_SDK_PYTHON; the claude-agent-sdk-ts one only where its
//! setup.sh installed the package; the claude-agent-sdk-py one only where its
//! venv exists, or $CLAUDE_AGENT_SDK_PY_PYTHON; the codex-sdk-ts one only
//! where its setup.sh installed the package). Discovery and fan-out live
//! here; policy lives in the library.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use harness::mutants::mutants;
use harness::plan;
use harness::recordings::{self, Replay};
use harness::runner::{record, run_mutant, run_one, run_with};
use harness::scenario::Scenario;
use harness::source::DriverSource;
use harness::trial::Fakes;
use harness::verdict::describe;
use harness::verdict::expected::{self, ExpectedFailures};
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
    trials.extend(example_shim_trials(&scenarios));
    trials.extend(fidelity_trials(&scenarios_by_id, example_shims(&scenarios)));
    libtest_mimic::run(&args, trials).exit();
}

/// One trial per planned trial of `source`, named `{prefix}{trial}`, ignored
/// where the driver's claims or the provider versions it drives skip it.
fn planned_trials(prefix: &str, source: DriverSource, scenarios: &[Arc<Scenario>]) -> Vec<Trial> {
    let driver = source.make(&fakes().supervise);
    let capabilities = driver.as_ref().map(|d| d.capabilities()).unwrap_or_default();
    let versions = driver.as_ref().map(|d| d.provider_versions()).unwrap_or_default();
    plan::trials(scenarios, &[source], &[])
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
        for version in plan::versions(s.provider) {
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

/// An example shim under examples/: its label (the name it reports in
/// `hello` for the Agent SDK ones), its command and committed baseline when
/// its package is installed (None: not installed, `absent` says how to), or
/// why it cannot run.
struct ExampleShim {
    label: &'static str,
    shim: Result<Option<(Vec<String>, ExpectedFailures)>, String>,
    absent: &'static str,
}

/// The Python example (host-prompts) and the Go-style one (fail-closed)
/// with no expected failures, the codex-app-server-sdk and claude-agent-sdk
/// packages with their committed baselines.
fn example_shims(scenarios: &[Arc<Scenario>]) -> Vec<ExampleShim> {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let script = |dir: &str| examples.join(dir).join("shim.py").display().to_string();
    let known: BTreeSet<String> = scenarios.iter().map(|s| s.id.clone()).collect();
    let sdk = venv_python(SDK_PYTHON, "codex-app-server-sdk-venv").and_then(|python| {
        let expected = ExpectedFailures::load(&examples.join("codex-app-server-sdk/expected-failures.txt"), &known)?;
        Ok(python.map(|p| (vec![p.display().to_string(), script("codex-app-server-sdk")], expected)))
    });
    let ts_dir = examples.join("claude-agent-sdk-ts");
    let ts = sdk_node(&ts_dir).and_then(|node| {
        let expected = ExpectedFailures::load(&ts_dir.join("expected-failures.txt"), &known)?;
        Ok(node.map(|n| (vec![n.display().to_string(), ts_dir.join("shim.mjs").display().to_string()], expected)))
    });
    let py_dir = examples.join("claude-agent-sdk-py");
    let py = venv_python(PY_SDK_PYTHON, "claude-agent-sdk-py-venv").and_then(|python| {
        let expected = ExpectedFailures::load(&py_dir.join("expected-failures.txt"), &known)?;
        Ok(python.map(|p| (vec![p.display().to_string(), script("claude-agent-sdk-py")], expected)))
    });
    let plain = |dir| Ok(Some((vec!["python3".to_string(), script(dir)], ExpectedFailures::default())));
    vec![
        ExampleShim { label: "python-shim", shim: plain("python-shim"), absent: "" },
        ExampleShim { label: "go-style-shim", shim: plain("go-style-shim"), absent: "" },
        ExampleShim { label: "codex-app-server-sdk", shim: sdk, absent: SDK_ABSENT },
        ExampleShim { label: "claude-agent-sdk-ts", shim: ts, absent: TS_SDK_ABSENT },
        ExampleShim { label: "claude-agent-sdk-py", shim: py, absent: PY_SDK_ABSENT },
        ExampleShim { label: "codex-sdk-ts", shim: codex_sdk_ts(&examples.join("codex-sdk-ts"), &known), absent: CODEX_TS_SDK_ABSENT },
    ]
}

const CODEX_TS_SDK_NODE: &str = "CODEX_SDK_TS_NODE";
const CODEX_TS_SDK_ABSENT: &str = "no @openai/codex-sdk under examples/codex-sdk-ts: run its setup.sh \
    (needs node >= 18 and npm), or set CODEX_SDK_TS_NODE to the node to run shim.mjs with";

/// examples/codex-sdk-ts/shim.mjs and its baseline, once setup.sh installed
/// the package there: run with $CODEX_SDK_TS_NODE (an error if it names
/// nothing), else `node` on PATH.
fn codex_sdk_ts(dir: &Path, known: &BTreeSet<String>) -> Result<Option<(Vec<String>, ExpectedFailures)>, String> {
    if !dir.join("node_modules/@openai/codex-sdk/package.json").exists() {
        return Ok(None);
    }
    let node = match std::env::var_os(CODEX_TS_SDK_NODE).filter(|n| !n.is_empty()) {
        Some(n) if Path::new(&n).exists() => Some(PathBuf::from(n)),
        Some(n) => return Err(format!("{CODEX_TS_SDK_NODE}={} does not exist", Path::new(&n).display())),
        None => std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).map(|d| d.join("node")).find(|n| n.is_file()),
    };
    let expected = ExpectedFailures::load(&dir.join("expected-failures.txt"), known)?;
    Ok(node.map(|n| (vec![n.display().to_string(), dir.join("shim.mjs").display().to_string()], expected)))
}

/// One trial per scenario for each example shim.
fn example_shim_trials(scenarios: &[Arc<Scenario>]) -> Vec<Trial> {
    let mut trials = Vec::new();
    for ExampleShim { label, shim, absent } in example_shims(scenarios) {
        let shim = Arc::new(shim);
        for scenario in scenarios {
            let (s, shim) = (Arc::clone(scenario), Arc::clone(&shim));
            trials.push(Trial::ignorable_test(format!("{label}::{}", scenario.id), move || match &*shim {
                Ok(Some((cmd, expected))) => example_shim_passes(cmd, &s, expected),
                Ok(None) => Ok(Completion::ignored_with(absent)),
                Err(e) => Err(e.clone().into()),
            }));
        }
    }
    trials
}

const SDK_PYTHON: &str = "CODEX_APP_SERVER_SDK_PYTHON";
const SDK_ABSENT: &str = "no venv with codex-app-server-sdk: run examples/codex-app-server-sdk/setup.sh, \
    or set CODEX_APP_SERVER_SDK_PYTHON to a Python >= 3.12 that has it";

const PY_SDK_PYTHON: &str = "CLAUDE_AGENT_SDK_PY_PYTHON";
const PY_SDK_ABSENT: &str = "no venv with claude-agent-sdk: run examples/claude-agent-sdk-py/setup.sh, \
    or set CLAUDE_AGENT_SDK_PY_PYTHON to a Python >= 3.10 that has it";

/// The Python that has an example's package: $`var` (an error if it names
/// nothing), else its setup.sh's default venv target/`venv` if made.
fn venv_python(var: &str, venv: &str) -> Result<Option<PathBuf>, String> {
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.exists() { Ok(Some(p)) } else { Err(format!("{var}={} does not exist", p.display())) };
    }
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target").join(venv).join("bin/python");
    Ok(python.exists().then_some(python))
}

const TS_SDK_NODE: &str = "CLAUDE_AGENT_SDK_TS_NODE";
const TS_SDK_ABSENT: &str = "no @anthropic-ai/claude-agent-sdk under examples/claude-agent-sdk-ts: run its setup.sh \
    (needs node >= 18.14 and npm), or set CLAUDE_AGENT_SDK_TS_NODE to the node to run shim.mjs with";

/// The node that runs examples/claude-agent-sdk-ts/shim.mjs: only once
/// setup.sh installed the package there; $CLAUDE_AGENT_SDK_TS_NODE (an
/// error if it names nothing), else `node` on PATH.
fn sdk_node(dir: &Path) -> Result<Option<PathBuf>, String> {
    if !dir.join("node_modules/@anthropic-ai/claude-agent-sdk/package.json").exists() {
        return Ok(None);
    }
    if let Some(n) = std::env::var_os(TS_SDK_NODE).filter(|n| !n.is_empty()) {
        let n = PathBuf::from(n);
        return if n.exists() { Ok(Some(n)) } else { Err(format!("{TS_SDK_NODE}={} does not exist", n.display())) };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    Ok(std::env::split_paths(&path).map(|d| d.join("node")).find(|n| n.is_file()))
}

/// Runs one scenario through a shim on every version and applies the
/// shim's expected failures as `conformance run --expected-failures` does:
/// an unexpected failure fails, and so does an entry for this scenario that
/// no longer fails. Ignored, with the reason, if every version skipped it.
fn example_shim_passes(cmd: &[String], s: &Arc<Scenario>, expected: &ExpectedFailures) -> Result<Completion, Failed> {
    let mut records = Vec::new();
    for t in plan::trials(std::slice::from_ref(s), &[DriverSource::Shim(cmd.to_vec())], &[]) {
        let started = Instant::now();
        let outcome = run_one(&t, &fakes()).map_err(|e| Failed::from(format!("{}: {}", e.kind, e.message)))?;
        records.push(record(&t, &outcome.verdict, outcome.stderr.as_deref(), started.elapsed().as_secs_f64()));
    }
    if let Some(skip) = records.iter().all(|r| r.outcome == Outcome::Skip).then(|| records.first()).flatten() {
        return Ok(Completion::ignored_with(skip.note.clone().unwrap_or_default()));
    }
    let mine = ExpectedFailures { entries: expected.entries.iter().filter(|e| e.scenario == s.id).cloned().collect() };
    expected::apply(&mut records, &mine);
    let failed: Vec<String> = records
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail | Outcome::UnexpectedPass))
        .map(|r| {
            let lines = r.note.iter().cloned().chain(r.mismatches.iter().map(describe));
            format!("{}:\n  {}", r.name, lines.collect::<Vec<_>>().join("\n  "))
        })
        .collect();
    if failed.is_empty() { Ok(Completion::Completed) } else { Err(failed.join("\n").into()) }
}

/// One trial per recording of a real provider run (recordings/, made by
/// scripts/record-real.sh): the same scenario on the fake must agree with it
/// message by message, but for what recordings/ALLOWED.toml allows. One more
/// trial fails on allow-list entries nothing needs any more and prints the
/// totals. Runs offline.
fn fidelity_trials(scenarios: &BTreeMap<String, Arc<Scenario>>, shims: Vec<ExampleShim>) -> Vec<Trial> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings");
    let allow = match recordings::allow_list(&root) {
        Ok(a) => a,
        Err(e) => return vec![Trial::test("fidelity::allow_list", move || Err(e.into()))],
    };
    let files = recordings::files(&root);
    let cells = files.iter().map(|_| OnceLock::new()).collect();
    // The example shims that made recordings, by the name they report.
    let drivers = shims.into_iter().map(|e| (e.label.to_string(), (e.shim.map(|s| s.map(|(cmd, _)| cmd)), e.absent))).collect();
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
type ShimCommands = BTreeMap<String, (Result<Option<Vec<String>>, String>, &'static str)>;

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
        self.drivers.get(&driver).map(|(_, absent)| absent.to_string()).unwrap_or_default()
    }
}
