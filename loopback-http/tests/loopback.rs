//! The server over raw TCP and through the client: framing, limits,
//! keep-alive, streaming, timeouts and shutdown.

use std::io::{BufRead, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loopback_http::raw::RawConn;
use loopback_http::{answer_bytes, request, serve, serve_with, ClientError, Handler, Limits, Request, Response};

/// Echoes method, target and body; `/slow` sleeps first, `/events` streams
/// three events 50 ms apart, `/hang` never ends its stream.
#[derive(Default)]
struct Echo {
    bad: Arc<Mutex<Vec<u16>>>,
}

impl Handler for Echo {
    fn handle(&self, req: &Request) -> Response {
        match req.path() {
            "/slow" => std::thread::sleep(Duration::from_millis(1000)),
            "/events" | "/hang" => {
                let (resp, tx) = Response::streaming(200, "text/event-stream");
                let forever = req.path() == "/hang";
                std::thread::spawn(move || {
                    for i in 0..3 {
                        if !tx.send(loopback_http::sse::event("n", &i.to_string())) {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    if forever {
                        while tx.send(": keep\n") {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                });
                return resp;
            }
            _ => {}
        }
        let mut r = Response::bytes(200, "text/plain", req.body.clone());
        r.headers.push(("x-method", req.method.clone()));
        r.headers.push(("x-target", req.target.clone()));
        r.headers.push(("x-auth", req.header("authorization").unwrap_or("").to_string()));
        r
    }

    fn bad_request(&self, status: u16, _error: &str) {
        self.bad.lock().unwrap().push(status);
    }
}

/// A raw connection whose reads fail the test on malformed answers.
struct Raw(RawConn);

impl Raw {
    fn to(addr: std::net::SocketAddr) -> Raw {
        Raw(RawConn::to(addr).unwrap())
    }

    /// (status, lower-cased headers, body).
    fn read(&mut self) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let r = self.0.read().unwrap();
        (r.status, r.headers, r.body)
    }

    fn closed(&mut self) -> bool {
        self.0.closed()
    }
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

#[test]
fn keep_alive_pipelining_and_chunked_bodies() {
    let server = serve(Echo::default()).unwrap();
    let mut c = Raw::to(server.addr);
    c.0.stream.write_all(b"POST /a?q=1 HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi").unwrap();
    let (status, h, body) = c.read();
    assert_eq!((status, body.as_slice()), (200, &b"hi"[..]));
    assert_eq!(header(&h, "connection"), Some("keep-alive"));
    assert_eq!(header(&h, "x-target"), Some("/a?q=1"));
    c.0.stream
        .write_all(b"PUT /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n1\r\nd\r\n0\r\nT: 1\r\n\r\nGET /c HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (_, h, body) = c.read();
    assert_eq!((header(&h, "x-method"), body.as_slice()), (Some("PUT"), &b"abcd"[..]));
    let (_, h, _) = c.read();
    assert_eq!((header(&h, "x-target"), header(&h, "connection")), (Some("/c"), Some("close")));
    assert!(c.closed());
    // HTTP/1.0 closes unless asked to keep alive.
    let mut c = Raw::to(server.addr);
    c.0.stream.write_all(b"GET /d HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(c.read().0, 200);
    assert!(c.closed());
}

#[test]
fn expect_continue_is_answered_before_the_body() {
    let server = serve(Echo::default()).unwrap();
    let mut c = Raw::to(server.addr);
    c.0.stream.write_all(b"POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n").unwrap();
    let mut line = String::new();
    c.0.reader.read_line(&mut line).unwrap();
    assert_eq!(line, "HTTP/1.1 100 Continue\r\n");
    c.0.reader.read_line(&mut line).unwrap();
    c.0.stream.write_all(b"ok").unwrap();
    assert_eq!(c.read().2, b"ok");
}

#[test]
fn limits_give_413_431_and_malformed_requests_400() {
    let echo = Echo::default();
    let bad = echo.bad.clone();
    let server = serve_with(echo, Limits { max_header: 8 * 1024, max_body: 10 }).unwrap();
    // Declared too long: refused before any of it is read.
    let mut c = Raw::to(server.addr);
    c.0.stream.write_all(b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n").unwrap();
    let (status, h, _) = c.read();
    assert_eq!((status, header(&h, "connection")), (413, Some("close")));
    assert!(c.closed());
    // Chunked past the limit: refused once the limit is passed.
    let mut c = Raw::to(server.addr);
    c.0.stream.write_all(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n").unwrap();
    assert_eq!(c.read().0, 413);
    assert!(c.closed());
    // Header block over the limit, with more still being sent.
    let mut c = Raw::to(server.addr);
    let mut raw = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..20 {
        raw.extend(format!("X-{i}: {}\r\n", "a".repeat(1000)).as_bytes());
    }
    let _ = c.0.stream.write_all(&raw);
    assert_eq!(c.read().0, 431);
    for raw in [
        &b"GET / HTTP/1.1\r\nno colon\r\n\r\n"[..],
        b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"GARBAGE\r\n\r\n",
    ] {
        let mut c = Raw::to(server.addr);
        c.0.stream.write_all(raw).unwrap();
        assert_eq!(c.read().0, 400, "{}", String::from_utf8_lossy(raw));
    }
    let mut c = Raw::to(server.addr);
    c.0.stream.write_all(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").unwrap();
    assert_eq!(c.read().0, 400);
    drop(server);
    let mut seen = bad.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, [400, 400, 400, 400, 400, 400, 413, 413, 431]);
}

#[test]
fn a_slow_handler_does_not_hold_up_other_connections() {
    let server = serve(Echo::default()).unwrap();
    let addr = server.addr;
    let slow = std::thread::spawn(move || {
        let mut c = Raw::to(addr);
        c.0.stream.write_all(b"GET /slow HTTP/1.1\r\n\r\n").unwrap();
        c.read().0
    });
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    let r = request("POST", &server.url_for("/fast"), &[], b"x".to_vec(), Duration::from_secs(5)).unwrap();
    assert_eq!(r.status, 200);
    assert!(start.elapsed() < Duration::from_millis(700), "{:?}", start.elapsed());
    assert_eq!(slow.join().unwrap(), 200);
}

#[test]
fn client_sends_headers_and_reads_bodies_and_events() {
    let server = serve(Echo::default()).unwrap();
    let url = server.url_for("/x?y").replace("127.0.0.1", "localhost");
    let headers = [("authorization".to_string(), "Bearer t".to_string())];
    let r = request("POST", &url, &headers, b"{}".to_vec(), Duration::from_secs(5)).unwrap();
    assert_eq!((r.status, r.header("x-target"), r.header("x-auth")), (200, Some("/x?y"), Some("Bearer t")));
    assert_eq!(r.body().unwrap(), b"{}");

    let mut r = request("GET", &server.url_for("/events"), &[], Vec::new(), Duration::from_secs(5)).unwrap();
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert!(r.header("content-length").is_none());
    let mut got = Vec::new();
    while let Some(ev) = r.next_event().unwrap() {
        got.push((ev.event, ev.data));
    }
    assert_eq!(got, [("n".to_string(), "0".to_string()), ("n".into(), "1".into()), ("n".into(), "2".into())]);

    // Events arrive as they are sent, not when the stream ends.
    let mut r = request("GET", &server.url_for("/hang"), &[], Vec::new(), Duration::from_secs(5)).unwrap();
    assert_eq!(r.next_event().unwrap().unwrap().data, "0");
    drop(r);
}

#[test]
fn client_times_out_and_reports_refused_connections() {
    let server = serve(Echo::default()).unwrap();
    let start = Instant::now();
    let r = request("GET", &server.url_for("/slow"), &[], Vec::new(), Duration::from_millis(50));
    assert_eq!(r.err(), Some(ClientError::TimedOut));
    assert!(start.elapsed() < Duration::from_millis(700), "{:?}", start.elapsed());
    let addr = server.addr;
    drop(server);
    match request("GET", &format!("http://{addr}/"), &[], Vec::new(), Duration::from_secs(5)) {
        Err(ClientError::Failed(m)) => assert!(m.starts_with(&format!("connect {addr}")), "{m}"),
        other => panic!("{:?}", other.map(|r| r.status)),
    }
    assert!(request("GET", "https://x/", &[], Vec::new(), Duration::from_secs(1)).is_err());
}

#[test]
fn shutdown_is_prompt_and_closes_every_connection() {
    let server = serve(Echo::default()).unwrap();
    let addr = server.addr;
    let mut idle = Raw::to(addr);
    idle.0.stream.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(idle.read().0, 200);
    let mut half = Raw::to(addr);
    half.0.stream.write_all(b"POST / HTTP/1.1\r\nContent-Le").unwrap();
    let mut streaming = request("GET", &server.url_for("/hang"), &[], Vec::new(), Duration::from_secs(5)).unwrap();
    assert!(streaming.next_event().unwrap().is_some());
    let start = Instant::now();
    server.shutdown();
    assert!(start.elapsed() < Duration::from_secs(1), "{:?}", start.elapsed());
    assert!(idle.closed());
    assert!(half.closed());
    let mut rest = Ok(Some(loopback_http::sse::Event::default()));
    while let Ok(Some(_)) = rest {
        rest = streaming.next_event();
    }
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn many_servers_start_and_stop_quickly() {
    let start = Instant::now();
    for _ in 0..200 {
        let s = serve(Echo::default()).unwrap();
        let r = request("POST", &s.url_for("/"), &[], b"1".to_vec(), Duration::from_secs(5)).unwrap();
        assert_eq!(r.body().unwrap(), b"1");
    }
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

#[test]
fn in_memory_answers_match_the_wire() {
    let out = answer_bytes(b"POST /m HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /n HTTP/1.1\r\n\r\n");
    let text = String::from_utf8_lossy(&out);
    assert_eq!(text.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{text}");
    assert!(text.contains("\r\n\r\nabc"), "{text}");
    assert!(String::from_utf8_lossy(&answer_bytes(b"\x00\x01 nonsense\r\n\r\n")).starts_with("HTTP/1.1 400 "));
    assert!(answer_bytes(b"").is_empty());
    assert!(answer_bytes(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nab").is_empty());
}
