//! `conformance matrix [--write-readme README.md]`: every example shim on
//! the fakes with its baseline, as the real-drivers table.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use harness::examples::{self, EXAMPLES};
use harness::matrix::{self, ExampleRun};
use harness::scenario::Scenario;
use harness::trial::Fakes;
use harness::verdict::describe;
use reports::Outcome;

pub fn run(readme: Option<&Path>, jobs: Option<usize>) -> ExitCode {
    let scenarios = match super::scenarios(&super::args::Select::default()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let fakes = match std::env::current_exe() {
        Ok(exe) => Fakes::multicall(exe),
        Err(e) => return super::bad(&format!("cannot find my own executable: {e}")),
    };
    let root = examples::root();
    let known: BTreeSet<String> = scenarios.iter().map(|s| s.id.clone()).collect();
    let mut installed = Vec::new();
    let mut absent = Vec::new();
    for example in EXAMPLES {
        let command = match example.command(&root) {
            Ok(c) => c,
            Err(e) => return super::bad(&format!("{}: {e}", example.label)),
        };
        match (command, example.baseline(&root, &known)) {
            (_, Err(e)) => return super::bad(&e),
            (Some(cmd), Ok(expected)) => installed.push((example, cmd, expected)),
            (None, Ok(_)) => absent.push(example),
        }
    }
    if readme.is_some() && !absent.is_empty() {
        let how: Vec<String> = absent.iter().map(|e| e.absent()).collect();
        return super::bad(&format!("the README's table lists every example, and these are not installed:\n  {}", how.join("\n  ")));
    }
    let work: Vec<(usize, Arc<Scenario>)> =
        (0..installed.len()).flat_map(|e| scenarios.iter().map(move |s| (e, Arc::clone(s)))).collect();
    let jobs = jobs.unwrap_or_else(harness::pool::default_jobs);
    let (total, mut done) = (work.len(), 0);
    let results = harness::pool::map_ordered(
        &work,
        jobs,
        |(e, s)| examples::run_scenario(&installed[*e].1, s, &installed[*e].2, &fakes),
        |_, _| {
            done += 1;
            eprint!("\r{done} of {total} shim x scenario runs done");
            let _ = std::io::stderr().flush();
        },
    );
    eprintln!();
    let mut runs: Vec<ExampleRun> = installed
        .iter()
        .map(|(example, _, expected)| ExampleRun { example, package: example.package(&root), trials: Vec::new(), expected: expected.clone() })
        .collect();
    for ((e, s), result) in work.iter().zip(results) {
        match result {
            Ok(trials) => runs[*e].trials.extend(trials),
            Err(why) => return super::bad(&format!("{} on {}: {why}", installed[*e].0.label, s.id)),
        }
    }
    let table = matrix::table(&runs, &scenarios);
    print!("{table}");
    for e in &absent {
        println!("\nnot run: {}", e.absent());
    }
    let failures: Vec<&reports::Trial> =
        runs.iter().flat_map(|r| &r.trials).filter(|t| matches!(t.outcome, Outcome::Fail | Outcome::UnexpectedPass)).collect();
    for t in &failures {
        println!("\n--- {} {}", t.driver, t.name);
        for line in t.note.iter().cloned().chain(t.mismatches.iter().map(describe)) {
            println!("    {line}");
        }
    }
    if let Some(path) = readme {
        if let Err(e) = harness::atomic::write_between(path, matrix::BEGIN, matrix::END, &table) {
            return super::bad(&e);
        }
    }
    if failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}
