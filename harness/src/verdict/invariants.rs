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
use fakes::wire::process_of;
use serde_json::Value;

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
            expected: format!("done within {} s", trial_timeout().as_secs_f64()),
            actual: "timed out; provider processes were killed".into(),
        });
    }
    let mut violation = |v: String| {
        out.push(Mismatch { at: "invariant".into(), field: "recordings".into(), expected: "no violation".into(), actual: v })
    };
    // Each server request must be answered at most once. Request ids are
    // per provider process (a relaunched app-server counts from 0 again).
    for ((process, id), n) in answers(&obs.provider.transcript).into_iter().filter(|(_, n)| *n > 1) {
        let of = if process == "null" { String::new() } else { format!(" (provider process {process})") };
        violation(format!("the driver answered server request {id}{of} {n} times"));
    }
    // Every wire message must be one the real Codex of this version sends or accepts.
    if let (Provider::Codex, Some(v)) = (scenario.provider, version) {
        for problem in crate::schema::check_transcript(&v.to_string(), &obs.provider.transcript) {
            violation(format!("schema: {problem}"));
        }
    }
    // Secrets must not be written anywhere the harness can see, nor said in
    // the driver's own words (which reach the reports).
    let dir = &obs.run.path;
    let said = obs.launch_error.iter().map(|e| ("launch".to_string(), e)).chain(
        obs.steps.iter().enumerate().filter_map(|(i, o)| o.driver.error.as_ref().map(|e| (format!("step {}", i + 1), e))),
    );
    for (at, e) in said {
        if obs.run.secrets.iter().any(|s| leaks(&e.message, s) || leaks(&e.kind, s)) {
            violation(format!("the driver's error at {at} carries a secret value"));
        }
    }
    if obs.run.secrets.is_empty() {
        return out;
    }
    // Each file read once, for every form of every secret.
    let secrets: Vec<Vec<String>> = obs.run.secrets.iter().map(|s| forms(s)).collect();
    for path in files_below(dir) {
        if path.extension().is_some_and(|e| e == "token") {
            continue; // the fake server's own copy of the expected token
        }
        let Ok(bytes) = std::fs::read(&path) else { continue };
        for written in &secrets {
            if written.iter().any(|f| contains(&bytes, f.as_bytes())) {
                violation(format!("a secret value was written to {}", path.strip_prefix(dir).unwrap_or(&path).display()));
            }
        }
    }
    out
}

/// How many replies the client sent to each server request, by (provider
/// process, request id as JSON text).
fn answers(transcript: &[Value]) -> BTreeMap<(String, String), usize> {
    let mut replies = BTreeMap::new();
    for e in transcript {
        if e["dir"] == "c2s" && e["msg"].get("method").is_none() {
            if let Some(id) = e["msg"].get("id") {
                *replies.entry((process_of(e).to_string(), id.to_string())).or_default() += 1;
            }
        }
    }
    replies
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

/// A secret as written and as JSON escapes it.
pub fn forms(secret: &str) -> Vec<String> {
    let escaped = serde_json::to_string(secret).unwrap_or_default();
    let escaped = escaped.trim_matches('"').to_string();
    if escaped == secret { vec![secret.to_string()] } else { vec![secret.to_string(), escaped] }
}

fn leaks(text: &str, secret: &str) -> bool {
    forms(secret).iter().any(|f| !f.is_empty() && text.contains(f.as_str()))
}

/// `text` with every form of every secret replaced, for anything a person
/// or a report reads.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        for f in forms(s) {
            if !f.is_empty() {
                out = out.replace(f.as_str(), "[REDACTED]");
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}


#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;

    fn scenario_text() -> String {
        crate::scenario::sample("write_file", "prompt", "{ prompted = true }", "")
    }

    fn duplicates(transcript: Vec<Value>) -> Vec<String> {
        let scenario = Scenario::parse(Path::new("t.toml"), &scenario_text()).unwrap();
        let mut obs = Observations::default();
        obs.provider.transcript = transcript;
        check(&scenario, None, &obs).into_iter().map(|m| m.actual).collect()
    }

    fn answer(pid: u32, id: u64) -> Value {
        json!({"dir": "c2s", "pid": pid, "msg": {"id": id, "result": {"action": "accept", "content": {}}}})
    }

    #[test]
    fn request_ids_of_a_relaunched_provider_are_its_own() {
        // Each app-server numbers its requests from 0: request 0 of the first
        // process and request 0 of the next, each answered once.
        let t = vec![
            json!({"event": "launch", "pid": 10}),
            json!({"dir": "s2c", "pid": 10, "msg": {"id": 0, "method": "mcpServer/elicitation/request"}}),
            answer(10, 0),
            json!({"event": "launch", "pid": 11}),
            json!({"dir": "s2c", "pid": 11, "msg": {"id": 0, "method": "mcpServer/elicitation/request"}}),
            answer(11, 0),
        ];
        assert_eq!(duplicates(t), Vec::<String>::new());
    }

    #[test]
    fn a_request_answered_twice_in_one_process_is_a_violation() {
        let t = vec![answer(10, 0), answer(11, 0), answer(11, 0)];
        assert_eq!(duplicates(t), ["the driver answered server request 0 (provider process 11) 2 times"]);
    }
}
