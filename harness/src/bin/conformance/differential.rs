//! `conformance fidelity --cases N --seed S --provider P --version V`:
//! generated cases on the fake and on the real binary, compared message by
//! message; prints each case's outcome and the agreement rate.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use fakes::version::Version;
use harness::agreement;
use harness::differential::{case_scenario, run_case, tally, Outcome};
use harness::generate;
use harness::plan;
use harness::recordings;
use harness::scenario::{Provider, Scenario};
use harness::verdict::fidelity::Recording;
use harness::source::DriverSource;
use harness::trial::Fakes;

/// Longest list of differences printed for one case.
const SHOWN: usize = 12;

/// Most shrinking probes per disagreeing case (each is three runs).
const SHRINK_BUDGET: usize = 48;

pub struct Ask<'a> {
    pub provider: Provider,
    pub version: Version,
    pub cases: u64,
    pub seed: u64,
    pub driver: &'a str,
    /// Where the allow-list is (RECORDINGS/ALLOWED.toml).
    pub recordings: &'a Path,
    /// Where to write each disagreeing case, shrunk, as a recording.
    pub out: Option<&'a Path>,
    /// Where to log the counts (the agreement log).
    pub tally: Option<&'a Path>,
    /// Cases run at once.
    pub jobs: usize,
}

pub fn run(ask: &Ask) -> ExitCode {
    // SIGINT or SIGTERM: the running cases kill what they started, no more
    // start, and nothing is logged (a cut-short run is no count).
    super::handle_stop_signals();
    let result = cases(ask);
    if let Some(sig) = harness::stop::signal() {
        println!("\ninterrupted by {}: no agreement logged", harness::stop::signal_name(sig));
        return ExitCode::from((128 + sig) as u8);
    }
    match result {
        Ok(all_agree) => ExitCode::from(if all_agree { 0 } else { 1 }),
        Err(e) => super::bad(&e),
    }
}

fn cases(ask: &Ask) -> Result<bool, String> {
    let name = ask.provider.as_str();
    if !plan::simulates(ask.provider, ask.version) {
        return Err(format!("--version {}: not a {name} release the fakes simulate (`conformance versions {name}`)", ask.version));
    }
    let driver = DriverSource::builtin_named(ask.driver).ok_or_else(|| format!("--driver: no built-in driver `{}` (see `conformance mutants`)", ask.driver))?;
    let allow = recordings::allow_list(ask.recordings)?;
    let bin = harness::trial::real::fetch(ask.provider, ask.version).map_err(|e| format!("no real {name} {}: {e}", ask.version))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find my own executable: {e}"))?;
    let fake = Fakes::multicall(exe);
    let mut real = fake.clone();
    real.real.insert(format!("{name}-{}", ask.version), bin);
    real.real_only = true;
    println!("fidelity: {} generated cases (seed {}) on {name} {}, fake and real, by {}, {} at once", ask.cases, ask.seed, ask.version, ask.driver, ask.jobs);
    let play = |scenario: Scenario| run_case(Arc::new(scenario), ask.version, &driver, &real, &fake, &allow);
    let numbers: Vec<u64> = (0..ask.cases).collect();
    let mut shrunk: Result<(), String> = Ok(());
    // Cases run on `jobs` threads (each real run is isolated: its own
    // directories and loopback ports); each is printed, and a disagreement
    // shrunk, in case order.
    let results = harness::pool::map_ordered(
        &numbers,
        ask.jobs,
        |&n| {
            if harness::stop::requested() {
                return Err("stopped".to_string());
            }
            case_scenario(ask.provider, ask.seed, n).map(|(id, scenario)| (id, play(scenario)))
        },
        |n, result| {
            let Ok((id, (outcome, recording))) = result else { return };
            if harness::stop::requested() {
                return;
            }
            print_case(id, outcome);
            if let (Outcome::Disagree(_), Some(dir), true) = (outcome, ask.out, shrunk.is_ok()) {
                match shrink_and_write(ask, n as u64, &play, recording.clone(), dir) {
                    Ok(file) => println!("    shrunk and written: {}", file.display()),
                    Err(e) => shrunk = Err(e),
                }
            }
        },
    );
    if harness::stop::requested() {
        return Ok(false);
    }
    shrunk?;
    let mut runs = Vec::new();
    for result in results {
        runs.push(result?.1 .0);
    }
    println!("\n{name} {}: {}", ask.version, tally(&runs));
    if let Some(log) = ask.tally {
        agreement::log(log, agreement::Run::of(ask.provider, ask.version, ask.driver, ask.seed, &runs))?;
        println!("logged in {}", log.display());
    }
    Ok(runs.iter().all(|o| matches!(o, Outcome::Agree(_) | Outcome::Flaky(_))))
}

