//! `conformance explain ID`: one scenario in words.

use std::fmt::Write;

use harness::scenario::{HostAnswer, Scenario, Step};
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
            "server {} ({:?}{}{}): {}",
            server.name,
            server.transport,
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
            Step::ToolCall { expect, host, .. } => format!("host answers {:?}; expect {expect:?}", host.unwrap_or(HostAnswer::Decline)),
            Step::Request { expect, .. } | Step::RawRequest { expect, .. } => format!("expect {expect:?}"),
            Step::Fingerprint { expect, .. } => format!("expect {expect:?}"),
            _ => String::new(),
        };
        if !expect.is_empty() {
            let _ = writeln!(out, "        {expect}");
        }
    }
    out
}
