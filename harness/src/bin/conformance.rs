//! `conformance`: runs scenarios against a driver and prints verdicts.
//!
//! Exit codes: 0 conformant, 1 failures, 2 bad input or harness error.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fakes::version::Version;
use harness::expected::{self, ExpectedFailures};
use harness::judge::describe;
use harness::reference::mutants;
use harness::run::Fakes;
use harness::scenario::Scenario;
use harness::suite::{self, DriverSource};
use reports::{Outcome, RunInfo};

const USAGE: &str = "usage: conformance [COMMAND] [OPTIONS]

commands:
  run        run scenarios against a driver (default)
  baseline   run, then print the current failures as an expected-failure list
  list       list scenarios and what they cover
  explain ID show one scenario: servers, policies, steps and expectations
  mutants    list the broken built-in drivers the suite must fail
  shim       serve a built-in driver over the driver protocol on stdio
  bench      time the suite through the fakes, the harness overhead over the
             bare processes and lines, the real Codex where cached, and memory
             over 10,000 generated scenarios; prints ratios
  fetch PROVIDER VERSION...   fetch real binaries from the npm registry into the cache
  record     run on the real binaries (like --real) and write each trial's
             normalized recording under --out DIR (see scripts/record-real.sh)

options:
  --driver reference|mutant:NAME   built-in driver (default: reference)
  --driver-cmd 'PROGRAM ARGS...'   a driver shim (docs/driver-protocol.md), split on spaces;
                                   both repeat: several drivers make one combined report
  --scenarios DIR                  scenario files (default: the embedded suite)
  --provider NAME                  only scenarios for this provider
  --version X.Y.Z                  only these provider versions (repeatable)
  --filter TEXT                    only scenario ids containing TEXT
  --expected-failures FILE         `scenario` or `scenario:check` per line; strict
  --tap FILE | --junit FILE | --matrix FILE   write reports
  --real                           run on the real provider binaries cached by
                                   scripts/fetch-provider.sh, against a mock model
  -q, --quiet                      only failures and the summary";

