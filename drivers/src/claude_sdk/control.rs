//! Claude Code's SDK control protocol on the CLI's stdin and stdout, as the
//! Agent SDKs speak it: the host's initialize and user messages, the
//! CLI's requests (`can_use_tool` and others) and the host's replies.

use serde_json::{json, Map, Value};

/// A line from the CLI, by what the host must do with it.
#[derive(Debug, Clone, PartialEq)]
pub enum FromCli {
    /// A gated call: answer with a behavior object.
    CanUseTool { id: String, request: Value },
    /// A server's own elicitation (a form or a page): answer with an action.
    Elicitation { id: String, request: Value },
    /// A PreToolUse hook the host registered in initialize: answer with
    /// the hook's output.
    HookCallback { id: String, request: Value },
    /// A JSON-RPC message for one of the host's SDK servers.
    McpMessage { id: String, server: String, message: Value },
    /// A request this host does not serve (hooks, SDK MCP servers ...).
    Unsupported { id: String, subtype: String },
    /// The answer to one of the host's requests.
    Response { id: String, response: Value },
    /// A request of the CLI's that it took back (nothing to answer).
    Cancelled,
    /// A stream message (system, assistant, user, result ...).
    Stream(Value),
}

/// Sorts one JSON line from the CLI. Err: a request that cannot be
/// answered (no id), or a line that is no message at all.
pub fn classify(msg: Value) -> Result<FromCli, String> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(String::from);
    match msg.get("type").and_then(Value::as_str) {
        Some("control_request") => {
            let id = text(&msg, "request_id").ok_or("a control_request without a request_id")?;
            let request = msg.get("request").cloned().unwrap_or(Value::Null);
            match text(&request, "subtype").as_deref() {
                Some("can_use_tool") => Ok(FromCli::CanUseTool { id, request }),
                Some("hook_callback") => Ok(FromCli::HookCallback { id, request }),
                Some("elicitation") => Ok(FromCli::Elicitation { id, request }),
                Some("mcp_message") => Ok(FromCli::McpMessage {
                    id,
                    server: text(&request, "server_name").unwrap_or_default(),
                    message: request.get("message").cloned().unwrap_or(Value::Null),
                }),
                other => Ok(FromCli::Unsupported { id, subtype: other.unwrap_or("").to_string() }),
            }
        }
        Some("control_response") => {
            let response = msg.get("response").cloned().unwrap_or(Value::Null);
            let id = text(&response, "request_id").ok_or("a control_response without a request_id")?;
            Ok(FromCli::Response { id, response })
        }
        Some("control_cancel_request") => Ok(FromCli::Cancelled),
        Some(_) => Ok(FromCli::Stream(msg)),
        None => Err(format!("a line from the CLI that is no message: {}", preview(&msg))),
    }
}

/// The host's initialize request: the MCP servers travel in it (the TS
/// SDK's default delivery, with `--await-initialize`), the names of the
/// host's own SDK servers and the hooks it registers (null: none).
pub fn initialize(id: &str, servers: &Map<String, Value>, sdk_servers: &[String], hooks: Value) -> Value {
    let mut request = json!({"subtype": "initialize", "mcpServers": servers});
    if !sdk_servers.is_empty() {
        request["sdkMcpServers"] = json!(sdk_servers);
    }
    if !hooks.is_null() {
        request["hooks"] = hooks;
    }
    json!({"type": "control_request", "request_id": id, "request": request})
}

/// A success reply carrying `response`: an elicitation's action, or a
/// `hook_callback`'s output.
pub fn success_reply(id: &str, response: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}})
}

/// The host's switch of the session's permission mode.
pub fn set_permission_mode(id: &str, mode: &str) -> Value {
    json!({"type": "control_request", "request_id": id, "request": {"subtype": "set_permission_mode", "mode": mode}})
}

/// Err: the CLI's error answer to a request of the host's.
pub fn check_success(response: &Value) -> Result<(), String> {
    match response.get("subtype").and_then(Value::as_str) {
        Some("success") => Ok(()),
        _ => Err(format!("the CLI refused: {}", response.get("error").and_then(Value::as_str).unwrap_or("no reason given"))),
    }
}

/// One prompt: the CLI plays a turn for it.
pub fn user(prompt: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": prompt}, "parent_tool_use_id": null, "session_id": ""})
}

