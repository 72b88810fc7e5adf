//! The `can_use_tool` exchange with an SDK host: the request the CLI sends
//! for a gated MCP call, the answers it takes, and what it does with other
//! lines while it waits. Shared by the session (which asks) and the SDK
//! host loop.

use serde_json::{json, Value};

use super::host::{self, Incoming};
use super::output::Output;
use super::stream;

/// What the host answered a `can_use_tool` with.
#[derive(Debug, Clone, PartialEq)]
pub enum HostAnswer {
    Allow { updated_input: Option<Value> },
    Deny { message: String, interrupt: bool },
    /// An error reply, or a shape the CLI does not take (unmeasured: treated
    /// like an invalid permission prompt tool answer).
    Invalid,
}

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

/// Reads the host's reply (`response` of its control_response).
pub fn parse_answer(reply: Option<&Value>) -> HostAnswer {
    let Some(reply) = reply.filter(|r| r.get("subtype").and_then(Value::as_str) == Some("success")) else {
        return HostAnswer::Invalid;
    };
    let answer = reply.get("response").unwrap_or(&Value::Null);
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => match answer.get("updatedInput") {
            None | Some(Value::Null) => HostAnswer::Allow { updated_input: None },
            Some(v) if v.is_object() => HostAnswer::Allow { updated_input: Some(v.clone()) },
            Some(_) => HostAnswer::Invalid,
        },
        Some("deny") => match answer.get("message").and_then(Value::as_str) {
            Some(m) => HostAnswer::Deny { message: m.to_string(), interrupt: answer.get("interrupt") == Some(&json!(true)) },
            None => HostAnswer::Invalid,
        },
        _ => HostAnswer::Invalid,
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
        assert_eq!(parse_answer(Some(&reply(json!({"behavior": "allow", "updatedInput": {"a": 1}})))), HostAnswer::Allow { updated_input: Some(json!({"a": 1})) });
        assert_eq!(
            parse_answer(Some(&reply(json!({"behavior": "deny", "message": "no", "interrupt": true})))),
            HostAnswer::Deny { message: "no".into(), interrupt: true }
        );
        assert_eq!(parse_answer(Some(&reply(json!({"behavior": "deny"})))), HostAnswer::Invalid);
        assert_eq!(parse_answer(Some(&json!({"subtype": "error", "error": "boom"}))), HostAnswer::Invalid);
        assert_eq!(parse_answer(None), HostAnswer::Invalid);
    }

    #[test]
    fn can_use_tool_names_the_renamed_tool_and_its_server() {
        let r = can_use_tool("notes", "dynamic", "notes.append", "mcp__notes__notes_append", "toolu_1", &json!({}));
        assert_eq!(r["tool_name"], "mcp__notes__notes_append");
        assert_eq!(r["permission_suggestions"][0]["rules"][0]["toolName"], "mcp__notes__notes_append");
        assert_eq!(r["display_name"], "Notes Append");
    }
}
