//! The `can_use_tool` exchange with an SDK host: the request the CLI sends
//! for a gated MCP call and the answers it takes (the wait itself is
//! `Host::ask`).

use serde_json::{json, Value};

use super::rules::{read_behavior, PromptAnswer};
use super::stream;

/// Why a call is put to the host; the request says so.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// No rule covers the tool: the CLI suggests a rule to allow it.
    Unlisted,
    /// An ask rule from this settings source (`RuleSource::settings_name`).
    Rule(&'static str),
    /// PreToolUse hooks said ask; `asks`: how many of them did.
    Hook { reason: Option<String>, asks: usize },
}

/// The `can_use_tool` request for a gated MCP call (shapes measured on
/// 2.1.332 and 2.1.334; `server_policy_ask_only` is true for an MCP tool no
/// rule asks for).
pub fn can_use_tool(server: &str, source: &str, tool: &str, name: &str, id: &str, arguments: &Value, why: &Why) -> Value {
    let mut r = json!({
        "subtype": "can_use_tool", "tool_name": name,
        "mcp_server": {"name": server, "source": source},
        "display_name": stream::display_name(tool), "input": arguments,
    });
    match why {
        Why::Unlisted => {
            r["permission_suggestions"] = json!([{"type": "addRules", "rules": [{"toolName": name}], "behavior": "allow", "destination": "localSettings"}]);
            r["server_policy_ask_only"] = json!(true);
        }
        Why::Rule(source) => {
            r["decision_reason_type"] = json!("rule");
            r["decision_reason_rule_source"] = json!(source);
            r["server_policy_ask_only"] = json!(false);
        }
        Why::Hook { reason, asks } => {
            // An ask without a reason was not measured: no decision_reason then.
            if let Some(reason) = reason {
                r["decision_reason"] = json!(reason);
            }
            r["decision_reason_type"] = json!("hook");
            r["decision_reason_hook_event"] = json!("PreToolUse");
            if *asks == 1 {
                r["decision_reason_hook_source"] = json!("settings");
            }
        }
    }
    r["tool_use_id"] = json!(id);
    r
}

/// Reads the host's reply (`response` of its control_response): the same
/// behavior object as the permission prompt tool's, `interrupt` included.
pub fn parse_answer(reply: Option<&Value>) -> PromptAnswer {
    match reply.filter(|r| r.get("subtype").and_then(Value::as_str) == Some("success")) {
        Some(reply) => read_behavior(reply.get("response").unwrap_or(&Value::Null)),
        None => PromptAnswer::Invalid,
    }
}

/// The tool result text of a can_use_tool the host answered with an error
/// (measured on 2.1.332 and 2.1.334; the call is refused like an invalid
/// answer otherwise).
pub fn failed_request_text(reply: &Value) -> Option<String> {
    if reply.get("subtype").and_then(Value::as_str) != Some("error") {
        return None;
    }
    let error = reply.get("error").and_then(Value::as_str).unwrap_or("");
    Some(format!("Tool permission request failed: Error: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(answer: Value) -> Value {
        json!({"subtype": "success", "request_id": "x", "response": answer})
    }

    #[test]
    fn host_answers() {
        assert_eq!(parse_answer(Some(&reply(json!({"behavior": "allow", "updatedInput": {"a": 1}})))), PromptAnswer::Allow { updated_input: Some(json!({"a": 1})) });
        assert_eq!(
            parse_answer(Some(&reply(json!({"behavior": "deny", "message": "no", "interrupt": true})))),
            PromptAnswer::Deny { message: "no".into(), interrupt: true }
        );
        assert_eq!(parse_answer(Some(&reply(json!({"behavior": "deny"})))), PromptAnswer::Invalid);
        assert_eq!(parse_answer(Some(&json!({"subtype": "error", "error": "boom"}))), PromptAnswer::Invalid);
        assert_eq!(parse_answer(None), PromptAnswer::Invalid);
    }

    #[test]
    fn can_use_tool_names_the_renamed_tool_and_its_server() {
        let r = can_use_tool("notes", "dynamic", "notes.append", "mcp__notes__notes_append", "toolu_1", &json!({}), &Why::Unlisted);
        assert_eq!(r["tool_name"], "mcp__notes__notes_append");
        assert_eq!(r["permission_suggestions"][0]["rules"][0]["toolName"], "mcp__notes__notes_append");
        assert_eq!(r["display_name"], "Notes Append");
        assert_eq!(r["server_policy_ask_only"], true);
        let rule = can_use_tool("s", "dynamic", "t", "mcp__s__t", "u", &json!({}), &Why::Rule("userSettings"));
        assert_eq!((rule["decision_reason_rule_source"].as_str(), rule["server_policy_ask_only"].as_bool()), (Some("userSettings"), Some(false)));
        assert!(rule.get("permission_suggestions").is_none());
        let hook = can_use_tool("s", "sdk", "t", "mcp__s__t", "u", &json!({}), &Why::Hook { reason: Some("R".into()), asks: 1 });
        assert_eq!((hook["decision_reason"].as_str(), hook["decision_reason_hook_source"].as_str()), (Some("R"), Some("settings")));
        assert!(hook.get("server_policy_ask_only").is_none());
        assert_eq!(failed_request_text(&json!({"subtype": "error", "error": "E"})).as_deref(), Some("Tool permission request failed: Error: E"));
        assert_eq!(failed_request_text(&json!({"subtype": "success"})), None);
    }
}