/// One case's outcome: its label and id, then its differences.
fn print_case(id: &str, outcome: &Outcome) {
    let agreed;
    let (label, lines) = match outcome {
        Outcome::Agree(messages) => {
            agreed = [format!("{messages} messages alike")];
            ("agree   ", &agreed[..])
        }
        Outcome::Disagree(d) => ("DIFFER  ", &d[..]),
        Outcome::Flaky(d) => ("flaky   ", &d[..]),
        Outcome::Crashed(why) => ("CRASHED ", std::slice::from_ref(why)),
    };
    println!("{label}{id}");
    if let Outcome::Flaky(_) = outcome {
        println!("    the two real runs differ (below, `real` is the first run and `fake` the second):");
    }
    for line in lines.iter().take(SHOWN) {
        println!("    {line}");
    }
    if lines.len() > SHOWN {
        println!("    ... and {} more", lines.len() - SHOWN);
    }
}

/// Shrinks a disagreeing case (while the fake still disagrees with the real
/// CLI) and writes the smallest one's real recording, its scenario text
/// inside, to OUT/<provider>/<version>/<id>.json: an offline fidelity trial
/// that fails until the fake is fixed.
fn shrink_and_write(ask: &Ask, n: u64, play: &(dyn Fn(Scenario) -> (Outcome, Option<Recording>) + Sync), first: Option<Recording>, out: &Path) -> Result<PathBuf, String> {
    let id = format!("gen-{}-{n}-min", ask.seed);
    let origin = format!("seed {} case {n}, shrunk", ask.seed);
    let mut last = first;
    let (small, probes) = generate::shrink(generate::tree(ask.provider, ask.seed, n), SHRINK_BUDGET, |case| match case.scenario(&id, &origin) {
        Ok(_) if harness::stop::requested() => false,
        Ok(s) => match play(s) {
            (Outcome::Disagree(_), Some(r)) => {
                last = Some(r);
                true
            }
            _ => false,
        },
        Err(_) => false,
    });
    let text = small.to_toml(&id, &origin);
    // The recording of the smallest case that still disagreed.
    let mut recording = match last {
        Some(r) if r.scenario == id => r,
        _ => match play(small.scenario(&id, &origin)?) {
            (_, Some(r)) => r,
            (o, None) => return Err(format!("{id}: no real recording of the shrunk case ({o:?})")),
        },
    };
    recording.case = Some(text);
    let dir = recordings::folder(out, &recording.driver, &recording.provider, &recording.version);
    let file = dir.join(format!("{id}.json"));
    std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, recording.to_text())).map_err(|e| format!("{}: {e}", file.display()))?;
    println!("    shrunk in {probes} probes to {} servers, {} steps", small.servers.len(), small.steps.len());
    Ok(file)
}

/// `conformance agreement [--write-readme FILE]`.
pub fn agreement(log: &Path, readme: Option<&Path>) -> ExitCode {
    let table = match agreement::table_of(log) {
        Ok(t) => t,
        Err(e) => return super::bad(&e),
    };
    print!("{table}");
    if let Some(path) = readme {
        if let Err(e) = harness::atomic::write_between(path, agreement::BEGIN, agreement::END, &table) {
            return super::bad(&e);
        }
        eprintln!("wrote the table into {}", path.display());
    }
    ExitCode::SUCCESS
}
