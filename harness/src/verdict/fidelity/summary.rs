//! The judge-level facts of a trial (outcome per step, server calls,
//! launches), comparable across a fake and a real run.


use serde_json::{json, Value};

use crate::trial::Observations;

/// Provider-side facts of one trial (normalized by the caller).
pub fn summarize(obs: &Observations) -> Value {
    let wire = &obs.provider.transcript;
    // What the model was shown of a step later than its outcome was written
    // (the fake Codex: a cancelled command, at the thread's next turn).
    let later: std::collections::BTreeMap<u64, &Value> =
        wire.iter().filter(|e| e["event"] == "model_saw").filter_map(|e| Some((e["step"].as_u64()?, &e["model_saw"]))).collect();
    let outcomes: Vec<Value> = wire
        .iter()
        .filter(|e| e["event"] == "outcome")
        .map(|o| {
            let model_saw = o["step"].as_u64().and_then(|s| later.get(&s)).copied().unwrap_or(&o["model_saw"]);
            json!({
                "step": o["step"],
                "prompted": o["prompted"],
                "answer": o["answer"],
                "persist": o["persist"],
                "item_status": o["item_status"],
                "model_saw": texts(model_saw).join("\n").lines().map(|l| format!("{l}\n")).collect::<String>(),
                "blocks": if o["mcp_result"].is_null() { Value::Null } else { json!(texts(&o["mcp_result"]["content"])) },
            })
        })
        .collect();
    json!({
        "launch_error": obs.launch_error.as_ref().map(|e| e.kind.clone()),
        "provider_launches": obs.provider.launches().min(1),
        "outcomes": outcomes,
        "server_calls": obs.steps.iter().map(|s| s.server_calls).collect::<Vec<_>>(),
    })
}

fn texts(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|b| b["text"].as_str().map(String::from).unwrap_or_else(|| b.to_string())).collect(),
        Value::Null => Vec::new(),
        other => vec![other.to_string()],
    }
}

/// A readable line diff of two summaries, None when equal. What the real
/// run could not observe (null outcome fields) is not compared.
pub fn diff(recorded: &Value, fake: &Value) -> Option<String> {
    // Outcomes in step order: when a step's outcome is written (a server's
    // elicitation answered inside a call) is not what is compared.
    let by_step = |summary: &Value| {
        let mut s = summary.clone();
        if let Some(o) = s["outcomes"].as_array_mut() {
            o.sort_by_key(|o| o["step"].as_u64());
        }
        s
    };
    let (recorded, mut fake) = (&by_step(recorded), by_step(fake));
    if let (Some(real), Some(ours)) = (recorded["outcomes"].as_array(), fake["outcomes"].as_array_mut()) {
        for (r, o) in real.iter().zip(ours.iter_mut()) {
            for (k, v) in r.as_object().into_iter().flatten() {
                if v.is_null() {
                    o[k] = Value::Null;
                }
            }
        }
    }
    if *recorded == fake {
        return None;
    }
    let a = serde_json::to_string_pretty(recorded).unwrap_or_default();
    let b = serde_json::to_string_pretty(&fake).unwrap_or_default();
    Some(similar::TextDiff::from_lines(&a, &b).unified_diff().context_radius(3).header("real (recorded)", "fake").to_string())
}
