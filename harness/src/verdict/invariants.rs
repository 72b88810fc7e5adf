//! What every trial must keep, whatever its scenario expects: it finished in
//! time, no server request was answered twice, every wire message is one the
//! real provider version sends or accepts, and no secret value was written
//! anywhere the harness can see.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Mismatch;
use crate::limits::trial_timeout;
use crate::scenario::{Provider, Scenario};
use crate::trial::Observations;
use fakes::version::Version;

pub fn check(scenario: &Scenario, version: Option<Version>, obs: &Observations) -> Vec<Mismatch> {
    let mut out = Vec::new();
    if let Some(e) = &obs.run.setup_error {
        out.push(Mismatch { at: "harness".into(), field: "setup".into(), expected: "a usable run".into(), actual: e.clone() });
        return out;
    }
    if obs.run.timed_out {
        out.push(Mismatch {
            at: "trial".into(),
            field: "time".into(),
            expected: format!("done within {:?}", trial_timeout()),
            actual: "timed out; provider processes were killed".into(),
        });
    }
    let mut violation = |v: String| {
        out.push(Mismatch { at: "invariant".into(), field: "recordings".into(), expected: "no violation".into(), actual: v })
    };
    // Each server request must be answered at most once.
    let mut replies: BTreeMap<String, usize> = BTreeMap::new();
    for e in &obs.provider.transcript {
        if e["dir"] == "c2s" && e["msg"].get("method").is_none() {
            if let Some(id) = e["msg"].get("id") {
                *replies.entry(id.to_string()).or_default() += 1;
            }
        }
    }
    for (id, n) in replies.iter().filter(|(_, n)| **n > 1) {
        violation(format!("the driver answered server request {id} {n} times"));
    }
    // Every wire message must be one the real Codex of this version sends or accepts.
    if let (Provider::Codex, Some(v)) = (scenario.provider, version) {
        for problem in crate::schema::check_transcript(&v.to_string(), &obs.provider.transcript) {
            violation(format!("schema: {problem}"));
        }
    }
    // Secrets must not be written anywhere the harness can see.
    let dir = &obs.run.path;
    for secret in &obs.run.secrets {
        for path in files_below(dir) {
            if path.extension().is_some_and(|e| e == "token") {
                continue; // the fake server's own copy of the expected token
            }
            if std::fs::read(&path).is_ok_and(|b| contains(&b, secret.as_bytes())) {
                violation(format!("a secret value was written to {}", path.strip_prefix(dir).unwrap_or(&path).display()));
            }
        }
    }
    out
}

fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(entries) = std::fs::read_dir(&d) {
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push(p);
                }
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

