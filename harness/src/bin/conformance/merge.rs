//! `conformance merge SHARD.json...`: the shards of a partitioned run as
//! the one run they split, with the same reports and exit code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use harness::partition::{self, Shard};
use harness::verdict::describe;
use harness::verdict::expected::{self, ExpectedFailures};
use reports::Outcome;

pub fn run(paths: &[PathBuf], expected_failures: Option<&Path>, reports: [&Option<PathBuf>; 4]) -> ExitCode {
    let mut shards = Vec::new();
    for path in paths {
        let read = std::fs::read_to_string(path).map_err(|e| e.to_string());
        match read.and_then(|text| serde_json::from_str::<Shard>(&text).map_err(|e| format!("not a shard's --json: {e}"))) {
            Ok(s) => shards.push(s),
            Err(e) => return super::bad(&format!("{}: {e}", path.display())),
        }
    }
    let merged = match partition::merge(&shards) {
        Ok(m) => m,
        Err(e) => return super::bad(&e),
    };
    let mut trials = merged.trials.clone();
    if let Some(path) = expected_failures {
        let known: BTreeSet<String> = trials.iter().map(|t| t.scenario.clone()).collect();
        match ExpectedFailures::load(path, &known) {
            Ok(e) => expected::apply(&mut trials, &e),
            Err(e) => return super::bad(&e),
        }
    }
    for t in trials.iter().filter(|t| matches!(t.outcome, Outcome::Fail | Outcome::UnexpectedPass)) {
        println!("\n--- {}", t.name);
        t.note.iter().for_each(|n| println!("    {n}"));
        t.mismatches.iter().for_each(|m| println!("    {}", describe(m)));
    }
    let info = merged.info.clone();
    if let Err(code) = super::write_reports(&info, &trials, reports, &merged) {
        return code;
    }
    let drivers: Vec<String> = merged.trials.iter().map(|t| t.driver.clone()).fold(Vec::new(), |mut v, d| {
        if !v.contains(&d) {
            v.push(d);
        }
        v
    });
    super::print_summaries(&drivers, &trials);
    if let Some(why) = &info.incomplete {
        eprintln!("conformance: {why}; the reports are incomplete");
        return ExitCode::from(1);
    }
    if trials.iter().any(|t| matches!(t.outcome, Outcome::Fail | Outcome::UnexpectedPass)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