#[derive(Default)]
struct Options {
    command: String,
    explain: Option<String>,
    /// Built-in drivers and shim commands, in order; several make one
    /// combined report (the matrix then has a column group per driver).
    drivers: Vec<DriverSource>,
    scenarios: Option<PathBuf>,
    provider: Option<String>,
    versions: Vec<Version>,
    filter: Option<String>,
    expected: Option<PathBuf>,
    tap: Option<PathBuf>,
    junit: Option<PathBuf>,
    matrix: Option<PathBuf>,
    quiet: bool,
    real: bool,
    out: Option<PathBuf>,
    fetch: Vec<String>,
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut o = Options { command: "run".into(), ..Options::default() };
    let mut it = args.into_iter().peekable();
    if let Some(c) = it.peek() {
        if !c.starts_with('-') {
            o.command = it.next().unwrap_or_default();
            if !["run", "baseline", "list", "explain", "mutants", "shim", "record", "bench", "fetch"].contains(&o.command.as_str()) {
                return Err(format!("unknown command `{}`", o.command));
            }
            if o.command == "explain" {
                o.explain = Some(it.next().ok_or("explain needs a scenario id")?);
            }
            if o.command == "fetch" {
                o.fetch = it.by_ref().take_while(|a| !a.starts_with('-')).collect();
            }
        }
    }
    while let Some(a) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        match a.as_str() {
            "--driver" => o.drivers.push(DriverSource::Builtin(value("--driver")?)),
            "--driver-cmd" => o.drivers.push(DriverSource::Shim(value("--driver-cmd")?.split_whitespace().map(String::from).collect())),
            "--scenarios" => o.scenarios = Some(PathBuf::from(value("--scenarios")?)),
            "--provider" => o.provider = Some(value("--provider")?),
            "--version" => o.versions.push(value("--version")?.parse().map_err(|e| format!("--version: {e}"))?),
            "--filter" => o.filter = Some(value("--filter")?),
            "--expected-failures" => o.expected = Some(PathBuf::from(value("--expected-failures")?)),
            "--tap" => o.tap = Some(PathBuf::from(value("--tap")?)),
            "--junit" => o.junit = Some(PathBuf::from(value("--junit")?)),
            "--matrix" => o.matrix = Some(PathBuf::from(value("--matrix")?)),
            "-q" | "--quiet" => o.quiet = true,
            "--real" => o.real = true,
            "--out" => o.out = Some(PathBuf::from(value("--out")?)),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    if o.drivers.is_empty() {
        o.drivers.push(DriverSource::Builtin("reference".into()));
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The CLI is also the fakes, so a single built executable is enough.
    match args.first().map(String::as_str) {
        Some("fake-codex") => return exit(fakes::codex::main_with_args(args[1..].to_vec())),
        Some("fake-mcp") => return exit(fakes::mcp::main_with_args(args[1..].to_vec())),
        Some("fake-claude") => return exit(fakes::claude::main_with_args(args[1..].to_vec())),
        Some("relay") => return exit(fakes::relay::main_with_args(args[1..].to_vec())),
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
    let source = o.drivers[0].clone();
    match o.command.as_str() {
        "fetch" => return fetch(&o.fetch),
        "mutants" => {
            for m in mutants() {
                println!("{:32} {}", m.name, m.bug);
            }
            return ExitCode::SUCCESS;
        }
        "shim" => {
            let mut driver = match source.make() {
                Ok(d) => d,
                Err(e) => return bad(&e.message),
            };
            let stdin = std::io::stdin();
            return exit(harness::shim::serve(driver.as_mut(), stdin.lock(), std::io::stdout()));
        }
        _ => {}
    }
    let (scenarios, broken) = match &o.scenarios {
        None => suite::embedded(),
        Some(dir) => match suite::load_dir(dir) {
            Ok(x) => x,
            Err(e) => return bad(&e.to_string()),
        },
    };
    if !broken.is_empty() {
        broken.iter().for_each(|e| eprintln!("conformance: {e}"));
        return ExitCode::from(2);
    }
    let problems = suite::check_set(&scenarios);
    if !problems.is_empty() {
        problems.iter().for_each(|p| eprintln!("conformance: {p}"));
        return ExitCode::from(2);
    }
    let selected: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| o.filter.as_ref().is_none_or(|f| s.id.contains(f.as_str())))
        .filter(|s| o.provider.as_ref().is_none_or(|p| s.provider.as_str() == p))
        .collect();
    match o.command.as_str() {
        "list" => {
            for s in &selected {
                println!("{:48} {:8} {:14} {}", s.id, s.provider.as_str(), s.covers.join(","), s.title);
            }
            ExitCode::SUCCESS
        }
        "explain" => {
            let id = o.explain.clone().unwrap_or_default();
            match scenarios.iter().find(|s| s.id == id) {
                Some(s) => {
                    print!("{}", explain(s));
                    ExitCode::SUCCESS
                }
                None => bad(&format!("no scenario `{id}` (see `conformance list`)")),
            }
        }
        "record" => record(&o, &selected),
        "bench" => {
            let Ok(exe) = std::env::current_exe() else { return bad("cannot find my own executable") };
            let owned: Vec<Scenario> = selected.iter().map(|s| (*s).clone()).collect();
            print!("{}", harness::bench::report(&owned, &Fakes::multicall(exe), 2));
            ExitCode::SUCCESS
        }
        _ => run(&o, &selected),
    }
}

/// Runs the reference driver on every cached real binary and writes one
/// normalized recording per trial: `OUT/<provider>/<version>/<scenario>.json`.
fn record(o: &Options, scenarios: &[&Scenario]) -> ExitCode {
    let Some(out) = &o.out else { return bad("record needs --out DIR") };
    let fakes = match std::env::current_exe() {
        Ok(exe) => Fakes::multicall(exe).with_cached_real_binaries(),
        Err(e) => return bad(&format!("cannot find my own executable: {e}")),
    };
    if fakes.real.is_empty() {
        return bad("no real binaries cached: run scripts/fetch-provider.sh codex VERSION first");
    }
    let mut failed = 0;
    for s in scenarios {
        for v in suite::versions_for(s.provider).into_iter().filter(|v| o.versions.is_empty() || o.versions.contains(v)) {
            let mut driver = harness::reference::ReferenceDriver::new();
            let (verdict, summary) = suite::run_summarized(s, v, &mut driver, &fakes);
            let name = suite::trial_name(s, v);
            let verdict = match verdict {
                suite::Verdict::Skip(reason) => {
                    println!("skip  {name}  ({reason})");
                    continue;
                }
                suite::Verdict::Pass => "pass",
                suite::Verdict::Fail(m) => {
                    failed += 1;
                    m.iter().for_each(|m| println!("      {}", describe(m)));
                    "fail"
                }
            };
            let dir = out.join(s.provider.as_str()).join(v.to_string());
            let file = dir.join(format!("{}.json", s.id));
            let doc = serde_json::json!({"scenario": s.id, "provider": s.provider.as_str(), "version": v.to_string(),
                                         "driver": "reference", "verdict": verdict, "summary": summary});
            let written = std::fs::create_dir_all(&dir)
                .and_then(|_| std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"));
            if let Err(e) = written {
                return bad(&format!("{}: {e}", file.display()));
            }
            println!("{verdict:5} {name} -> {}", file.display());
        }
    }
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

fn run(o: &Options, scenarios: &[&Scenario]) -> ExitCode {
    let fakes = match std::env::current_exe() {
        Ok(exe) if o.real => {
            // Fetch what the selected trials need, on demand.
            for s in scenarios.iter().filter(|s| harness::real::unsupported(s).is_none()) {
                for v in suite::versions_for(s.provider).into_iter().filter(|v| o.versions.is_empty() || o.versions.contains(v)) {
                    if let Err(e) = harness::real::fetch(s.provider, v) {
                        eprintln!("conformance: {e}; those trials are skipped");
                    }
                }
            }
            Fakes::multicall(exe).with_cached_real_binaries()
        }
        Ok(exe) => Fakes::multicall(exe),
        Err(e) => return bad(&format!("cannot find my own executable: {e}")),
    };
    let known: BTreeSet<String> = scenarios.iter().map(|s| s.id.clone()).collect();
    let expected = match &o.expected {
        Some(path) => match ExpectedFailures::load(path, &known) {
            Ok(e) => e,
            Err(e) => return bad(&e),
        },
        None => ExpectedFailures::default(),
    };
    let total: usize = o.drivers.len()
        * scenarios
            .iter()
            .map(|s| suite::versions_for(s.provider).iter().filter(|v| o.versions.is_empty() || o.versions.contains(v)).count())
            .sum::<usize>();
    let mut done = 0;
    let quiet = o.quiet;
    let mut progress = |t: &reports::Trial| {
        done += 1;
        let label = match t.outcome {
            Outcome::Pass => "ok  ",
            Outcome::Skip => "skip",
            _ => "FAIL",
        };
        if !quiet || t.outcome == Outcome::Fail {
            let note = t.note.as_ref().map(|n| format!("  ({n})")).unwrap_or_default();
            println!("[{done:>3}/{total}] {label} {}{note}", t.name);
            let _ = std::io::stdout().flush();
        }
    };
    let mut trials = Vec::new();
    for source in &o.drivers {
        match suite::run_all(scenarios, source, &o.versions, &fakes, &mut progress) {
            Ok(t) => trials.extend(t),
            Err(e) => return bad(&format!("driver {} could not start: {}: {}", source.label(), e.kind, e.message)),
        }
    }
    if o.command == "baseline" {
        let failures: Vec<(String, Vec<reports::Mismatch>)> =
            trials.iter().filter(|t| t.outcome == Outcome::Fail).map(|t| (t.scenario.clone(), t.mismatches.clone())).collect();
        print!("{}", expected::baseline(&failures));
        return ExitCode::SUCCESS;
    }
    suite::apply_expected(&mut trials, &expected);
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
        driver: o.drivers.iter().map(DriverSource::label).collect::<Vec<_>>().join(", "),
        providers: trials.iter().map(|t| t.provider.clone()).collect::<BTreeSet<_>>().into_iter().collect(),
    };
    for (path, text) in [
        (&o.tap, o.tap.as_ref().map(|_| reports::tap(&info, &trials))),
        (&o.junit, o.junit.as_ref().map(|_| reports::junit(&info, &trials))),
        (&o.matrix, o.matrix.as_ref().map(|_| reports::matrix_html(&info, &trials))),
    ] {
        if let (Some(path), Some(text)) = (path, text) {
            if let Err(e) = std::fs::write(path, text) {
                return bad(&format!("{}: {e}", path.display()));
            }
        }
    }
    for source in &o.drivers {
        let mine: Vec<reports::Trial> = trials.iter().filter(|t| t.driver == source.label()).cloned().collect();
        println!("\ndriver {}: {}", source.label(), reports::summary(&mine));
    }
    if trials.iter().any(|t| matches!(t.outcome, Outcome::Fail | Outcome::UnexpectedPass)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn explain(s: &Scenario) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", s.id, s.title);
    let _ = writeln!(out, "file: {}", s.path.display());
    let _ = writeln!(out, "covers: {}   provider: {} {}   global policy: {}", s.covers.join(", "), s.provider.as_str(), s.versions, s.policy.global);
    if !s.requires.is_empty() {
        let _ = writeln!(out, "requires: {}", s.requires.join(", "));
    }
    let _ = writeln!(out, "caught by: {}", s.caught_by.join(", "));
    for server in &s.servers {
        let tools: Vec<String> = server.tools.iter().map(|(t, p)| format!("{t}={}", p.approval_mode)).collect();
        let _ = writeln!(
            out,
            "server {} ({:?}{}{}): {}",
            server.name,
            server.transport,
            if server.attached { "" } else { ", call-scoped" },
            server.bearer_token_env.as_ref().map(|v| format!(", bearer ${v}")).unwrap_or_default(),
            if tools.is_empty() { "no per-tool policy".into() } else { tools.join(", ") }
        );
    }
    if let Some(b) = &s.bridge {
        let _ = writeln!(out, "bridge {}: host tools {}", b.server, b.tools.keys().cloned().collect::<Vec<_>>().join(", "));
    }
    if let Some(e) = &s.launch.error {
        let _ = writeln!(out, "launch must fail with `{e}`, before any provider process starts");
    }
    for (i, step) in s.steps.iter().enumerate() {
        let _ = writeln!(out, "step {}: {}", i + 1, harness::judge::describe_step(step));
        let expect = match step {
            harness::scenario::Step::ToolCall { expect, host, .. } => format!("host answers {:?}; expect {expect:?}", host.unwrap_or(harness::scenario::HostAnswer::Decline)),
            harness::scenario::Step::Request { expect, .. } | harness::scenario::Step::RawRequest { expect, .. } => format!("expect {expect:?}"),
            harness::scenario::Step::Fingerprint { expect, .. } => format!("expect {expect:?}"),
            _ => String::new(),
        };
        if !expect.is_empty() {
            let _ = writeln!(out, "        {expect}");
        }
    }
    out
}

fn fetch(args: &[String]) -> ExitCode {
    let Some((provider, versions)) = args.split_first() else { return bad("fetch needs PROVIDER VERSION...") };
    let provider = match provider.as_str() {
        "codex" => harness::scenario::Provider::Codex,
        "claude" => harness::scenario::Provider::Claude,
        other => return bad(&format!("cannot fetch `{other}`: codex or claude")),
    };
    for v in versions {
        let version: Version = match v.parse() {
            Ok(v) => v,
            Err(e) => return bad(&e),
        };
        match harness::real::fetch(provider, version) {
            Ok(path) => println!("{} {version}: {}", provider.as_str(), path.display()),
            Err(e) => return bad(&e),
        }
    }
    ExitCode::SUCCESS
}

fn bad(message: &str) -> ExitCode {
    eprintln!("conformance: {message}");
    ExitCode::from(2)
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}
