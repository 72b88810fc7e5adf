//! `conformance explain ID`: one scenario in words.

use std::fmt::Write;

use harness::scenario::{HostAnswer, Scenario, Step, TransportKind};
use harness::verdict::describe_step;

pub fn explain(s: &Scenario) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", s.id, s.title);
    let _ = writeln!(out, "file: {}", s.path.display());
    let _ = writeln!(out, "covers: {}   provider: {} {}   global policy: {}", s.covers.join(", "), s.provider.as_str(), s.versions, s.policy.global);
    if !s.requires.is_empty() {
        let _ = writeln!(out, "requires: {}", s.requires.join(", "));
    }
    let _ = writeln!(out, "caught by: {}", s.caught_by.join(", "));
    for server in &s.servers {
        let tools: Vec<String> = server.tools.iter().map(|(t, p)| format!("{t}={}", p.approval_mode)).collect();
        let _ = writeln!(
            out,
            "server {} ({}{}{}): {}",
            server.name,
            match server.transport {
                TransportKind::Stdio => "stdio",
                TransportKind::Http => "streamable HTTP",
            },
            if server.attached { "" } else { ", call-scoped" },
            server.bearer_token_env.as_ref().map(|v| format!(", bearer ${v}")).unwrap_or_default(),
            if tools.is_empty() { "no per-tool policy".into() } else { tools.join(", ") }
        );
    }
    if let Some(b) = &s.bridge {
        let _ = writeln!(out, "bridge {}: host tools {}", b.server, b.tools.keys().cloned().collect::<Vec<_>>().join(", "));
    }
    if let Some(e) = &s.launch.error {
        let _ = writeln!(out, "launch must fail with `{e}`, before any provider process starts");
    }
    for (i, step) in s.steps.iter().enumerate() {
        let _ = writeln!(out, "step {}: {}", i + 1, describe_step(step));
        let expect = match step {
            Step::ToolCall { expect, host, host_edits, fail_closed, .. } => {
                let host = match host.unwrap_or(HostAnswer::Decline) {
                    HostAnswer::Accept => "accept",
                    HostAnswer::Decline => "decline",
                    HostAnswer::Cancel => "cancel",
                };
                let edits = host_edits.as_ref().map(|e| format!(" with its own input {}", harness::scenario::toml_to_json(e))).unwrap_or_default();
                let mut line = format!("if asked, the host answers {host}{edits}; expect {}", words(&tool_expect_fields(expect)));
                if let Some(fc) = fail_closed {
                    line.push_str(&format!("\n        a fail-closed driver instead: {}", words(&tool_expect_fields(fc))));
                }
                line
            }
            Step::Request { expect, .. } | Step::RawRequest { expect, .. } => {
                format!("expect {}", words(&[("answer", expect.answer.clone()), ("host asked", expect.host_asked.map(|b| b.to_string()))]))
            }
            Step::Fingerprint { expect, .. } => format!(
                "expect {}",
                words(&[("the same as", expect.same_as.clone()), ("different from", expect.differs_from.clone())])
            ),
            _ => String::new(),
        };
        if !expect.is_empty() {
            let _ = writeln!(out, "        {expect}");
        }
    }
    out
}

fn tool_expect_fields(e: &harness::scenario::ToolCallExpect) -> Vec<(&'static str, Option<String>)> {
    let b = |v: Option<bool>| v.map(|b| b.to_string());
    vec![
        ("made", b(e.made)),
        ("prompted", b(e.prompted)),
        ("host asked", b(e.host_asked)),
        ("answer", e.answer.clone()),
        ("persisted", b(e.persisted)),
        ("server calls", e.server_calls.map(|n| n.to_string())),
        ("item", e.item.clone()),
        ("model saw", e.model_saw.clone()),
        ("blocks", e.blocks.as_ref().map(|b| b.join(" | "))),
        ("annotated", b(e.annotated)),
        ("driver recorded", b(e.driver_recorded)),
        ("interrupted", b(e.interrupted)),
        ("oauth required", b(e.oauth_required)),
        ("bound row", e.bound_row.clone()),
    ]
}

/// `prompted false, server calls 1`: only the fields a step checks.
fn words(fields: &[(&str, Option<String>)]) -> String {
    let set: Vec<String> = fields.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}"))).collect();
    if set.is_empty() { "nothing".into() } else { set.join(", ") }
}
