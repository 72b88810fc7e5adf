//! The MCP client against a loopback HTTP server: sessions, SSE answers, timeouts.

use std::sync::{Arc, Mutex};

use loopback_http::{sse, Handler, Request, Response};

use super::*;

/// JSON answers, except `tools/list` (SSE, a notification first),
/// `tools/call` (answered after a second) and GET (405).
#[derive(Default)]
struct Server {
    seen: Arc<Mutex<Vec<(String, Option<String>, Option<String>)>>>,
    messages: Arc<Mutex<Vec<Value>>>,
}

impl Handler for Server {
    fn handle(&self, req: &Request) -> Response {
        let (session, auth) = (req.header("mcp-session-id"), req.header("authorization"));
        if req.method == "GET" {
            self.seen.lock().unwrap().push(("GET".into(), session.map(String::from), auth.map(String::from)));
            return Response::empty(405);
        }
        let msg: Value = serde_json::from_slice(&req.body).unwrap();
        self.messages.lock().unwrap().push(msg.clone());
        let method = msg["method"].as_str().unwrap_or("").to_string();
        self.seen.lock().unwrap().push((method.clone(), session.map(String::from), auth.map(String::from)));
        let ok = |result: Value| json!({"jsonrpc": "2.0", "id": msg["id"], "result": result});
        match method.as_str() {
            "initialize" => {
                let mut r = Response::json(200, &ok(json!({})));
                r.headers.push(("mcp-session-id", "s1".into()));
                r
            }
            "tools/list" => {
                let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
                let body = sse::event("message", &note.to_string())
                    + &sse::event("message", &ok(json!({"tools": [{"name": "t"}]})).to_string());
                Response::bytes(200, "text/event-stream", body.into_bytes())
            }
            "tools/call" => {
                std::thread::sleep(Duration::from_millis(1000));
                Response::json(200, &ok(json!({"content": []})))
            }
            _ => Response::empty(202),
        }
    }
}

#[test]
fn http_sessions_sse_answers_and_timeouts() {
    let server = Server::default();
    let (seen, messages) = (server.seen.clone(), server.messages.clone());
    let http = loopback_http::serve(server).unwrap();
    let target = ServerTarget {
        url: Some(http.url_for("/mcp")),
        headers: BTreeMap::from([("authorization".to_string(), "Bearer t".to_string())]),
        ..ServerTarget::default()
    };
    let profile = ClientProfile {
        name: "t",
        title: Some("T"),
        version: "1.2.3".into(),
        protocol_version: "2025-06-18",
        capabilities: json!({"elicitation": {}}),
        stdio_experimental: Some(json!({"x/y": {}})),
        probe_discover: false,
    };
    let mut conn = McpConnection::connect(&target, &BTreeMap::new(), &profile).unwrap();
    assert_eq!(conn.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["t"]);
    conn.call("t", &json!({}), json!({"k": 1})).unwrap();
    let start = std::time::Instant::now();
    let failed = conn.call_with_timeout("t", &json!({}), |_| Value::Null, Duration::from_millis(100), "late", &mut |_, _| Err(super::method_not_found()));
    assert_eq!(failed, Err(CallFailure::TimedOut));
    assert!(start.elapsed() < Duration::from_millis(800), "{:?}", start.elapsed());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while seen.lock().unwrap().len() < 7 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let seen = seen.lock().unwrap().clone();
    let methods: Vec<&str> = seen.iter().map(|(m, _, _)| m.as_str()).collect();
    assert_eq!(methods, ["initialize", "notifications/initialized", "GET", "tools/list", "tools/call", "tools/call", "notifications/cancelled"]);
    assert_eq!(seen[0].1, None);
    assert!(seen[1..].iter().all(|(_, s, a)| s.as_deref() == Some("s1") && a.as_deref() == Some("Bearer t")));
    // Title and version as given, no stdio-only capability over HTTP, no
    // params on notifications/initialized, progress tokens from 0.
    let messages = messages.lock().unwrap().clone();
    assert_eq!(messages[0]["params"]["clientInfo"], json!({"name": "t", "title": "T", "version": "1.2.3"}));
    assert_eq!(messages[0]["params"]["capabilities"], json!({"elicitation": {}}));
    assert!(messages[1].get("params").is_none(), "{}", messages[1]);
    assert_eq!(messages[2]["params"], json!({"_meta": {"progressToken": 0}}));
    assert_eq!(messages[3]["params"]["_meta"], json!({"k": 1, "progressToken": 1}));
    drop(http);
    let failed = conn.call_with_timeout("t", &json!({}), |_| Value::Null, Duration::from_secs(5), "late", &mut |_, _| Err(super::method_not_found()));
    assert!(matches!(failed, Err(CallFailure::Transport(ref m)) if m.starts_with("connect 127.0.0.1:")), "{failed:?}");
}
