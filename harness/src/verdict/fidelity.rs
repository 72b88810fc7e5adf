//! Fidelity of the fakes: a trial's recordings reduced to what the approval
//! behaviour is about, normalized (ids, timings, paths), so a run on the
//! fake can be compared with a recorded run on the real binary.

use std::path::Path;

use fakes::wire::read_jsonl;
use serde_json::{json, Value};

use crate::trial::{Observations, TRANSCRIPT};

/// Provider-side facts of one trial, comparable across fake and real runs.
pub fn summarize(dir: &Path, obs: &Observations) -> Value {
    let wire = read_jsonl(&dir.join(TRANSCRIPT)).unwrap_or_default();
    let outcomes: Vec<Value> = wire
        .iter()
        .filter(|e| e["event"] == "outcome")
        .map(|o| {
            json!({
                "step": o["step"],
                "prompted": o["prompted"],
                "answer": o["answer"],
                "persist": o["persist"],
                "item_status": o["item_status"],
                "model_saw": normalize_text(&texts(&o["model_saw"]).join("\n")),
                "blocks": if o["mcp_result"].is_null() { Value::Null } else { json!(texts(&o["mcp_result"]["content"])) },
            })
        })
        .collect();
    // The approval-relevant part of the wire, in order.
    let mut events = Vec::new();
    for e in &wire {
        let m = &e["msg"];
        let method = m["method"].as_str().unwrap_or("");
        match (e["dir"].as_str(), method) {
            (Some("s2c"), _) if m.get("id").is_some() && !method.is_empty() => {
                let kind = m.pointer("/params/_meta/codex_approval_kind").and_then(Value::as_str).unwrap_or("");
                events.push(format!("request {method} {kind}").trim_end().to_string());
            }
            (Some("s2c"), "item/completed") if m["params"]["item"]["type"] == "mcpToolCall" => {
                let it = &m["params"]["item"];
                let err = it["error"]["message"].as_str().map(|e| format!(" ({})", first_line(e))).unwrap_or_default();
                events.push(format!("item {}.{} {}{err}", str(&it["server"]), str(&it["tool"]), str(&it["status"])));
            }
            (Some("s2c"), "turn/completed") => events.push("turn completed".into()),
            _ => {}
        }
    }
    json!({
        "launch_error": obs.launch_error.as_ref().map(|e| e.kind.clone()),
        "provider_launches": obs.provider.launches().min(1),
        "outcomes": outcomes,
        "server_calls": obs.steps.iter().map(|s| s.server_calls).collect::<Vec<_>>(),
        "wire": events,
    })
}

fn str(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn texts(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|b| b["text"].as_str().map(String::from).unwrap_or_else(|| b.to_string())).collect(),
        Value::Null => Vec::new(),
        other => vec![other.to_string()],
    }
}

/// Wall-clock numbers vary run to run.
fn normalize_text(s: &str) -> String {
    let mut out = String::new();
    for line in s.lines() {
        if let Some(rest) = line.strip_prefix("Wall time: ") {
            let unit = rest.split_whitespace().nth(1).unwrap_or("seconds");
            out.push_str(&format!("Wall time: <T> {unit}"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// A readable line diff of two summaries, None when equal.
pub fn diff(recorded: &Value, fake: &Value) -> Option<String> {
    // What the real run could not observe (null outcome fields) is not compared.
    let mut fake = fake.clone();
    if let (Some(real), Some(ours)) = (recorded["outcomes"].as_array(), fake["outcomes"].as_array_mut()) {
        for (r, o) in real.iter().zip(ours.iter_mut()) {
            for (k, v) in r.as_object().into_iter().flatten() {
                if v.is_null() {
                    o[k] = Value::Null;
                }
            }
        }
    }
    let fake = &fake;
    if recorded == fake {
        return None;
    }
    let a = serde_json::to_string_pretty(recorded).unwrap_or_default();
    let b = serde_json::to_string_pretty(fake).unwrap_or_default();
    Some(
        similar::TextDiff::from_lines(&a, &b)
            .unified_diff()
            .context_radius(3)
            .header("real (recorded)", "fake")
            .to_string(),
    )
}
