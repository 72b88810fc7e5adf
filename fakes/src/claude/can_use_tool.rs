//! The `can_use_tool` exchange with an SDK host: the request the CLI sends
//! for a gated MCP call, the answers it takes, and what it does with other
//! lines while it waits. Shared by the session (which asks) and the SDK
//! host loop.

use serde_json::{json, Value};

use super::host::{self, Incoming};
use super::output::Output;
use super::rules::{read_behavior, PromptAnswer};
use super::stream;

/// The `can_use_tool` request for a gated MCP call (shape measured on
/// 2.1.334; `server_policy_ask_only` is true for an MCP tool asked for by
/// no rule, which is every gated call the fake makes).
pub fn can_use_tool(server: &str, source: &str, tool: &str, name: &str, id: &str, arguments: &Value) -> Value {
    json!({
        "subtype": "can_use_tool", "tool_name": name,
        "mcp_server": {"name": server, "source": source},
        "display_name": stream::display_name(tool), "input": arguments,
        "permission_suggestions": [{"type": "addRules", "rules": [{"toolName": name}], "behavior": "allow", "destination": "localSettings"}],
        "server_policy_ask_only": true, "tool_use_id": id,
    })
}

/// Reads the host's reply (`response` of its control_response): the same
/// behavior object as the permission prompt tool's, `interrupt` included.
pub fn parse_answer(reply: Option<&Value>) -> PromptAnswer {
    match reply.filter(|r| r.get("subtype").and_then(Value::as_str) == Some("success")) {
        Some(reply) => read_behavior(reply.get("response").unwrap_or(&Value::Null)),
        None => PromptAnswer::Invalid,
    }
}

/// What the CLI does with the host's other lines while it waits for an
/// answer: control requests it does not handle get their error; stdin
/// ending or a line that is not JSON stops the wait.
pub fn answer_while_waiting(out: &mut Output, incoming: Incoming) -> Option<Incoming> {
    match incoming {
        Incoming::Control { id, subtype, .. } => {
            out.line(&host::unsupported(&id, &subtype));
            None
        }
        Incoming::Eof | Incoming::Malformed(_) => Some(incoming),
        Incoming::User(_) | Incoming::Response { .. } | Incoming::Other(_) => None,
    }
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
        let r = can_use_tool("notes", "dynamic", "notes.append", "mcp__notes__notes_append", "toolu_1", &json!({}));
        assert_eq!(r["tool_name"], "mcp__notes__notes_append");
        assert_eq!(r["permission_suggestions"][0]["rules"][0]["toolName"], "mcp__notes__notes_append");
        assert_eq!(r["display_name"], "Notes Append");
    }
}
