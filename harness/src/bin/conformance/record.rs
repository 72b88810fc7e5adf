//! `conformance record --out DIR`: the reference driver on every cached real
//! binary, one normalized recording per trial:
//! `OUT/<provider>/<version>/<scenario>.json`.

use std::path::Path;
use std::sync::Arc;

use fakes::version::Version;
use harness::plan;
use harness::runner::run_with;
use harness::scenario::Scenario;
use harness::source::DriverSource;
use harness::trial::Fakes;
use harness::verdict::{describe, Verdict};

/// Ok(any trial failed), or Err(message) for bad input.
pub fn record(out: &Path, scenarios: &[Arc<Scenario>], versions: &[Version], fakes: &Fakes) -> Result<bool, String> {
    if fakes.real.is_empty() {
        return Err("no real binaries cached: run scripts/fetch-provider.sh codex VERSION first".into());
    }
    let mut failed = false;
    for t in plan::trials(scenarios, &[DriverSource::reference()], versions) {
        let (s, v) = (&t.scenario, t.version);
        let outcome = run_with(s, v, &mut harness::reference::ReferenceDriver::new(), fakes);
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
        let dir = out.join(s.provider.as_str()).join(v.to_string());
        let file = dir.join(format!("{}.json", s.id));
        let doc = serde_json::json!({"scenario": s.id, "provider": s.provider.as_str(), "version": v.to_string(),
                                     "driver": "reference", "verdict": verdict, "summary": outcome.summary});
        std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        println!("{verdict:5} {name} -> {}", file.display());
    }
    Ok(failed)
}
