//! The driver's own MCP server, reached by the child CLI over Streamable HTTP
//! on loopback. It exposes the host's tools (and, for Claude Code, the
//! permission prompt tool) and hands every `tools/call` to the driver's event
//! loop, which answers it while it is driving the child.

use std::net::SocketAddr;
use std::sync::mpsc::{self, Sender};
use std::time::Duration;

use loopback_http::{Handler, Request, Response, Server};
use serde_json::{json, Value};

use crate::events::{BridgeCall, Event};

/// A tool the host implements and the driver exposes to the child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeTool {
    pub name: String,
    pub description: String,
}

const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// Stops (port closed, connections hung up) on drop.
pub struct BridgeServer {
    pub addr: SocketAddr,
    _server: Server,
}

impl BridgeServer {
    /// Listens on an ephemeral loopback port; calls go to `events`.
    pub fn start(tools: Vec<Value>, events: Sender<Event>) -> std::io::Result<BridgeServer> {
        let server = loopback_http::serve(Bridge { tools, events })?;
        Ok(BridgeServer { addr: server.addr, _server: server })
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

struct Bridge {
    tools: Vec<Value>,
    events: Sender<Event>,
}

impl Handler for Bridge {
    fn handle(&self, req: &Request) -> Response {
        let json = |status: u16, body: Option<Value>| {
            let body = body.map(|b| b.to_string()).unwrap_or_default();
            Response::bytes(status, "application/json", body.into_bytes())
        };
        if req.path() != "/mcp" {
            return json(404, None);
        }
        if req.method != "POST" {
            return json(405, None);
        }
        match serde_json::from_slice::<Value>(&req.body) {
            Err(_) => json(400, Some(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}}))),
            Ok(msg) => match handle(&msg, &self.tools, &self.events) {
                Some(r) if msg.get("method") == Some(&json!("initialize")) => {
                    let mut resp = json(200, Some(r));
                    resp.headers.push(("mcp-session-id", "bridge".into()));
                    resp
                }
                Some(r) => json(200, Some(r)),
                None => json(202, None),
            },
        }
    }
}

fn handle(msg: &Value, tools: &[Value], events: &Sender<Event>) -> Option<Value> {
    let id = msg.get("id")?.clone();
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        "initialize" => Ok(json!({
            "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "approval-reference-bridge", "version": env!("CARGO_PKG_VERSION")},
        })),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools})),
        "tools/call" => {
            let (reply, answer) = mpsc::channel();
            let call = BridgeCall {
                tool: params.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
                arguments: params.get("arguments").cloned().unwrap_or(json!({})),
                meta: params.get("_meta").cloned().unwrap_or(Value::Null),
                reply,
            };
            if events.send(Event::Bridge(call)).is_err() {
                Err("the driver is gone".to_string())
            } else {
                answer.recv_timeout(ANSWER_TIMEOUT).map_err(|_| "the driver did not answer".to_string())
            }
        }
        other => Err(format!("method not found: {other}")),
    };
    Some(match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err(m) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": m}}),
    })
}

/// What the child may see of a host tool's result: only blocks meant for the
/// model (no audience, or one including "assistant"), without annotations,
/// each once.
pub fn model_facing(result: &Value) -> Value {
    let blocks: Vec<Value> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| match b.pointer("/annotations/audience").and_then(Value::as_array) {
                    Some(aud) => aud.iter().any(|a| a == "assistant"),
                    None => true,
                })
                .map(|b| {
                    let mut b = b.clone();
                    if let Some(o) = b.as_object_mut() {
                        o.remove("annotations");
                    }
                    b
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = json!({"content": blocks});
    if result.get("isError") == Some(&json!(true)) {
        out["isError"] = json!(true);
    }
    out
}
