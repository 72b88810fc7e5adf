//! Raw-TCP tests of the fake MCP server's Streamable HTTP transport: what a
//! real client sees on the wire, and what lands in the recording.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fakes::mcp::{start_http, Catalog, HttpServer};
use fakes::wire::{read_jsonl, Recorder};
use loopback_http::raw::{RawConn, RawResponse};
use serde_json::{json, Value};

const CATALOG: &str = r#"{"server":"files","tools":[
    {"name":"read_file","annotations":{"readOnlyHint":true}},
    {"name":"slow","delay_ms":30000}]}"#;

struct Fixture {
    _dir: tempfile::TempDir,
    rec_path: PathBuf,
    token_path: PathBuf,
    server: HttpServer,
}

fn fixture(with_token: Option<&str>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let rec_path = dir.path().join("rec.jsonl");
    let token_path = dir.path().join("token");
    let token_file = with_token.map(|t| {
        std::fs::write(&token_path, t).unwrap();
        token_path.clone()
    });
    let catalog = Catalog::from_json_str(CATALOG).unwrap();
    let server = start_http(catalog, Recorder::open(&rec_path).unwrap(), token_file).unwrap();
    Fixture { _dir: dir, rec_path, token_path, server }
}

/// A raw connection to the server; malformed answers fail the test.
struct Conn(RawConn);

type Resp = RawResponse;

/// A response body as JSON.
fn json_of(r: &Resp) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

impl Conn {
    fn open(server: &HttpServer) -> Conn {
        Conn::to(server.addr)
    }

    fn to(addr: std::net::SocketAddr) -> Conn {
        Conn(RawConn::to(addr).unwrap())
    }

    fn send(&mut self, raw: &[u8]) {
        self.0.send(raw).unwrap();
    }

    fn post(&mut self, body: &Value, extra_headers: &str) -> Resp {
        let body = body.to_string();
        let raw = format!(
            "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra_headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.send(raw.as_bytes());
        self.read()
    }

    fn read(&mut self) -> Resp {
        self.0.read().unwrap()
    }

    /// True once the server has closed its side.
    fn closed(&mut self) -> bool {
        self.0.closed()
    }
}

fn init() -> Value {
    json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}})
}

fn log(path: &Path) -> Vec<Value> {
    read_jsonl(path).unwrap()
}

#[test]
fn initialize_carries_session_id_and_echoes_version() {
    let f = fixture(None);
    assert_eq!(f.server.url(), format!("http://127.0.0.1:{}/mcp", f.server.addr.port()));
    assert!(f.server.addr.ip().is_loopback());
    let mut c = Conn::open(&f.server);
    let r = c.post(&init(), "");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let sid = r.header("mcp-session-id").expect("session id header");
    assert!(sid.len() >= 16 && sid.bytes().all(|b| b.is_ascii_hexdigit()), "{sid}");
    assert_eq!(json_of(&r)["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(json_of(&r)["result"]["serverInfo"]["name"], "fake-mcp-files");

    // Later answers do not carry a new session id.
    let r =
        c.post(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}), &format!("Mcp-Session-Id: {sid}\r\n"));
    assert_eq!(r.status, 200);
    assert!(r.header("mcp-session-id").is_none());
    assert_eq!(json_of(&r)["result"]["tools"][0]["annotations"]["readOnlyHint"], true);
    assert!(json_of(&r)["result"]["tools"][1].get("annotations").is_none());

    let l = log(&f.rec_path);
    assert_eq!(l[0], json!({"event":"start","transport":"http","server":"files"}));
    // What arrived over HTTP, for fidelity: method, path, whether a bearer came.
    let http = json!({"method":"POST","path":"/mcp","bearer":false});
    assert_eq!(l[1], json!({"dir":"in","msg":init(),"http":http}));
    assert_eq!(l[2]["dir"], "out");
}