/// The reply to a `can_use_tool` request: its behavior object, with the
/// call's tool_use id as the TS SDK adds it.
pub fn can_use_tool_reply(id: &str, request: &Value, mut behavior: Value) -> Value {
    if let (Some(b), Some(tool_use)) = (behavior.as_object_mut(), request.get("tool_use_id")) {
        b.insert("toolUseID".into(), tool_use.clone());
    }
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": behavior}})
}

/// The reply to a request this host does not serve.
pub fn unsupported(id: &str, subtype: &str) -> Value {
    let error = format!("Unsupported control request subtype: {subtype}");
    json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": error}})
}

/// The initialize answer checked. Err: why the session cannot go on.
pub fn check_initialized(response: &Value, servers_sent: bool) -> Result<(), String> {
    if response.get("subtype").and_then(Value::as_str) != Some("success") {
        let error = response.get("error").and_then(Value::as_str).unwrap_or("no reason given");
        return Err(format!("claude refused initialize: {error}"));
    }
    // A CLI that does not take servers in initialize (before 2.1.326) would
    // run without them: the host's declarations would not hold.
    if servers_sent && response.pointer("/response/mcp_servers_applied") != Some(&json!(true)) {
        return Err("claude did not apply the MCP servers sent in initialize (mcp_servers_applied missing)".into());
    }
    Ok(())
}

fn preview(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(120) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_by_what_the_host_does() {
        let can = json!({"type": "control_request", "request_id": "u1", "request": {"subtype": "can_use_tool", "tool_name": "mcp__a__b"}});
        assert!(matches!(classify(can), Ok(FromCli::CanUseTool { ref id, .. }) if id == "u1"));
        let mcp = json!({"type": "control_request", "request_id": "u3", "request": {"subtype": "mcp_message", "server_name": "host", "message": {"id": 0}}});
        assert_eq!(classify(mcp), Ok(FromCli::McpMessage { id: "u3".into(), server: "host".into(), message: json!({"id": 0}) }));
        let hook = json!({"type": "control_request", "request_id": "u2", "request": {"subtype": "hook_callback"}});
        assert!(matches!(classify(hook), Ok(FromCli::HookCallback { ref id, .. }) if id == "u2"));
        let elicit = json!({"type": "control_request", "request_id": "u4", "request": {"subtype": "elicitation"}});
        assert!(matches!(classify(elicit), Ok(FromCli::Elicitation { ref id, .. }) if id == "u4"));
        let other = json!({"type": "control_request", "request_id": "u5", "request": {"subtype": "rewind_files"}});
        assert_eq!(classify(other), Ok(FromCli::Unsupported { id: "u5".into(), subtype: "rewind_files".into() }));
        assert!(classify(json!({"type": "control_request", "request": {"subtype": "can_use_tool"}})).is_err());
        assert!(matches!(classify(json!({"type": "control_response", "response": {"request_id": "i", "subtype": "success"}})), Ok(FromCli::Response { .. })));
        assert_eq!(classify(json!({"type": "control_cancel_request", "request_id": "u1"})), Ok(FromCli::Cancelled));
        assert!(matches!(classify(json!({"type": "result"})), Ok(FromCli::Stream(_))));
        assert!(classify(json!([1, 2])).is_err());
        assert!(classify(json!({"no": "type"})).is_err());
    }

    #[test]
    fn replies_carry_the_clis_request_id() {
        let r = can_use_tool_reply("u1", &json!({"tool_use_id": "toolu_1"}), json!({"behavior": "allow", "updatedInput": {}}));
        assert_eq!(r["response"]["request_id"], "u1");
        assert_eq!(r["response"]["response"]["toolUseID"], "toolu_1");
        assert_eq!(unsupported("u2", "mcp_message")["response"]["subtype"], "error");
    }

    #[test]
    fn initialize_must_apply_the_servers() {
        let ok = json!({"subtype": "success", "request_id": "i", "response": {"mcp_servers_applied": true}});
        assert!(check_initialized(&ok, true).is_ok());
        let old = json!({"subtype": "success", "request_id": "i", "response": {}});
        assert!(check_initialized(&old, true).is_err());
        assert!(check_initialized(&old, false).is_ok());
        assert!(check_initialized(&json!({"subtype": "error", "error": "boom"}), false).unwrap_err().contains("boom"));
    }
}
