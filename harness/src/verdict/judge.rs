//! Compares what a trial observed with what its scenario expects, step by
//! step. The checks every trial must pass whatever it expects live in
//! [`super::invariants`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::Mismatch;
use crate::scenario::design::{meets, REFUSALS, REFUSAL_SEEN};
use crate::scenario::{Scenario, Step};
use crate::trial::Observations;

pub fn judge(scenario: &Scenario, obs: &Observations) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut push = |at: &str, field: &str, expected: String, actual: String| {
        out.push(Mismatch { at: at.to_string(), field: field.to_string(), expected, actual });
    };
    for p in &obs.stray_prompts {
        push("host", "prompt", "only prompts the steps expect".into(), p.describe());
    }
    match (&scenario.launch.error, &obs.launch_error) {
        (Some(kind), Some(err)) if &err.kind == kind => {
            if obs.provider.launches() > 0 {
                push("launch", "provider processes", "0 (refused before launch)".into(), obs.provider.launches().to_string());
            }
        }
        (Some(kind), got) => push("launch", "error", kind.clone(), describe_failure(got)),
        (None, Some(err)) => push("launch", "error", "none".into(), format!("{}: {}", err.kind, err.message)),
        (None, None) => {}
    }
    // Hosts declare only `ask` or `auto-approve`; neither may become Codex
    // `never`, which 0.148+ turns into an in-CLI denial nobody is asked about.
    for policy in obs.provider.approval_policies() {
        if policy == "never" {
            push("provider", "approval_policy", "not `never`".into(), policy.to_string());
        }
    }
    if let Some(expected) = &scenario.provider_saw.approval_policy {
        for policy in obs.provider.approval_policies() {
            let kind = match policy {
                Value::String(s) => s.clone(),
                Value::Object(o) => o.keys().next().cloned().unwrap_or_default(),
                other => other.to_string(),
            };
            if &kind != expected {
                push("provider", "approval_policy", expected.clone(), policy.to_string());
            }
        }
    }
    if let Some(expected) = scenario.provider_saw.experimental_api {
        for got in obs.provider.experimental_api() {
            if got != expected {
                push("provider", "experimental_api", expected.to_string(), got.to_string());
            }
        }
    }
    let mut fingerprints: BTreeMap<&str, &str> = BTreeMap::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let o = &obs.steps[i];
        let at = format!("step {} ({})", i + 1, describe_step(step));
        if let Some(e) = &o.driver.error {
            push(&at, "driver", "no error".into(), format!("{}: {}", e.kind, e.message));
        }
        let outcome = o.outcome.as_ref();
        let field = |k: &str| outcome.and_then(|v| v.get(k)).cloned().unwrap_or(Value::Null);
        // A real run may leave a fact unobservable (null in a derived outcome).
        let unknown = |k: &str| outcome.is_some_and(|o| o["derived"] == true && o[k].is_null());
        let mut check = |name: &str, expected: Option<String>, actual: String| {
            if let Some(e) = expected {
                if e != actual {
                    push(&at, name, e, actual);
                }
            }
        };
        match step {
            Step::ToolCall { expect, .. } => {
                let made = outcome.is_some();
                check("made", expect.made.map(|b| b.to_string()), made.to_string());
                if !unknown("prompted") {
                    check("prompted", expect.prompted.map(|b| b.to_string()), if made { (field("prompted") == true).to_string() } else { "no call made".into() });
                }
                check("host_asked", expect.host_asked.map(|b| b.to_string()), o.host.asked.to_string());
                // Without `prompted`, a step leaves open whether a prompt comes
                // (a tool approved per tool, or a prompt accepted, may both be
                // right); `answer` and `persisted` then hold only for a prompt.
                let answered = expect.prompted.is_some() || field("prompted") == true;
                if answered && !unknown("answer") {
                    check("answer", expect.answer.clone(), refusal(&expect.answer, text_or(field("answer"), "none"), REFUSALS));
                }
                if answered {
                    check("persisted", expect.persisted.map(|b| b.to_string()), (!field("persist").is_null()).to_string());
                }
                check("server_calls", expect.server_calls.map(|n| n.to_string()), o.server_calls.to_string());
                check("item", expect.item.clone(), text_or(field("item_status"), "none"));
                let saw = model_saw(&field("model_saw"), &field("answer"), made);
                check("model_saw", expect.model_saw.clone(), refusal(&expect.model_saw, saw, REFUSAL_SEEN));
                let blocks = field("mcp_result")["content"].as_array().cloned().unwrap_or_default();
                let unknown_blocks = unknown("mcp_result");
                let texts: Vec<String> = blocks.iter().map(|b| b["text"].as_str().unwrap_or("<non-text block>").to_string()).collect();
                if !unknown_blocks {
                    check("blocks", expect.blocks.as_ref().map(|b| format!("{b:?}")), format!("{texts:?}"));
                    let annotated = blocks.iter().any(|b| b.get("annotations").is_some());
                    check("annotated", expect.annotated.map(|b| b.to_string()), annotated.to_string());
                }
                check("driver_recorded", expect.driver_recorded.map(|b| b.to_string()), o.driver.recorded.to_string());
                check("interrupted", expect.interrupted.map(|b| b.to_string()), o.host.interrupted.to_string());
                check("oauth_required", expect.oauth_required.map(|b| b.to_string()), o.host.oauth_required.to_string());
                check("bound_row", expect.bound_row.clone(), o.host.bound_row.clone().unwrap_or_else(|| "no binding seen".into()));
            }
            Step::Request { expect, .. } | Step::RawRequest { expect, .. } => {
                check("answer", expect.answer.clone(), refusal(&expect.answer, text_or(field("answer"), "none"), REFUSALS));
                check("host_asked", expect.host_asked.map(|b| b.to_string()), o.host.asked.to_string());
            }
            Step::Fingerprint { label, expect } => {
                let fp = o.driver.fingerprint.as_deref().unwrap_or("");
                if let Some(other) = &expect.same_as {
                    let theirs = fingerprints.get(other.as_str()).copied().unwrap_or("");
                    if fp.is_empty() || fp != theirs {
                        push(&at, "fingerprint", format!("same as `{other}` ({theirs})"), fp.to_string());
                    }
                }
                if let Some(other) = &expect.differs_from {
                    let theirs = fingerprints.get(other.as_str()).copied().unwrap_or("");
                    if fp.is_empty() || fp == theirs {
                        push(&at, "fingerprint", format!("different from `{other}` ({theirs})"), fp.to_string());
                    }
                }
                fingerprints.insert(label, fp);
            }
            _ => {}
        }
    }
    out
}

