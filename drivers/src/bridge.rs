//! The driver's own MCP server, reached by the child CLI over Streamable HTTP
//! on loopback. It exposes the host's tools (and, for Claude Code, the
//! permission prompt tool) and hands every `tools/call` to the driver's event
//! loop, which answers it while it is driving the child.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use crate::events::{BridgeCall, Event};

/// A tool the host implements and the driver exposes to the child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeTool {
    pub name: String,
    pub description: String,
}

const MAX_BODY: usize = 16 * 1024 * 1024;
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

pub struct BridgeServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    accept: Option<JoinHandle<()>>,
}

impl BridgeServer {
    /// Listens on an ephemeral loopback port; calls go to `events`.
    pub fn start(tools: Vec<Value>, events: Sender<Event>) -> std::io::Result<BridgeServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let tools = Arc::new(tools);
        let (stop2, open2) = (stop.clone(), open.clone());
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                if let (Ok(mut list), Ok(clone)) = (open2.lock(), conn.try_clone()) {
                    list.push(clone);
                }
                let (tools, events) = (tools.clone(), events.clone());
                std::thread::spawn(move || serve(conn, &tools, &events));
            }
        });
        Ok(BridgeServer { addr, stop, open, accept: Some(accept) })
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for BridgeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wake the accept loop
        if let Ok(list) = self.open.lock() {
            for s in list.iter() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// One keep-alive connection: requests until the peer closes.
fn serve(conn: TcpStream, tools: &[Value], events: &Sender<Event>) {
    let Ok(write) = conn.try_clone() else { return };
    let mut reader = BufReader::new(conn);
    let mut out = write;
    while let Some((method, path, body)) = read_request(&mut reader) {
        let (status, extra, reply) = if path != "/mcp" {
            (404, String::new(), None)
        } else if method != "POST" {
            (405, String::new(), None)
        } else {
            match serde_json::from_slice::<Value>(&body) {
                Err(_) => (400, String::new(), Some(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}}))),
                Ok(msg) => match handle(&msg, tools, events) {
                    Some(r) if msg.get("method") == Some(&json!("initialize")) => (200, "mcp-session-id: bridge\r\n".into(), Some(r)),
                    Some(r) => (200, String::new(), Some(r)),
                    None => (202, String::new(), None),
                },
            }
        };
        let body = reply.map(|r| r.to_string()).unwrap_or_default();
        let head = format!(
            "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}\r\n",
            reason(status),
            body.len()
        );
        if out.write_all(head.as_bytes()).and_then(|_| out.write_all(body.as_bytes())).is_err() {
            return;
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

/// (method, path, body) of the next request; None at EOF or on bad input.
fn read_request(r: &mut BufReader<TcpStream>) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.split('?').next()?.to_string();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok()?;
            }
        }
    }
    if length > MAX_BODY {
        return None;
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).ok()?;
    Some((method, path, body))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Method Not Allowed",
    }
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
