//! The host's own tools (bridge) as an SDK server, the way the Agent SDKs
//! run their in-process MCP servers: named in the initialize request
//! (`sdkMcpServers`, without a manifest, so the CLI runs the full
//! handshake) and answered over `mcp_message` control requests (measured
//! on 2.1.332 and 2.1.334: initialize, notifications/initialized,
//! tools/list, then tools/call; an answer without `mcp_response` or with
//! another id would leave the CLI waiting, so every request gets one).

use serde_json::{json, Value};

use crate::bridge::BridgeTool;

/// The protocol version the CLI asks for in `initialize`.
const PROTOCOL: &str = "2025-11-25";

pub struct SdkServer {
    pub name: String,
    tools: Vec<Value>,
}

/// What to do with one `mcp_message`.
#[derive(Debug, PartialEq)]
pub enum Handled {
    /// Send this `mcp_response` back.
    Answer(Value),
    /// Run the host's tool; its result answers JSON-RPC request `id`.
    Call { id: Value, tool: String, arguments: Value, meta: Value },
}

impl SdkServer {
    pub fn new(name: String, tools: &[BridgeTool]) -> SdkServer {
        // Prompts come as can_use_tool: the server has only the host's tools.
        let tools = tools.iter().map(|t| json!({"name": t.name, "description": t.description, "inputSchema": {"type": "object", "additionalProperties": true}}));
        SdkServer { name, tools: tools.collect() }
    }

    /// One JSON-RPC message from the CLI.
    pub fn handle(&self, message: &Value) -> Handled {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match message.get("method").and_then(Value::as_str) {
            Some("initialize") => {
                let info = json!({"name": self.name, "version": env!("CARGO_PKG_VERSION")});
                Handled::Answer(result(id, json!({"protocolVersion": PROTOCOL, "capabilities": {"tools": {}}, "serverInfo": info})))
            }
            // Answered as the TS SDK answers it (the CLI does not read it).
            Some(m) if m.starts_with("notifications/") => Handled::Answer(json!({"jsonrpc": "2.0", "result": {}, "id": 0})),
            Some("tools/list") => Handled::Answer(result(id, json!({"tools": self.tools}))),
            Some("tools/call") => {
                let tool = params.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                if !self.tools.iter().any(|t| t["name"] == tool.as_str()) {
                    return Handled::Answer(error(id, -32602, &format!("Tool {tool} not found")));
                }
                let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
                let meta = params.get("_meta").cloned().unwrap_or(Value::Null);
                Handled::Call { id, tool, arguments, meta }
            }
            Some("ping") => Handled::Answer(result(id, json!({}))),
            other => Handled::Answer(error(id, -32601, &format!("Method not found: {}", other.unwrap_or("")))),
        }
    }
}

pub fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The control response carrying `mcp_response` for request `request_id`.
pub fn reply(request_id: &str, mcp_response: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": request_id, "response": {"mcp_response": mcp_response}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_handshake_and_a_call() {
        let s = SdkServer::new("host".into(), &[BridgeTool { name: "report".into(), description: "d".into() }]);
        let Handled::Answer(init) = s.handle(&json!({"method": "initialize", "id": 0, "params": {}})) else { panic!() };
        assert_eq!((init["id"].clone(), init["result"]["protocolVersion"].clone()), (json!(0), json!("2025-11-25")));
        assert!(matches!(s.handle(&json!({"method": "notifications/initialized"})), Handled::Answer(_)));
        let Handled::Answer(list) = s.handle(&json!({"method": "tools/list", "id": 1})) else { panic!() };
        assert_eq!(list["result"]["tools"][0]["name"], "report");
        let call = json!({"method": "tools/call", "id": 2, "params": {"name": "report", "arguments": {"a": 1}, "_meta": {"claudecode/toolUseId": "toolu_1", "progressToken": 2}}});
        let Handled::Call { id, tool, arguments, meta } = s.handle(&call) else { panic!() };
        assert_eq!((id, tool.as_str(), arguments, meta["claudecode/toolUseId"].clone()), (json!(2), "report", json!({"a": 1}), json!("toolu_1")));
        let unknown = json!({"method": "tools/call", "id": 3, "params": {"name": "nope"}});
        assert!(matches!(s.handle(&unknown), Handled::Answer(a) if a["error"]["code"] == -32602 && a["id"] == 3));
        assert_eq!(reply("u1", json!({}))["response"]["response"], json!({"mcp_response": {}}));
    }
}
