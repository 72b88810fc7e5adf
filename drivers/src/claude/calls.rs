//! The tool calls of a turn, read off Claude Code's stream-json messages (the
//! same in print mode and SDK host mode): each `tool_use` block of an
//! assistant message is pending until the `tool_result` that answers it.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::projection::declared_tool;
use crate::launch::{ToolCallRecord, TurnReport};
use crate::spec::ServerSet;

/// Calls announced and not yet answered, by tool_use id.
#[derive(Debug, Default)]
pub struct Calls {
    pending: BTreeMap<String, (String, String)>,
}

impl Calls {
    /// Takes one stream message; a tool result completes its call in
    /// `report`. `bridge` names the driver's own server (not in `set`).
    pub fn observe(&mut self, msg: &Value, set: &ServerSet, bridge: Option<&str>, report: &mut TurnReport) {
        for block in blocks(msg, "assistant") {
            if block["type"] == "tool_use" {
                let name = block["name"].as_str().unwrap_or("");
                let (server, tool) = split_tool_name(name, set, bridge);
                self.pending.insert(block["id"].as_str().unwrap_or("").to_string(), (server, tool));
            }
        }
        for block in blocks(msg, "user") {
            if block["type"] == "tool_result" {
                let id = block["tool_use_id"].as_str().unwrap_or("").to_string();
                let (server, tool) = self.pending.remove(&id).unwrap_or_default();
                let failed = block["is_error"] == json!(true);
                report.tool_calls.push(ToolCallRecord {
                    call_id: id,
                    server,
                    tool,
                    status: if failed { "failed" } else { "completed" }.into(),
                    error: failed.then(|| text_of(&block["content"])),
                });
            }
        }
    }
}

fn blocks<'a>(msg: &'a Value, kind: &str) -> Vec<&'a Value> {
    if msg["type"] != kind {
        return Vec::new();
    }
    msg.pointer("/message/content").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default()
}

/// Claude Code's renamed `mcp__S__T` -> the declared (server, tool), else
/// the renamed tool part of a known server.
fn split_tool_name(name: &str, set: &ServerSet, bridge: Option<&str>) -> (String, String) {
    declared_tool(set, bridge, name).map(|(server, tool, _)| (server, tool)).unwrap_or_else(|| (String::new(), name.to_string()))
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{ApprovalPolicy, McpServerSpec, Transport};

    #[test]
    fn a_result_completes_the_call_its_tool_use_announced() {
        let spec = McpServerSpec {
            name: "notes".into(),
            transport: Transport::Stdio { command: "x".into(), args: vec![], env: Default::default() },
            reason: "r".into(),
            tools: [("notes.append".to_string(), ApprovalPolicy::Approve)].into(),
        };
        let set = ServerSet::build(vec![spec]).unwrap();
        let mut calls = Calls::default();
        let mut report = TurnReport::default();
        let use_ = |id: &str, name: &str| json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": id, "name": name, "input": {}}]}});
        let result = |id: &str, error: bool| {
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": id, "is_error": error, "content": [{"type": "text", "text": "no"}]}]}})
        };
        calls.observe(&use_("t1", "mcp__notes__notes_append"), &set, Some("host"), &mut report);
        calls.observe(&use_("t2", "mcp__host__report"), &set, Some("host"), &mut report);
        calls.observe(&result("t2", false), &set, Some("host"), &mut report);
        calls.observe(&result("t1", true), &set, Some("host"), &mut report);
        let got: Vec<_> = report.tool_calls.iter().map(|c| (c.call_id.as_str(), c.server.as_str(), c.tool.as_str(), c.status.as_str())).collect();
        assert_eq!(got, [("t2", "host", "report", "completed"), ("t1", "notes", "notes.append", "failed")]);
        assert_eq!(report.tool_calls[1].error.as_deref(), Some("no"));
    }
}