fn describe_failure(f: &Option<crate::driver::Failure>) -> String {
    match f {
        Some(e) => format!("{}: {}", e.kind, e.message),
        None => "the driver launched".into(),
    }
}

pub fn describe_step(step: &Step) -> String {
    match step {
        Step::ToolCall { server, tool, .. } => format!("tool_call {}.{}", server.trim(), tool.trim()),
        Step::Request { request, .. } => format!("request {}", request.as_str()),
        Step::RawRequest { method, .. } => format!("raw_request {method}"),
        Step::Attach { server } => format!("attach {server}"),
        Step::Detach { server } => format!("detach {server}"),
        Step::Resume {} => "resume".into(),
        Step::RotateSecret { server } => format!("rotate_secret {server}"),
        Step::SetPolicy { server, tool, .. } => format!("set_policy {server}.{tool}"),
        Step::ReorderServers {} => "reorder_servers".into(),
        Step::Fingerprint { label, .. } => format!("fingerprint {label}"),
        Step::SetCustomParameters { target, .. } => format!("set_custom_parameters {target}"),
        Step::PermissionMode { mode } => format!("permission_mode {mode}"),
    }
}

fn text_or(v: Value, none: &str) -> String {
    match v {
        Value::String(s) => s,
        Value::Null => none.to_string(),
        other => other.to_string(),
    }
}

/// Classifies what the model received for a call.
/// `actual`, or the expected `refused` when it is one of `refusals`.
fn refusal(expected: &Option<String>, actual: String, refusals: &[&str]) -> String {
    match expected {
        Some(e) if meets(e, &actual, refusals) => e.clone(),
        _ => actual,
    }
}

fn model_saw(output: &Value, answer: &Value, made: bool) -> String {
    if !made {
        return "no call made".into();
    }
    let text = match output {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        Value::Object(_) => output.to_string(),
        _ => String::new(),
    };
    use fakes::claude::profile::{NOT_GRANTED, NO_SUCH_TOOL, TIMED_OUT};
    use fakes::codex::profile::{CANCELLED, NEVER_DENIAL, REJECTED, UNSUPPORTED_CALL};
    let class = if text.contains(UNSUPPORTED_CALL) || text.contains(NO_SUCH_TOOL) {
        "unsupported"
    } else if text.contains(NOT_GRANTED) {
        "not-granted"
    } else if text.contains(TIMED_OUT) {
        "timeout"
    } else if answer == "deny" || answer == "invalid" {
        // Claude Code shows the permission tool's own message.
        "rejected"
    } else if text.contains(REJECTED) {
        "rejected"
    } else if text.contains(CANCELLED) {
        "cancelled"
    } else if text.contains(NEVER_DENIAL) {
        "denied-never"
    } else if text.contains(fakes::mcp::catalog::RESULT_MARK) {
        "result"
    } else {
        "error"
    };
    class.to_string()
}
