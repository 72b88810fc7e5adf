//! Reads what the fakes and the MCP servers recorded into [`Observations`]:
//! outcomes per step, server calls attributed to steps, thread policies and
//! the provider's wire. No judging here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fakes::wire::read_jsonl;
use serde_json::{json, Value};

use crate::scenario::call_arguments;
use super::{Observations, TRANSCRIPT};
use crate::scenario::{Scenario, Step};

pub(super) fn gather(scenario: &Scenario, dir: &Path, recordings: &BTreeMap<String, PathBuf>, obs: &mut Observations) {
    let codex = read_jsonl(&dir.join(TRANSCRIPT)).unwrap_or_default();
    for e in codex.iter().filter(|e| e["event"] == "outcome") {
        if let Some(i) = e["step"].as_u64().map(|s| s as usize) {
            if let Some(step) = obs.steps.get_mut(i) {
                step.outcome = Some(e.clone());
            }
        }
    }
    // Server calls, attributed by server, tool and exact arguments.
    let calls: Vec<(String, Value)> = recordings
        .iter()
        .flat_map(|(server, path)| {
            read_jsonl(path)
                .unwrap_or_default()
                .into_iter()
                .filter(|e| e["event"] == "tools/call")
                .map(move |e| (server.clone(), e))
        })
        .collect();
    // An SDK host's in-process server has no recording: the fake Claude Code
    // records each tools/call it sends that server through the host.
    let sdk_calls = codex.iter().filter(|e| e["event"] == "sdk_server_call").filter_map(|e| {
        let server = e["server"].as_str().filter(|s| !recordings.contains_key(*s))?;
        Some((server.to_string(), e.clone()))
    });
    let calls: Vec<(String, Value)> = calls.into_iter().chain(sdk_calls).collect();
    for (i, step) in scenario.steps.iter().enumerate() {
        if let Step::ToolCall { server, tool, arguments, host_edits, .. } = step {
            // The host's edit replaces the model's arguments.
            let args = call_arguments(i, host_edits.as_ref().or(arguments.as_ref()));
            obs.steps[i].server_calls = calls
                .iter()
                .filter(|(s, e)| s == server.trim() && e["tool"] == json!(tool.trim()) && e["arguments"] == args)
                .count() as u64;
        }
    }
    obs.provider.transcript = codex;
}
