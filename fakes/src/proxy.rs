//! A recording HTTP proxy for the MCP servers a DRIVER runs itself (its
//! bridge: the host's tools and the permission prompt tool). On a real run
//! the relay puts one in front of each such server, so the harness sees
//! the prompt tool's calls and the bridged results the real CLI received,
//! as the fakes record them on their own. Headers pass through, and are
//! never recorded: a bearer is a secret.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use loopback_http::{serve, Handler, Request, Response, Server};
use loopback_http::sse;
use serde_json::{json, Value};

use crate::wire::Recorder;

/// How long the proxy waits for each piece of the driver's answer; a
/// driver that is slower fails the call as the real CLI would see it.
const WAIT: Duration = Duration::from_secs(120);

/// Request headers not passed on: the proxy's own connection sets them.
const HOP_BY_HOP: &[&str] = &["host", "content-length", "connection", "transfer-encoding", "keep-alive"];

/// One proxied server; stops when dropped.
pub struct Proxy {
    server: Server,
    /// The target's path, kept in the URL the CLI is given.
    path: String,
}

impl Proxy {
    /// Serves `target` (an `http://127.0.0.1:PORT/path` URL) on a new
    /// loopback port; records into whatever `rec` holds once it is set.
    pub fn start(name: &str, target: &str, rec: Arc<OnceLock<Recorder>>) -> std::io::Result<Proxy> {
        let (base, path) = split(target);
        let forward = Forward { tap: Tap { server: name.to_string(), rec }, base };
        Ok(Proxy { server: serve(forward)?, path })
    }

    /// The URL the CLI is given instead of the target.
    pub fn url(&self) -> String {
        self.server.url_for(&self.path)
    }
}

struct Forward {
    tap: Tap,
    /// `http://HOST:PORT`, no path: the request's own path is appended.
    base: String,
}

/// Records one server's messages; cloned into an event stream's thread.
#[derive(Clone)]
struct Tap {
    server: String,
    rec: Arc<OnceLock<Recorder>>,
}

impl Tap {
    fn record(&self, dir: &str, msg: Value) {
        if let Some(rec) = self.rec.get() {
            rec.record(&json!({"event": "proxied", "server": self.server, "dir": dir, "msg": msg}));
        }
    }
}

impl Handler for Forward {
    fn handle(&self, req: &Request) -> Response {
        if !req.body.is_empty() {
            self.tap.record("c2s", parse(&req.body));
        }
        let headers: Vec<(String, String)> = req.headers.iter().filter(|(n, _)| !HOP_BY_HOP.contains(&n.as_str())).cloned().collect();
        let url = format!("{}{}", self.base, req.target);
        let mut reply = match loopback_http::request(&req.method, &url, &headers, req.body.clone(), WAIT) {
            Ok(r) => r,
            Err(e) => return Response::bytes(502, "text/plain", format!("proxy: {e}").into_bytes()),
        };
        let content_type = reply.header("content-type").unwrap_or("").to_string();
        let passed: Vec<(&'static str, String)> = ["mcp-session-id", "www-authenticate"]
            .iter()
            .filter_map(|n| reply.header(n).map(|v| (*n, v.to_string())))
            .collect();
        let mut response = if content_type.starts_with("text/event-stream") {
            let (response, body) = Response::streaming(reply.status, &content_type);
            let tap = self.tap.clone();
            std::thread::spawn(move || {
                while let Ok(Some(ev)) = reply.next_event() {
                    tap.record("s2c", parse(ev.data.as_bytes()));
                    let name = if ev.event.is_empty() { "message" } else { ev.event.as_str() };
                    if !body.send(sse::event(name, &ev.data)) {
                        break;
                    }
                }
            });
            response
        } else {
            let status = reply.status;
            match reply.body() {
                Ok(bytes) => {
                    if !bytes.is_empty() {
                        self.tap.record("s2c", parse(&bytes));
                    }
                    Response::bytes(status, &content_type, bytes)
                }
                Err(e) => Response::bytes(502, "text/plain", format!("proxy: {e}").into_bytes()),
            }
        };
        response.headers.extend(passed);
        response
    }
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| json!({"_text": String::from_utf8_lossy(bytes)}))
}

/// `http://h:p/path?q` -> ("http://h:p", "/path?q").
fn split(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    match rest.find('/') {
        Some(i) => (format!("http://{}", &rest[..i]), rest[i..].to_string()),
        None => (format!("http://{rest}"), "/".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl Handler for Echo {
        fn handle(&self, req: &Request) -> Response {
            let bearer = req.header("authorization").is_some();
            let msg: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            let reply = json!({"id": msg["id"], "result": {"path": req.target, "bearer": bearer}});
            if req.header("accept").is_some_and(|a| a.contains("text/event-stream")) {
                let (resp, body) = Response::streaming(200, "text/event-stream");
                body.send(sse::event("message", &reply.to_string()));
                resp
            } else {
                Response::json(200, &reply)
            }
        }
    }

    #[test]
    fn forwards_both_ways_and_records_messages_but_never_headers() {
        let target = serve(Echo).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.jsonl");
        let rec = Arc::new(OnceLock::new());
        let _ = rec.set(Recorder::open(&log).unwrap().for_process(7));
        let proxy = Proxy::start("bridge", &target.url_for("/mcp"), rec).unwrap();
        assert!(proxy.url().ends_with("/mcp"));
        let auth = ("authorization".to_string(), "Bearer s3cret".to_string());
        for accept in ["application/json", "text/event-stream"] {
            let headers = [auth.clone(), ("accept".to_string(), accept.to_string())];
            let reply = loopback_http::request("POST", &proxy.url(), &headers, br#"{"id":1,"method":"tools/call"}"#.to_vec(), WAIT).unwrap();
            let body = String::from_utf8(reply.body().unwrap()).unwrap();
            assert!(body.contains(r#""bearer":true"#) && body.contains(r#""path":"/mcp""#), "{accept}: {body}");
        }
        drop(proxy);
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let dirs: Vec<&str> = lines.iter().filter_map(|l| l["dir"].as_str()).collect();
        assert_eq!(dirs, ["c2s", "s2c", "c2s", "s2c"]);
        assert!(lines.iter().all(|l| l["event"] == "proxied" && l["server"] == "bridge" && l["pid"] == 7));
        assert!(!text.contains("s3cret"));
    }

    #[test]
    fn an_unreachable_target_is_a_502_not_a_hang() {
        let gone = serve(Echo).unwrap();
        let url = gone.url_for("/mcp");
        drop(gone);
        let proxy = Proxy::start("bridge", &url, Arc::new(OnceLock::new())).unwrap();
        let reply = loopback_http::request("POST", &proxy.url(), &[], b"{}".to_vec(), WAIT).unwrap();
        assert_eq!(reply.status, 502);
    }
}
