//! `conformance`: runs scenarios against a driver and prints verdicts.
//!
//! Exit codes: 0 conformant, 1 failures, 2 bad input or harness error.

use std::path::PathBuf;
use std::process::ExitCode;

use fakes::version::Version;
use harness::driver::Driver;
use harness::reference::{mutants, ReferenceDriver};
use harness::run::Fakes;
use harness::scenario::Scenario;
use harness::suite::{self, Verdict};

const USAGE: &str = "usage: conformance [run|list|mutants] [--driver reference|mutant:NAME] [--scenarios DIR] [--version X.Y.Z]... [--filter TEXT]

  run       run the scenarios (default: the embedded suite) against the driver
  list      list the scenarios with what they cover
  mutants   list the broken drivers the suite must fail";

struct Options {
    command: String,
    driver: String,
    scenarios: Option<PathBuf>,
    versions: Vec<Version>,
    filter: Option<String>,
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut o = Options { command: "run".into(), driver: "reference".into(), scenarios: None, versions: Vec::new(), filter: None };
    let mut it = args.into_iter();
    let mut first = true;
    while let Some(a) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        match a.as_str() {
            "run" | "list" | "mutants" if first => o.command = a.clone(),
            "--driver" => o.driver = value("--driver")?,
            "--scenarios" => o.scenarios = Some(PathBuf::from(value("--scenarios")?)),
            "--version" => o.versions.push(value("--version")?.parse().map_err(|e| format!("--version: {e}"))?),
            "--filter" => o.filter = Some(value("--filter")?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument `{other}`")),
        }
        first = false;
    }
    Ok(o)
}

fn make_driver(name: &str) -> Result<Box<dyn Driver>, String> {
    if name == "reference" {
        return Ok(Box::new(ReferenceDriver::new()));
    }
    let wanted = name.strip_prefix("mutant:").ok_or_else(|| format!("unknown driver `{name}`"))?;
    mutants()
        .into_iter()
        .find(|m| m.name == wanted)
        .map(|m| Box::new((m.build)()) as Box<dyn Driver>)
        .ok_or_else(|| format!("no mutant named `{wanted}` (see `conformance mutants`)"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The CLI is also the fakes, so a single built executable is enough.
    match args.first().map(String::as_str) {
        Some("fake-codex") => return exit(fakes::codex::main_with_args(args[1..].to_vec())),
        Some("fake-mcp") => return exit(fakes::mcp::main_with_args(args[1..].to_vec())),
        Some("fake-claude") => return exit(fakes::claude::main_with_args(args[1..].to_vec())),
        _ => {}
    }
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("conformance: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (scenarios, broken) = match &o.scenarios {
        None => suite::embedded(),
        Some(dir) => match suite::load_dir(dir) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("conformance: {e}");
                return ExitCode::from(2);
            }
        },
    };
    if !broken.is_empty() {
        for e in &broken {
            eprintln!("conformance: {e}");
        }
        return ExitCode::from(2);
    }
    let problems = suite::check_set(&scenarios);
    if !problems.is_empty() {
        problems.iter().for_each(|p| eprintln!("conformance: {p}"));
        return ExitCode::from(2);
    }
    let selected: Vec<&Scenario> =
        scenarios.iter().filter(|s| o.filter.as_ref().is_none_or(|f| s.id.contains(f.as_str()))).collect();
    match o.command.as_str() {
        "list" => {
            for s in &selected {
                println!("{:40} {:18} {}", s.id, s.covers.join(","), s.title);
            }
            ExitCode::SUCCESS
        }
        "mutants" => {
            for m in mutants() {
                println!("{:28} {}", m.name, m.bug);
            }
            ExitCode::SUCCESS
        }
        _ => run(&o, &selected),
    }
}

fn run(o: &Options, scenarios: &[&Scenario]) -> ExitCode {
    let fakes = match std::env::current_exe() {
        Ok(exe) => Fakes::multicall(exe),
        Err(e) => {
            eprintln!("conformance: cannot find my own executable: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut pass, mut fail, mut skip) = (0, 0, 0);
    let mut failures = Vec::new();
    for s in scenarios {
        let versions: Vec<Version> = suite::versions_for(s.provider)
            .into_iter()
            .filter(|v| o.versions.is_empty() || o.versions.contains(v))
            .collect();
        for v in versions {
            let mut driver = match make_driver(&o.driver) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("conformance: {e}");
                    return ExitCode::from(2);
                }
            };
            let name = suite::trial_name(s, v);
            match suite::run(s, v, driver.as_mut(), &fakes) {
                Verdict::Pass => {
                    pass += 1;
                    println!("ok    {name}");
                }
                Verdict::Skip(reason) => {
                    skip += 1;
                    println!("skip  {name}  ({reason})");
                }
                Verdict::Fail(m) => {
                    fail += 1;
                    println!("FAIL  {name}");
                    failures.push((name, m));
                }
            }
        }
    }
    for (name, mismatches) in &failures {
        println!("\n--- {name}");
        for m in mismatches {
            println!("    {m}");
        }
    }
    println!("\ndriver {}: {pass} passed, {fail} failed, {skip} skipped", o.driver);
    if fail == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}
