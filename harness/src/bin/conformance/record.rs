//! `conformance record --out DIR`: the reference driver (or each
//! `--driver-cmd` shim) on every cached real binary, one normalized
//! recording per trial: `OUT/<provider>/<version>/<scenario>.json`
//! (`<version>+tool-search` for Claude Code's tool search on; a shim's below
//! `OUT/drivers/<its name>/`). `conformance fidelity`: every recording
//! replayed on the fake with the driver that made it and compared message by
//! message.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use fakes::version::Version;
use harness::plan;
use harness::recordings::{self, Replay};
use harness::scenario::Scenario;
use harness::source::DriverSource;
use harness::trial::Fakes;
use harness::verdict::{describe, Verdict};

/// Ok(any trial failed), or Err(message) for bad input.
pub fn record(out: &Path, scenarios: &[Arc<Scenario>], versions: &[Version], drivers: &[DriverSource], fakes: &Fakes) -> Result<bool, String> {
    if fakes.real.is_empty() && fakes.real_only {
        return Err("no real binaries cached: run scripts/fetch-provider.sh codex VERSION first".into());
    }
    let mut failed = false;
    let mut written = 0;
    for t in plan::trials(scenarios, drivers, versions) {
        let name = t.name();
        let (verdict, recording) = recordings::record_trial(&t, fakes)?;
        // Stopped (SIGINT/SIGTERM): the trial killed what it started and its
        // recording is cut short, so it is not written over a good one.
        if let Some(sig) = harness::stop::signal() {
            println!("\ninterrupted by {}: {name} cut short, not recorded; {written} recordings written", harness::stop::signal_name(sig));
            return Ok(failed);
        }
        let Some(recording) = recording else {
            if let Verdict::Skip(reason) = verdict {
                println!("skip  {name}  ({reason})");
            }
            continue;
        };
        if verdict != Verdict::Pass {
            failed = true;
            verdict.mismatches().iter().for_each(|m| println!("      {}", describe(m)));
        }
        let dir = recordings::folder(out, &recording.driver, &recording.provider, &format!("{}{}", recording.version, t.target.tool_search.suffix()));
        let file = dir.join(format!("{}.json", recording.scenario));
        std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(&file, recording.to_text()))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        println!("{:5} {name} -> {}", recording.verdict, file.display());
        written += 1;
    }
    Ok(failed)
}

/// Ok(true) when every recording matches within the allow-list and no
/// entry is stale; Err(message) for bad input. `shims` are the drivers
/// besides the reference whose recordings can be replayed (by the name
/// each reports); a recording of any other driver is skipped, with why.
pub fn fidelity(root: &Path, filter: Option<&str>, jobs: usize, shims: &[DriverSource], fakes: &Fakes) -> Result<bool, String> {
    let allow = recordings::allow_list(root)?;
    let mut by_name = BTreeMap::new();
    for shim in shims {
        let mut driver = shim.make(&fakes.supervise).map_err(|e| format!("{}: {e}", shim.label()))?;
        by_name.insert(driver.name(), shim.clone());
        driver.close();
    }
    let (all, broken) = plan::embedded();
    if let Some(e) = broken.first() {
        return Err(e.to_string());
    }
    let scenarios: BTreeMap<String, Arc<Scenario>> = all.into_iter().map(|s| (s.id.clone(), Arc::new(s))).collect();
    let files: Vec<_> = recordings::files(root).into_iter().filter(|f| filter.is_none_or(|t| recordings::trial_name(f).contains(t))).collect();
    let mut ok = true;
    let replay = |f: &std::path::PathBuf| -> Result<Option<Replay>, String> {
        let real = recordings::load(f)?;
        // A built-in driver (the reference, reference-claude-sdk ...) is always at hand.
        let Some(source) = by_name.get(&real.driver).cloned().or_else(|| DriverSource::builtin_named(&real.driver)) else { return Ok(None) };
        let mut driver = source.make(&fakes.supervise).map_err(|e| format!("{}: {e}", source.label()))?;
        recordings::replay(f, &real, driver.as_mut(), &scenarios, &allow, fakes).map(Some)
    };
    let results = harness::pool::map_ordered(&files, jobs, replay, |i, r| match r {
        Ok(Some(r)) => match r.failure() {
            Some(why) => println!("FAIL {}\n{why}", recordings::trial_name(&files[i])),
            None => println!("ok   {}", recordings::trial_name(&files[i])),
        },
        Ok(None) => println!("skip {} (made by a driver not given: pass its --driver-cmd)", recordings::trial_name(&files[i])),
        Err(e) => println!("FAIL {}: {e}", recordings::trial_name(&files[i])),
    });
    let skipped = results.iter().any(|r| matches!(r, Ok(None)));
    let replays: Vec<&Replay> = results.iter().filter_map(|r| r.as_ref().ok()?.as_ref()).collect();
    ok &= results.iter().all(|r| r.is_ok()) && replays.iter().all(|r| r.failure().is_none());
    // An allow-list entry may be used only by a recording that was skipped.
    if filter.is_none() && !skipped {
        let used: BTreeSet<_> = replays.iter().flat_map(|r| r.used.iter().copied()).collect();
        for s in allow.stale(&used) {
            ok = false;
            println!("stale: {s} covers no difference any more: remove it");
        }
    }
    println!("{}", recordings::totals(&replays, &allow));
    Ok(ok)
}
