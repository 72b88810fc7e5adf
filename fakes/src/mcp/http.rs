//! MCP Streamable HTTP on loopback: POST /mcp carries one JSON-RPC message
//! and gets a JSON answer (200) or nothing (202). The HTTP itself is
//! [`loopback_http`].

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::PathBuf;

use loopback_http::{Handler, Request, Response};
use serde_json::{json, Value};

use super::{garbage, record_out, respond, Catalog, Stopper};
use crate::wire::Recorder;

/// A running MCP server; stops on [`HttpServer::shutdown`] or drop.
pub struct HttpServer {
    pub addr: std::net::SocketAddr,
    inner: loopback_http::Server,
    stopper: Stopper,
}

impl HttpServer {
    pub fn url(&self) -> String {
        self.inner.url_for("/mcp")
    }

    pub fn shutdown(self) {
        drop(self)
    }
}

impl Drop for HttpServer {
    /// Delayed answers end first, then the connections close.
    fn drop(&mut self) {
        self.stopper.stop();
    }
}

struct Shared {
    catalog: Catalog,
    rec: Recorder,
    token_file: Option<PathBuf>,
    stopper: Stopper,
}

/// Binds an ephemeral loopback port and serves on the process's HTTP runtime.
pub fn start_http(catalog: Catalog, rec: Recorder, token_file: Option<PathBuf>) -> io::Result<HttpServer> {
    rec.record(&json!({"event": "start", "transport": "http", "server": catalog.server}));
    let stopper = Stopper::default();
    let shared = Shared { catalog, rec, token_file, stopper: stopper.clone() };
    let inner = loopback_http::serve(shared)?;
    Ok(HttpServer { addr: inner.addr, inner, stopper })
}

impl Handler for Shared {
    fn handle(&self, req: &Request) -> Response {
        route(self, req)
    }

    fn bad_request(&self, status: u16, error: &str) {
        self.rec.record(&json!({"event": "bad_http", "status": status, "error": error}));
    }
}

fn route(shared: &Shared, req: &Request) -> Response {
    let path = req.path();
    let facts = http_facts(req);
    let note = |status: u16| {
        let mut event = facts.clone();
        event["event"] = json!("http");
        event["status"] = json!(status);
        shared.rec.record(&event);
    };
    if path != "/mcp" && path != "/mcp/" {
        note(404);
        return Response::empty(404);
    }
    if let Some(rejected) = check_auth(shared, req, &facts) {
        return rejected;
    }
    match req.method.as_str() {
        "POST" => post(shared, req, facts),
        "DELETE" => {
            note(200);
            Response::empty(200)
        }
        // GET would open a server-to-client SSE stream, which we never need;
        // 405 is the spec's way of saying so.
        _ => {
            note(405);
            let mut r = Response::empty(405);
            r.headers.push(("allow", "POST, DELETE".into()));
            r
        }
    }
}

/// What a fidelity comparison needs of an HTTP request: method, path and
/// whether a bearer arrived (never its value).
fn http_facts(req: &Request) -> Value {
    let bearer = req.header("authorization").and_then(|h| h.split_once(' ')).is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"));
    json!({"method": req.method, "path": req.path(), "bearer": bearer})
}

fn post(shared: &Shared, req: &Request, facts: Value) -> Response {
    let rec = &shared.rec;
    let msg: Value = match serde_json::from_slice(&req.body) {
        Ok(v) => v,
        Err(e) => {
            let text: String = String::from_utf8_lossy(&req.body).chars().take(512).collect();
            let reply = garbage(rec, &e.to_string(), Some(&text));
            record_out(rec, Some(reply.clone()));
            return Response::json(400, &reply);
        }
    };
    rec.record(&json!({"dir": "in", "msg": msg, "http": facts}));
    let reply = respond(&shared.catalog, &msg, rec);
    shared.stopper.sleep(reply.delay);
    let Some(answer) = record_out(rec, reply.msg) else {
        return Response::empty(202);
    };
    let mut resp = Response::json(200, &answer);
    if msg.get("method").and_then(Value::as_str) == Some("initialize") && answer.get("result").is_some() {
        resp.headers.push(("mcp-session-id", session_id()));
    }
    resp
}

/// `None` when the request may proceed. The token file is re-read every
/// time so the harness can rotate the secret under a running server.
/// Neither the presented nor the expected token is ever recorded.
fn check_auth(shared: &Shared, req: &Request, facts: &Value) -> Option<Response> {
    let path = shared.token_file.as_ref()?;
    let expected = match std::fs::read_to_string(path) {
        Ok(t) => t.trim().to_string(),
        Err(e) => {
            shared.rec.record(&json!({"event": "token_file_error", "error": e.kind().to_string()}));
            String::new()
        }
    };
    let header = req.header("authorization");
    let presented = header.and_then(|h| {
        let (scheme, token) = h.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    });
    // An empty expected token (empty or unreadable file) admits nobody.
    let ok = !expected.is_empty() && presented.is_some_and(|p| same_secret(p, &expected));
    if ok {
        return None;
    }
    shared.rec.record(&json!({"event": "auth_rejected", "had_header": header.is_some(), "method": facts["method"], "path": facts["path"]}));
    let mut r = Response::empty(401);
    r.headers.push(("www-authenticate", "Bearer".into()));
    Some(r)
}

/// Compares without an early exit on the first differing byte.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Unpredictable enough for a test fake: std's per-process random hash keys.
fn session_id() -> String {
    let state = std::collections::hash_map::RandomState::new();
    let mut parts = [0u64; 2];
    for (i, p) in parts.iter_mut().enumerate() {
        let mut h = state.build_hasher();
        h.write_usize(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        *p = h.finish();
    }
    format!("{:016x}{:016x}", parts[0], parts[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_comparison_and_session_ids() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
        let (a, b) = (session_id(), session_id());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
