//! `conformance`: runs scenarios against drivers and prints verdicts.
//!
//! Exit codes, one rule for every subcommand: 0 all pass, 1 any trial failed
//! (a driver that cannot start included), 2 the user's own input is bad
//! (scenario files, arguments, environment); a run stopped by SIGINT or
//! SIGTERM writes its reports, marked incomplete, and exits 130 or 143.

mod args;
mod bisect;
mod cache;
mod differential;
mod explain;
mod matrix;
mod preflight;
mod merge;
mod record;
mod versions;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches};
use harness::{partition, plan};
use harness::scenario::{Provider, Scenario};
use harness::trial::Fakes;
use harness::verdict::describe;
use harness::verdict::expected::{self, ExpectedFailures};
use reports::{Outcome, RunInfo};

use args::{Cli, Command, RealProvider, RunArgs, Select};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The CLI is also the fakes, so a single built executable is enough.
    match args.first().map(String::as_str) {
        Some("fake-codex") => return exit(fakes::codex::main_with_args(args[1..].to_vec())),
        Some("fake-mcp") => return exit(fakes::mcp::main_with_args(args[1..].to_vec())),
        Some("fake-claude") => return exit(fakes::claude::main_with_args(args[1..].to_vec())),
        Some("relay") => return exit(fakes::relay::main_with_args(args[1..].to_vec())),
        Some("supervise") => return exit(harness::contain::supervise(args[1..].to_vec())),
        _ => {}
    }
    let matches = match Cli::command().try_get_matches_from(std::env::args_os()) {
        Ok(m) => m,
        Err(e) => e.exit(),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    match cli.command {
        None => {
            let mut run = cli.run;
            run.order_drivers(&matches);
            run_command(&run, false)
        }
        Some(Command::Run(mut run)) | Some(Command::Baseline(mut run)) => {
            let (name, sub) = matches.subcommand().unwrap_or(("run", &matches));
            run.order_drivers(sub);
            run_command(&run, name == "baseline")
        }
        Some(Command::Mutants) => {
            for m in harness::mutants::mutants() {
                println!("{:32} {}", m.name, m.bug);
            }
            ExitCode::SUCCESS
        }
        Some(Command::Shim { driver }) => {
            let mut driver = match harness::source::DriverSource::builtin(&driver) {
                Ok(d) => d,
                Err(e) => return bad(&e.message),
            };
            let stdin = std::io::stdin();
            exit(harness::shim::serve(driver.as_mut(), stdin.lock(), std::io::stdout()))
        }
        Some(Command::Fetch { provider, versions }) => fetch(provider, &versions),
        Some(Command::Cache { prune, keep }) => cache::run(prune, &keep),
        Some(Command::Bisect { provider, filter, check, good, bad, offline, recordings, driver }) => {
            let how = bisect::How { offline, recordings, driver };
            bisect::run(real_provider(provider), &filter, check, good, bad, &how)
        }
        Some(Command::Merge { shards, expected_failures, tap, junit, matrix, json }) => {
            merge::run(&shards, expected_failures.as_deref(), [&tap, &junit, &matrix, &json])
        }
        Some(Command::Matrix { write_readme, jobs }) => matrix::run(write_readme.as_deref(), jobs),
        Some(Command::Versions { provider, all, recordings }) => versions::print(real_provider(provider), all, &recordings),
        Some(Command::List { select, criteria: true }) => match scenarios(&select) {
            Ok(selected) => {
                print!("{}", harness::scenario::criteria::markdown(&selected));
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Some(Command::List { select, .. }) => match scenarios(&select) {
            Ok(selected) => {
                for s in &selected {
                    println!("{:48} {:8} {:44} {}", s.id, s.provider.as_str(), s.covers.join(","), s.title);
                }
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Some(Command::Explain { id, select }) => {
            let all = Select { scenarios: select.scenarios, ..Select::default() };
            match scenarios(&all) {
                Ok(all) => match all.iter().find(|s| s.id == id) {
                    Some(s) => {
                        print!("{}", explain::explain(s));
                        ExitCode::SUCCESS
                    }
                    None => bad(&format!("no scenario `{id}` (see `conformance list`)")),
                },
                Err(code) => code,
            }
        }
        Some(Command::Bench { select, jobs }) => match (scenarios(&select), std::env::current_exe()) {
            (Ok(selected), Ok(exe)) => {
                let owned: Vec<Scenario> = selected.iter().map(|s| (**s).clone()).collect();
                print!("{}", harness::bench::report(&owned, &Fakes::multicall(exe), jobs));
                ExitCode::SUCCESS
            }
            (Err(code), _) => code,
            (_, Err(e)) => bad(&format!("cannot find my own executable: {e}")),
        },
        Some(Command::Fidelity { rules: true, .. }) => {
            harness::verdict::fidelity::rules().iter().for_each(|r| println!("{r}"));
            ExitCode::SUCCESS
        }
        Some(Command::Fidelity { cases: Some(cases), seed, provider: Some(provider), version: Some(version), driver, recordings, out, tally, jobs, .. }) => {
            let provider = real_provider(provider);
            // One case at a time unless asked: a real CLI is slower when it
            // shares the machine, and its timing is part of what is compared.
            let jobs = jobs.unwrap_or(1);
            let ask = differential::Ask { provider, version, cases, seed, driver: &driver, recordings: &recordings, out: out.as_deref(), tally: tally.as_deref(), jobs };
            differential::run(&ask)
        }
        Some(Command::Probe { provider, versions, out }) => probe(real_provider(provider), &versions, &out),
        Some(Command::Agreement { log, write_readme }) => differential::agreement(&log, write_readme.as_deref()),
        Some(Command::Fidelity { recordings, filter, jobs, driver_cmd, .. }) => {
            let fakes = match std::env::current_exe() {
                Ok(exe) => Fakes::multicall(exe),
                Err(e) => return bad(&format!("cannot find my own executable: {e}")),
            };
            let jobs = jobs.unwrap_or_else(harness::pool::default_jobs);
            let shims: Vec<_> = driver_cmd.iter().map(|c| args::shim(c)).collect();
            match record::fidelity(&recordings, filter.as_deref(), jobs, &shims, &fakes) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => bad(&e),
            }
        }
        Some(Command::Record { out, select, versions, fake, driver_cmd }) => {
            let selected = match scenarios(&select) {
                Ok(s) => s,
                Err(code) => return code,
            };
            let fakes = match std::env::current_exe() {
                Ok(exe) if fake => Fakes::multicall(exe),
                Ok(exe) => Fakes::multicall(exe).with_cached_real_binaries(),
                Err(e) => return bad(&format!("cannot find my own executable: {e}")),
            };
            let mut drivers: Vec<_> = driver_cmd.iter().map(|c| args::shim(c)).collect();
            if drivers.is_empty() {
                drivers.push(harness::source::DriverSource::reference());
            }
            handle_stop_signals();
            match record::record(&out, &selected, &versions, &drivers, &fakes) {
                _ if harness::stop::requested() => interrupted_exit(),
                Ok(false) => ExitCode::SUCCESS,
                Ok(true) => ExitCode::from(1),
                Err(e) => bad(&e),
            }
        }
    }
}

/// Every criterion the selected scenarios cover, for the matrix page.
fn criteria_rows(scenarios: &[Arc<Scenario>]) -> Vec<reports::Criterion> {
    use harness::scenario::criteria::{coverage, CRITERIA};
    CRITERIA
        .iter()
        .filter_map(|c| {
            let (ids, _) = coverage(c.tag, scenarios.iter().map(|s| &**s));
            (!ids.is_empty()).then(|| reports::Criterion {
                tag: c.tag.into(),
                group: c.group.heading().into(),
                text: c.text.into(),
                scenarios: ids.into_iter().map(String::from).collect(),
            })
        })
        .collect()
}

/// The selected scenarios, or the exit code after reporting why there are none.
fn scenarios(select: &Select) -> Result<Vec<Arc<Scenario>>, ExitCode> {
    let (all, broken) = match &select.scenarios {
        None => plan::embedded(),
        Some(dir) => plan::load_dir(dir).map_err(|e| bad(&e.to_string()))?,
    };
    if !broken.is_empty() {
        broken.iter().for_each(|e| eprintln!("conformance: {e}"));
        return Err(ExitCode::from(2));
    }
    let problems = plan::check_set(&all);
    if !problems.is_empty() {
        problems.iter().for_each(|p| eprintln!("conformance: {p}"));
        return Err(ExitCode::from(2));
    }
    let provider: Option<Provider> = select.provider.map(|p| p.provider());
    Ok(all
        .into_iter()
        .filter(|s| select.filter.as_ref().is_none_or(|f| s.id.contains(f.as_str())))
        .filter(|s| provider.is_none_or(|p| s.provider == p))
        .map(Arc::new)
        .collect())
}

fn run_command(o: &RunArgs, baseline: bool) -> ExitCode {
    let scenarios = match scenarios(&o.select) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut versions = o.versions.clone();
    if let Some(dir) = &o.all_versions {
        versions = match harness::recordings::releases(dir) {
            Ok(v) if !v.is_empty() => v,
            Ok(_) => return bad(&format!("--all-versions: no recordings of a simulated release below {}", dir.display())),
            Err(e) => return bad(&format!("--all-versions: {e}")),
        };
    }
    let mut trials = plan::trials(&scenarios, &o.drivers, &versions);
    if let Err(e) = preflight::check(o, &scenarios, &trials) {
        return bad(&e);
    }
    let keys: Vec<String> = trials.iter().map(|t| partition::key(&t.driver.label(), &t.name())).collect();
    if let Some(p) = o.partition {
        let mut index = 0;
        trials.retain(|_| {
            index += 1;
            p.holds(index - 1, &keys[index - 1])
        });
    }
    let fakes = match std::env::current_exe() {
        Ok(exe) if o.real => {
            // Fetch what the selected trials need, on demand.
            let wanted: BTreeSet<_> = trials
                .iter()
                .filter(|t| plan::real_run_skip(&t.scenario).is_none())
                .filter_map(|t| Some((t.scenario.provider, t.target.version?)))
                .collect();
            let mut fakes = Fakes::multicall(exe).with_cached_real_binaries();
            for (provider, v) in wanted {
                match harness::trial::real::fetch(provider, v) {
                    Ok(bin) => {
                        fakes.real.insert(format!("{}-{v}", provider.as_str()), bin);
                    }
                    Err(e) => eprintln!("conformance: {e}; those trials are skipped"),
                }
            }
            fakes
        }
        Ok(exe) => Fakes::multicall(exe),
        Err(e) => return bad(&format!("cannot find my own executable: {e}")),
    };
    let known: BTreeSet<String> = scenarios.iter().map(|s| s.id.clone()).collect();
    let expected = match &o.expected_failures {
        Some(path) => match ExpectedFailures::load(path, &known) {
            Ok(e) => e,
            Err(e) => return bad(&e),
        },
        None => ExpectedFailures::default(),
    };
    let total = trials.len();
    let mut done = 0;
    let progress = |t: &reports::Trial| {
        done += 1;
        let label = match t.outcome {
            Outcome::Pass => "ok  ",
            Outcome::Skip => "skip",
            Outcome::Interrupted => "intr",
            _ => "FAIL",
        };
        if !o.quiet || t.outcome == Outcome::Fail {
            let note = t.note.as_ref().map(|n| format!("  ({n})")).unwrap_or_default();
            println!("[{done:>3}/{total}] {label} {}{note}", t.name);
            let _ = std::io::stdout().flush();
        }
    };
    let jobs = o.jobs.map_or_else(harness::pool::default_jobs, usize::from);
    handle_stop_signals();
    let mut trials = harness::runner::run_all(&trials, &fakes, jobs, progress);
    let incomplete = harness::stop::signal().map(|sig| {
        let interrupted = trials.iter().filter(|t| t.outcome == Outcome::Interrupted).count();
        format!(
            "interrupted by {}: {} of {total} trials finished, {interrupted} interrupted, {} not started",
            harness::stop::signal_name(sig),
            trials.len() - interrupted,
            total - trials.len()
        )
    });
    if let (Some(why), true) = (&incomplete, baseline) {
        // A partial baseline would silently drop the failures of what did not run.
        eprintln!("conformance: {why}; no baseline printed");
        return interrupted_exit();
    }
    if baseline {
        let failures: Vec<(String, Vec<reports::Mismatch>)> =
            trials.iter().filter(|t| t.outcome == Outcome::Fail).map(|t| (t.scenario.clone(), t.mismatches.clone())).collect();
        print!("{}", expected::baseline(&failures));
        return ExitCode::SUCCESS;
    }
    let ran = trials.len();
    let raw = trials.clone();
    if o.partition.is_some() {
        // Another shard may hold what an entry is about: `merge` checks for
        // entries that no longer fail.
        expected::excuse(&mut trials, &expected);
    } else {
        expected::apply(&mut trials, &expected);
    }
    if incomplete.is_some() {
        // An entry nothing matched in a partial run may simply not have run.
        trials.truncate(ran);
    }
    for t in trials.iter().filter(|t| matches!(t.outcome, Outcome::Fail | Outcome::UnexpectedPass)) {
        println!("\n--- {}", t.name);
        if let Some(n) = &t.note {
            println!("    {n}");
        }
        for m in &t.mismatches {
            println!("    {}", describe(m));
        }
    }
    let info = RunInfo {
        harness: format!("approval-conformance {}", env!("CARGO_PKG_VERSION")),
        driver: o.drivers.iter().map(|d| d.label()).collect::<Vec<_>>().join(", "),
        providers: trials.iter().map(|t| t.provider.clone()).collect::<BTreeSet<_>>().into_iter().collect(),
        criteria: criteria_rows(&scenarios),
        incomplete: incomplete.clone(),
    };
    let shard = partition::Shard { partition: o.partition, planned: keys, info: info.clone(), trials: raw };
    if let Err(e) = write_reports(&info, &trials, [&o.tap, &o.junit, &o.matrix, &o.json], &shard) {
        return e;
    }
    let labels: Vec<String> = o.drivers.iter().map(|d| d.label()).collect();
    print_summaries(&labels, &trials);
    if let Some(why) = &incomplete {
        eprintln!("conformance: {why}; the reports are incomplete");
        return interrupted_exit();
    }
    if trials.iter().any(|t| matches!(t.outcome, Outcome::Fail | Outcome::UnexpectedPass)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes the reports asked for: `paths` are TAP, JUnit, the matrix page
/// and the JSON of `shard`.
fn write_reports(info: &RunInfo, trials: &[reports::Trial], paths: [&Option<PathBuf>; 4], shard: &partition::Shard) -> Result<(), ExitCode> {
    let [tap, junit, matrix, json] = paths;
    for (path, text) in [
        (tap, tap.as_ref().map(|_| reports::tap(info, trials))),
        (junit, junit.as_ref().map(|_| reports::junit(info, trials))),
        (matrix, matrix.as_ref().map(|_| reports::matrix_html(info, trials))),
        (json, json.as_ref().map(|_| serde_json::to_string_pretty(shard).unwrap_or_default() + "\n")),
    ] {
        if let (Some(path), Some(text)) = (path, text) {
            if let Err(e) = preflight::write_atomically(path, &text) {
                return Err(bad(&format!("{}: {e}", path.display())));
            }
        }
    }
    Ok(())
}

/// One summary line per driver.
fn print_summaries(drivers: &[String], trials: &[reports::Trial]) {
    for label in drivers {
        let mine: Vec<reports::Trial> = trials.iter().filter(|t| t.driver == *label).cloned().collect();
        println!("\ndriver {label}: {}", reports::summary(&mine));
    }
}

fn real_provider(provider: RealProvider) -> Provider {
    match provider {
        RealProvider::Codex => Provider::Codex,
        RealProvider::Claude => Provider::Claude,
    }
}

fn fetch(provider: RealProvider, versions: &[fakes::version::Version]) -> ExitCode {
    let provider = real_provider(provider);
    for &version in versions {
        match harness::trial::real::fetch(provider, version) {
            Ok(path) => println!("{} {version}: {}", provider.as_str(), path.display()),
            Err(e) => return bad(&e),
        }
    }
    ExitCode::SUCCESS
}

/// 128 + the signal that stopped the run: 130 for SIGINT, 143 for SIGTERM.
fn interrupted_exit() -> ExitCode {
    exit(128 + harness::stop::signal().unwrap_or(libc::SIGINT))
}

/// From now on SIGINT and SIGTERM stop the run in order (`harness::stop`);
/// if they cannot be handled, they end it at once, as they would anyway.
fn handle_stop_signals() {
    if let Err(e) = harness::stop::install() {
        eprintln!("conformance: cannot handle SIGINT and SIGTERM ({e}); they will end the run at once");
    }
}

fn bad(message: &str) -> ExitCode {
    eprintln!("conformance: {message}");
    ExitCode::from(2)
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// `conformance probe`: each probe of `provider` on each real release.
fn probe(provider: harness::scenario::Provider, versions: &[fakes::version::Version], out: &std::path::Path) -> ExitCode {
    let name = provider.as_str();
    // On SIGINT or SIGTERM the running probe's CLI is killed, nothing more is written.
    handle_stop_signals();
    for v in versions {
        if !harness::plan::simulates(provider, *v) {
            return bad(&format!("--version {v}: not a {name} release the fakes simulate (`conformance versions {name}`)"));
        }
        let bin = match harness::trial::real::fetch(provider, *v) {
            Ok(b) => b,
            Err(e) => return bad(&format!("no real {name} {v}: {e}")),
        };
        for p in harness::probes::PROBES.iter().filter(|p| p.provider == provider) {
            let written = tempfile::tempdir().map_err(|e| e.to_string()).and_then(|dir| {
                let run = harness::probes::run(&bin, &[], p, &v.to_string(), dir.path())?;
                let file = harness::probes::file(out, &run);
                let text = serde_json::to_string_pretty(&run).map_err(|e| e.to_string())? + "\n";
                std::fs::create_dir_all(file.parent().unwrap_or(out)).and_then(|_| std::fs::write(&file, text)).map_err(|e| format!("{}: {e}", file.display()))?;
                Ok((run.exit, file))
            });
            match written {
                _ if harness::stop::requested() => {
                    println!("interrupted: {name} {v} {} not recorded", p.name);
                    return interrupted_exit();
                }
                Ok((exit, file)) => println!("{name} {v} {}: exit {exit} -> {}", p.name, file.display()),
                Err(e) => return bad(&e),
            }
        }
    }
    ExitCode::SUCCESS
}
