//! What Codex's MCP elicitation request says about the call it asks to approve.

use serde_json::Value;

/// An approval of an MCP tool call, as opposed to a server's own elicitation.
pub fn is_tool_approval(params: &Value) -> bool {
    params.pointer("/_meta/codex_approval_kind").and_then(Value::as_str) == Some("mcp_tool_call")
}

/// `_meta.tool_name` from 0.167.2; before that only the message names the
/// tool: `Allow the S MCP server to run tool "T"?`.
pub fn approval_tool_name(params: &Value) -> Option<String> {
    if let Some(t) = params.pointer("/_meta/tool_name").and_then(Value::as_str) {
        return Some(t.to_string());
    }
    let msg = params.get("message")?.as_str()?;
    let start = msg.find("run tool \"")? + "run tool \"".len();
    let end = msg[start..].find('"')? + start;
    Some(msg[start..end].to_string())
}