#[test]
fn notification_gets_202_and_tool_call_is_recorded() {
    let f = fixture(None);
    let mut c = Conn::open(&f.server);
    let r = c.post(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}), "");
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
    let r = c.post(&json!({"jsonrpc":"2.0","id":5,"result":{}}), "");
    assert_eq!(r.status, 202);
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"x"}}});
    let r = c.post(&call, "");
    assert_eq!(r.status, 200);
    assert_eq!(json_of(&r)["result"]["content"][0]["text"], "files/read_file ok: {\"path\":\"x\"}");
    let events: Vec<Value> = log(&f.rec_path).into_iter().filter(|e| e["event"] == "tools/call").collect();
    assert_eq!(
        events,
        vec![
            json!({"event":"tools/call","server":"files","tool":"read_file","arguments":{"path":"x"},"meta":null})
        ]
    );
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let f = fixture(None);
    let mut c = Conn::open(&f.server);
    for id in 1..=3 {
        let r = c.post(&json!({"jsonrpc":"2.0","id":id,"method":"ping"}), "");
        assert_eq!((r.status, json_of(&r)["id"].clone()), (200, json!(id)));
        assert_eq!(r.header("connection"), Some("keep-alive"));
    }
    // Pipelined: two requests written before reading either answer.
    let one = json!({"jsonrpc":"2.0","id":10,"method":"ping"}).to_string();
    let two = json!({"jsonrpc":"2.0","id":11,"method":"ping"}).to_string();
    c.send(format!("POST /mcp HTTP/1.1\r\nContent-Length: {}\r\n\r\n{one}POST /mcp HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{two}", one.len(), two.len()).as_bytes());
    assert_eq!(json_of(&c.read())["id"], 10);
    let last = c.read();
    assert_eq!((json_of(&last)["id"].clone(), last.header("connection")), (json!(11), Some("close")));
    assert!(c.closed());
}

#[test]
fn chunked_request_bodies_are_accepted() {
    let f = fixture(None);
    let mut c = Conn::open(&f.server);
    let body = json!({"jsonrpc":"2.0","id":"c","method":"ping"}).to_string();
    let (a, b) = body.split_at(7);
    c.send(
        format!(
            "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
            a.len(),
            b.len()
        )
        .as_bytes(),
    );
    let r = c.read();
    assert_eq!((r.status, json_of(&r)["id"].clone()), (200, json!("c")));
}

#[test]
fn other_methods_and_paths() {
    let f = fixture(None);
    let mut c = Conn::open(&f.server);
    c.send(b"GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\n\r\n");
    assert_eq!(c.read().status, 405);
    c.send(b"DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: ab\r\n\r\n");
    assert_eq!(c.read().status, 200);
    c.send(b"GET /.well-known/oauth-authorization-server HTTP/1.1\r\n\r\n");
    assert_eq!(c.read().status, 404);
    c.send(b"POST /other HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
    assert_eq!(c.read().status, 404);
    // Still usable after all of that.
    assert_eq!(c.post(&json!({"jsonrpc":"2.0","id":1,"method":"ping"}), "").status, 200);
}

#[test]
fn garbage_body_is_a_400_parse_error() {
    let f = fixture(None);
    let mut c = Conn::open(&f.server);
    c.send(b"POST /mcp HTTP/1.1\r\nContent-Length: 9\r\n\r\n{not json");
    let r = c.read();
    assert_eq!(r.status, 400);
    assert_eq!((json_of(&r)["id"].clone(), json_of(&r)["error"]["code"].clone()), (Value::Null, json!(-32700)));
    assert!(log(&f.rec_path).iter().any(|e| e["event"] == "garbage"));
    assert_eq!(c.post(&json!({"jsonrpc":"2.0","id":1,"method":"ping"}), "").status, 200);
}

#[test]
fn bearer_auth_rejects_without_recording_secrets_and_follows_rotation() {
    const FIRST: &str = "first-secret-4f1d9c";
    const SECOND: &str = "second-secret-77ab02";
    const WRONG: &str = "wrong-guess-0c0c0c";
    let f = fixture(Some(&format!("{FIRST}\n")));
    let mut c = Conn::open(&f.server);
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});

    let r = c.post(&ping, "");
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert_eq!(c.post(&ping, &format!("Authorization: Bearer {WRONG}\r\n")).status, 401);
    assert_eq!(c.post(&ping, &format!("Authorization: Basic {FIRST}\r\n")).status, 401);
    assert_eq!(c.post(&ping, &format!("Authorization: Bearer {FIRST}\r\n")).status, 200);
    assert_eq!(c.post(&ping, &format!("authorization: bearer {FIRST}\r\n")).status, 200);

    // Rotate: the old secret stops working on the very next request.
    std::fs::write(&f.token_path, SECOND).unwrap();
    assert_eq!(c.post(&ping, &format!("Authorization: Bearer {FIRST}\r\n")).status, 401);
    assert_eq!(c.post(&ping, &format!("Authorization: Bearer {SECOND}\r\n")).status, 200);

    // An empty or missing token file admits nobody, not "Bearer ".
    std::fs::write(&f.token_path, "  \n").unwrap();
    assert_eq!(c.post(&ping, "Authorization: Bearer \r\n").status, 401);
    std::fs::remove_file(&f.token_path).unwrap();
    assert_eq!(c.post(&ping, &format!("Authorization: Bearer {SECOND}\r\n")).status, 401);

    let text = std::fs::read_to_string(&f.rec_path).unwrap();
    for secret in [FIRST, SECOND, WRONG] {
        assert!(!text.contains(secret), "{secret} leaked into the recording:\n{text}");
    }
    let rejected: Vec<Value> =
        log(&f.rec_path).into_iter().filter(|e| e["event"] == "auth_rejected").collect();
    assert_eq!(rejected.len(), 6);
    assert_eq!(rejected[0], json!({"event":"auth_rejected","had_header":false,"method":"POST","path":"/mcp"}));
    assert_eq!(rejected[1], json!({"event":"auth_rejected","had_header":true,"method":"POST","path":"/mcp"}));
    // Rejected requests never reach the protocol handler.
    let ins: Vec<Value> = log(&f.rec_path).into_iter().filter(|e| e["dir"] == "in").collect();
    assert_eq!(ins.len(), 3);
    // That a bearer arrived is recorded, never its value.
    assert!(ins.iter().all(|e| e["http"] == json!({"method":"POST","path":"/mcp","bearer":true})), "{ins:?}");
}

