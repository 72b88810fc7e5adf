//! `conformance record --out DIR`: the reference driver on every cached real
//! binary, one normalized recording per trial:
//! `OUT/<provider>/<version>/<scenario>.json` (`<version>+tool-search` for
//! Claude Code's tool search on). `conformance fidelity`: every
//! recording replayed on the fake and compared message by message.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use fakes::version::Version;
use harness::plan;
use harness::recordings::{self, Replay};
use harness::runner::run_with;
use harness::scenario::Scenario;
use harness::source::DriverSource;
use harness::trial::Fakes;
use harness::verdict::fidelity::Recording;
use harness::verdict::{describe, Verdict};

/// Ok(any trial failed), or Err(message) for bad input.
pub fn record(out: &Path, scenarios: &[Arc<Scenario>], versions: &[Version], fakes: &Fakes) -> Result<bool, String> {
    if fakes.real.is_empty() && fakes.real_only {
        return Err("no real binaries cached: run scripts/fetch-provider.sh codex VERSION first".into());
    }
    let mut failed = false;
    for t in plan::trials(scenarios, &[DriverSource::reference()], versions) {
        let (s, v) = (&t.scenario, t.target.version);
        let outcome = run_with(s, t.target, &mut harness::reference::ReferenceDriver::new(), fakes);
        let name = t.name();
        let verdict = match &outcome.verdict {
            Verdict::Skip(reason) => {
                println!("skip  {name}  ({reason})");
                continue;
            }
            Verdict::Pass => "pass",
            other => {
                failed = true;
                other.mismatches().iter().for_each(|m| println!("      {}", describe(m)));
                "fail"
            }
        };
        let Some(v) = v else { continue };
        let dir = out.join(s.provider.as_str()).join(format!("{v}{}", t.target.tool_search.suffix()));
        let file = dir.join(format!("{}.json", s.id));
        let recording = Recording {
            scenario: s.id.clone(),
            provider: s.provider.as_str().to_string(),
            version: v.to_string(),
            tool_search: t.target.tool_search == plan::ToolSearch::On,
            driver: "reference".into(),
            verdict: verdict.into(),
            summary: outcome.capture.summary,
            conversations: outcome.capture.conversations,
        };
        std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(&file, recording.to_text()))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        println!("{verdict:5} {name} -> {}", file.display());
    }
    Ok(failed)
}

/// Ok(true) when every recording matches within the allow-list and no
/// entry is stale; Err(message) for bad input.
pub fn fidelity(root: &Path, filter: Option<&str>, jobs: usize, fakes: &Fakes) -> Result<bool, String> {
    let allow = recordings::allow_list(root)?;
    let (all, broken) = plan::embedded();
    if let Some(e) = broken.first() {
        return Err(e.to_string());
    }
    let scenarios: BTreeMap<String, Arc<Scenario>> = all.into_iter().map(|s| (s.id.clone(), Arc::new(s))).collect();
    let files: Vec<_> = recordings::files(root).into_iter().filter(|f| filter.is_none_or(|t| recordings::trial_name(f).contains(t))).collect();
    let mut ok = true;
    let results = harness::pool::map_ordered(&files, jobs, |f| recordings::replay(f, &scenarios, &allow, fakes), |i, r| match r {
        Ok(r) => match r.failure() {
            Some(why) => println!("FAIL {}\n{why}", recordings::trial_name(&files[i])),
            None => println!("ok   {}", recordings::trial_name(&files[i])),
        },
        Err(e) => println!("FAIL {}: {e}", recordings::trial_name(&files[i])),
    });
    let replays: Vec<&Replay> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    ok &= replays.len() == results.len() && replays.iter().all(|r| r.failure().is_none());
    if filter.is_none() {
        let used: BTreeSet<_> = replays.iter().flat_map(|r| r.used.iter().copied()).collect();
        for s in allow.stale(&used) {
            ok = false;
            println!("stale: {s} covers no difference any more: remove it");
        }
    }
    println!("{}", recordings::totals(&replays, &allow));
    Ok(ok)
}
