//! `conformance bisect`: the release that changed a scenario's outcome.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use fakes::version::Version;
use harness::bisect::{bisect, Check, Found};
use harness::plan::{self, Target};
use harness::recordings;
use harness::scenario::{Provider, Scenario};
use harness::source::DriverSource;
use harness::trial::Fakes;
use harness::verdict::fidelity::compare::compare;
use harness::verdict::fidelity::Recording;

/// Where probes come from.
pub struct How {
    pub offline: bool,
    pub recordings: PathBuf,
    pub driver: String,
}

pub fn run(provider: Provider, filter: &str, check: Option<String>, good: Version, bad: Version, how: &How) -> ExitCode {
    // On SIGINT or SIGTERM the probe running kills the CLI it started and
    // the search ends with no conclusion.
    if !how.offline {
        super::handle_stop_signals();
    }
    let result = bisect_command(provider, filter, check, good, bad, how);
    if let Some(sig) = harness::stop::signal() {
        println!("\ninterrupted by {}: the bisect stopped before it found a release", harness::stop::signal_name(sig));
        return ExitCode::from((128 + sig) as u8);
    }
    match result {
        Ok(found) => found,
        Err(e) => super::bad(&e),
    }
}

fn bisect_command(provider: Provider, filter: &str, check: Option<String>, good: Version, bad: Version, how: &How) -> Result<ExitCode, String> {
    let name = provider.as_str();
    let releases = harness::versions::releases(provider)?;
    for v in [good, bad] {
        if !releases.iter().any(|r| r.version == v) {
            return Err(format!("{v} is not a {name} release on the registry (`conformance versions {name} --all` lists them)"));
        }
    }
    if good >= bad {
        return Err(format!("--good {good} must be older than --bad {bad}"));
    }
    let scenario = one_scenario(provider, filter)?;
    let source = DriverSource::builtin_named(&how.driver).ok_or_else(|| format!("no built-in driver `{}`", how.driver))?;
    let mut span: Vec<Version> = releases.iter().map(|r| r.version).filter(|v| (good..=bad).contains(v)).collect();
    let file = |v: Version| recordings::folder(&how.recordings, &how.driver, name, &v.to_string()).join(format!("{}.json", scenario.id));
    let unrecorded: Vec<Version> = if how.offline { span.iter().copied().filter(|v| !file(*v).is_file()).collect() } else { Vec::new() };
    for v in [good, bad] {
        if unrecorded.contains(&v) {
            return Err(format!("no recording of {} on {name} {v} ({}); bisect without --offline", scenario.id, file(v).display()));
        }
    }
    span.retain(|v| !unrecorded.contains(v));
    let check = check.map_or(Check::Summary, Check::Field);
    println!("bisect {name} {} by {} over {} releases, {good} (good) .. {bad} (bad){}", scenario.id, how.driver, span.len(),
             if how.offline { ", from the committed recordings" } else { ", on the real binaries" });
    let exe = std::env::current_exe().map_err(|e| format!("cannot find my own executable: {e}"))?;
    let mut probe = |v: Version| -> Result<Recording, String> {
        if how.offline {
            return recordings::load(&file(v));
        }
        let bin = harness::trial::real::fetch(provider, v)?;
        let mut fakes = Fakes::multicall(exe.clone()).with_cached_real_binaries();
        fakes.real.insert(format!("{name}-{v}"), bin);
        let trial = plan::Trial { scenario: Arc::clone(&scenario), target: Target::from(Some(v)), driver: source.clone() };
        match recordings::record_trial(&trial, &fakes)? {
            _ if harness::stop::requested() => Err("stopped".into()),
            (_, Some(r)) => Ok(r),
            (verdict, None) => Err(format!("{} did not run on {name} {v}: {verdict:?}", scenario.id)),
        }
    };
    let found = bisect(&span, &check, &mut probe, &mut |line| println!("  {line}"))?;
    match found {
        Found::Flaky(v) => {
            println!("{name} {v} is flaky: its two runs differ, so the search stops there");
            Ok(ExitCode::from(1))
        }
        Found::Threshold { last_good, first } => {
            println!("\nfirst release that differs: {} (the one before, like --good: {})", first.0, last_good.0);
            let skipped: Vec<String> = unrecorded.iter().filter(|v| **v > last_good.0 && **v < first.0).map(|v| v.to_string()).collect();
            if !skipped.is_empty() {
                println!("not recorded, so not probed, between them: {} (bisect without --offline to pin it)", skipped.join(", "));
            }
            let pretty = |r: &Recording| serde_json::to_string_pretty(&check.of(r)).unwrap_or_default();
            let (a, b) = (last_good.0.to_string(), first.0.to_string());
            let diff = reports::diff(&pretty(&last_good.1), &pretty(&first.1)).replace("--- expected", &format!("--- {a}")).replace("+++ actual", &format!("+++ {b}"));
            println!("\noutcome, {a} -> {b}:\n{diff}");
            let messages = compare(&last_good.1.conversations, &first.1.conversations);
            println!("\nmessages: {} compared, {} differ:", messages.messages, messages.differences.len());
            for d in messages.differences.iter().take(40) {
                println!("  {}", d.between(&a, &b));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The embedded scenario with id `filter`, else the one whose id contains it.
fn one_scenario(provider: Provider, filter: &str) -> Result<Arc<Scenario>, String> {
    let (all, broken) = plan::embedded();
    if let Some(e) = broken.first() {
        return Err(e.to_string());
    }
    let mine: Vec<Scenario> = all.into_iter().filter(|s| s.provider == provider).collect();
    if let Some(s) = mine.iter().find(|s| s.id == filter) {
        return Ok(Arc::new(s.clone()));
    }
    let hits: Vec<&Scenario> = mine.iter().filter(|s| s.id.contains(filter)).collect();
    match hits.as_slice() {
        [one] => Ok(Arc::new((*one).clone())),
        [] => Err(format!("no {} scenario matches `{filter}`", provider.as_str())),
        many => Err(format!("`{filter}` matches {} scenarios ({}); name one", many.len(), many.iter().map(|s| s.id.as_str()).collect::<Vec<_>>().join(", "))),
    }
}