#[test]
fn oversized_body_is_413_without_reading_it() {
    let f = fixture(None);
    let mut c = Conn::open(&f.server);
    c.send(format!("POST /mcp HTTP/1.1\r\nContent-Length: {}\r\n\r\n", 16 * 1024 * 1024 + 1).as_bytes());
    let r = c.read();
    assert_eq!(r.status, 413);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());
    assert!(log(&f.rec_path).iter().any(|e| e["event"] == "bad_http" && e["status"] == 413));
}

/// 431 Request Header Fields Too Large (RFC 6585), hyper's answer; the
/// hand-written server used to say 400.
#[test]
fn oversized_header_block_is_431() {
    let f = fixture(None);
    let mut c = Conn::open(&f.server);
    let mut raw = b"POST /mcp HTTP/1.1\r\n".to_vec();
    for i in 0..100 {
        raw.extend(format!("X-Filler-{i}: {}\r\n", "a".repeat(1000)).as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    // The server may answer and close before reading everything we send.
    let _ = c.0.stream.write_all(&raw);
    assert_eq!(c.read().status, 431);
    assert!(c.closed());
    assert!(log(&f.rec_path).iter().any(|e| e["event"] == "bad_http" && e["status"] == 431));
}

#[test]
fn delayed_call_is_answered_late() {
    let catalog =
        Catalog::from_json_str(r#"{"server":"s","tools":[{"name":"slow","delay_ms":200}]}"#).unwrap();
    let server = start_http(catalog, Recorder::none(), None).unwrap();
    let mut c = Conn::open(&server);
    let start = Instant::now();
    let r = c.post(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}), "");
    assert_eq!(r.status, 200);
    assert!(start.elapsed() >= Duration::from_millis(200));
}

#[test]
fn shutdown_is_prompt_with_idle_busy_and_half_sent_connections() {
    let f = fixture(None);
    let addr = f.server.addr;
    // Idle keep-alive connection.
    let mut idle = Conn::open(&f.server);
    assert_eq!(idle.post(&json!({"jsonrpc":"2.0","id":1,"method":"ping"}), "").status, 200);
    // A connection that stopped mid-headers.
    let mut half = Conn::open(&f.server);
    half.send(b"POST /mcp HTTP/1.1\r\nContent-Le");
    // A call sleeping in its 30 s delay.
    let busy = std::thread::spawn(move || {
        let mut c = Conn::to(addr);
        let body = json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}}).to_string();
        c.send(format!("POST /mcp HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
        let mut buf = Vec::new();
        let _ = c.0.reader.read_to_end(&mut buf);
    });
    // Let the call reach its delay.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !log(&f.rec_path).iter().any(|e| e["event"] == "tools/call") {
        assert!(Instant::now() < deadline, "call never arrived");
        std::thread::sleep(Duration::from_millis(10));
    }

    let start = Instant::now();
    f.server.shutdown();
    assert!(start.elapsed() < Duration::from_secs(2), "shutdown took {:?}", start.elapsed());
    assert!(idle.closed());
    assert!(half.closed());
    busy.join().unwrap();
    // Nothing listens any more.
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn drop_also_stops_the_server() {
    let server = start_http(Catalog::from_json_str(CATALOG).unwrap(), Recorder::none(), None).unwrap();
    let addr = server.addr;
    let _idle = TcpStream::connect(addr).unwrap();
    let start = Instant::now();
    drop(server);
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(TcpStream::connect(addr).is_err());
}
