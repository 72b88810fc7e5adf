//! Hand-written HTTP/1.1 on loopback for the fakes: keep-alive, one thread
//! per connection, every limit enforced before buffering so a hostile peer
//! gets 400/413 rather than our memory. What to answer is a [`Handler`]'s job.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use std::sync::Condvar;
use std::time::Instant;

/// Largest request header block (request line, headers, final blank line).
pub const MAX_HEADER: usize = 64 * 1024;
/// Largest request body; matches the stdio line limit.
pub const MAX_BODY: usize = crate::wire::MAX_LINE;

/// Longest chunk-size line (sizes plus extensions) in a chunked body.
const MAX_CHUNK_LINE: usize = 4096;

/// How often the accept loop looks at the stop flag while idle.
const ACCEPT_POLL: Duration = Duration::from_millis(10);

/// A stop flag whose sleeps end early once raised, so delayed answers never
/// hold up EOF handling or server shutdown.
#[derive(Clone, Default)]
pub struct Stopper {
    inner: Arc<(Mutex<bool>, Condvar)>,
}

impl Stopper {
    pub fn stop(&self) {
        let (lock, cv) = &*self.inner;
        if let Ok(mut stopped) = lock.lock() {
            *stopped = true;
        }
        cv.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        self.inner.0.lock().map(|s| *s).unwrap_or(true)
    }

    /// Sleeps for `d` unless stopped first.
    pub fn sleep(&self, d: Duration) {
        let deadline = Instant::now() + d;
        let (lock, cv) = &*self.inner;
        let Ok(mut stopped) = lock.lock() else { return };
        while !*stopped {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            match cv.wait_timeout(stopped, left) {
                Ok((guard, _)) => stopped = guard,
                Err(_) => return,
            }
        }
    }
}

/// Answers requests. `bad_request` hears about requests that could not be
/// parsed (they are answered with the status given).
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, req: &Request) -> Response;
    fn bad_request(&self, _status: u16, _error: &str) {}
}


/// A running server; stops (and joins every thread) on [`shutdown`] or drop.
///
/// [`shutdown`]: HttpServer::shutdown
pub struct HttpServer {
    pub addr: SocketAddr,
    stopper: Stopper,
    accept: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url_for(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.addr.port())
    }

    pub fn shutdown(self) {
        drop(self)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stopper.stop();
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Binds an ephemeral loopback port and serves on background threads until
/// `stopper` stops or the server is dropped.
pub fn serve<H: Handler>(handler: H, stopper: Stopper, thread_name: &str) -> io::Result<HttpServer> {
    let listener = TcpListener::bind(("127.0.0.1", 0))?;
    // Non-blocking accept lets the loop notice shutdown without a wake-up
    // connection that could itself fail.
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let handler = Arc::new(handler);
    let stop = stopper.clone();
    let name = thread_name.to_string();
    let accept = std::thread::Builder::new()
        .name(format!("{name}-accept"))
        .spawn(move || accept_loop(listener, handler, stop, &name))?;
    Ok(HttpServer { addr, stopper, accept: Some(accept) })
}

fn accept_loop<H: Handler>(listener: TcpListener, handler: Arc<H>, stopper: Stopper, name: &str) {
    // Clones of live sockets, so shutdown can unblock their threads' reads.
    let live: Arc<Mutex<HashMap<u64, TcpStream>>> = Arc::default();
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    while !stopper.is_stopped() {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            // WouldBlock when idle; anything else (e.g. out of fds) must not spin.
            Err(_) => {
                stopper.sleep(ACCEPT_POLL);
                continue;
            }
        };
        let Ok(clone) = stream.try_clone() else { continue };
        if stream.set_nonblocking(false).is_err() {
            continue;
        }
        next_id += 1;
        let id = next_id;
        if let Ok(mut l) = live.lock() {
            l.insert(id, clone);
        }
        let (handler, live2) = (handler.clone(), live.clone());
        let spawned = std::thread::Builder::new().name(format!("{name}-conn")).spawn(move || {
            serve_connection(&stream, handler.as_ref());
            if let Ok(mut l) = live2.lock() {
                l.remove(&id);
            }
        });
        match spawned {
            Ok(h) => workers.push(h),
            Err(_) => {
                // No thread to serve it: hang up rather than leave the peer waiting.
                if let Some(s) = live.lock().ok().and_then(|mut l| l.remove(&id)) {
                    let _ = s.shutdown(Shutdown::Both);
                }
            }
        }
        // Reap finished connections so a long run does not accumulate handles.
        let (done, running): (Vec<_>, Vec<_>) = workers.into_iter().partition(|h| h.is_finished());
        done.into_iter().for_each(|h| drop(h.join()));
        workers = running;
    }
    if let Ok(l) = live.lock() {
        for s in l.values() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
    for h in workers {
        let _ = h.join();
    }
}

pub struct Request {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub keep_alive: bool,
}

impl Request {
    /// First value of a header (names are stored lower-cased).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

enum ReadError {
    /// The peer went away or broke the stream; nothing to answer.
    Closed,
    /// Malformed or oversized: answer with this status, then close.
    Bad(u16, String),
}

impl From<io::Error> for ReadError {
    fn from(_: io::Error) -> Self {
        ReadError::Closed
    }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn empty(status: u16) -> Response {
        Response { status, headers: Vec::new(), body: Vec::new() }
    }

    pub fn json(status: u16, v: &Value) -> Response {
        let headers = vec![("content-type", "application/json".to_string())];
        Response { status, headers, body: v.to_string().into_bytes() }
    }
}

fn serve_connection<H: Handler>(stream: &TcpStream, handler: &H) {
    let mut reader = BufReader::new(stream);
    let mut writer = stream;
    loop {
        let req = match read_request(&mut reader, &mut writer) {
            Ok(Some(r)) => r,
            Ok(None) | Err(ReadError::Closed) => return,
            Err(ReadError::Bad(status, error)) => {
                handler.bad_request(status, &error);
                let _ = write_response(&mut writer, &Response::empty(status), false);
                linger_close(stream);
                return;
            }
        };
        let resp = handler.handle(&req);
        if write_response(&mut writer, &resp, req.keep_alive).is_err() || !req.keep_alive {
            return;
        }
    }
}

/// Closing with unread input makes the kernel send a reset, which can
/// destroy our error response before the peer reads it; so stop writing,
/// then drain (bounded in bytes and time) what the peer is still sending.
fn linger_close(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let _ = io::copy(&mut stream.take(1024 * 1024), &mut io::sink());
}

/// Parses one request from raw bytes, as the server would read it: Ok(true)
/// for a request, Ok(false) at a clean end, Err(status) for what the server
/// answers 400/413. For fuzzing the parser without sockets.
pub fn parse_request_bytes(raw: &[u8]) -> Result<bool, u16> {
    let mut sink = Vec::new();
    match read_request(&mut std::io::Cursor::new(raw), &mut sink) {
        Ok(r) => Ok(r.is_some()),
        Err(ReadError::Bad(status, _)) => Err(status),
        Err(ReadError::Closed) => Ok(false),
    }
}

/// Reads one request; `Ok(None)` when the peer closes between requests.
/// `writer` is only used for `100 Continue`.
fn read_request(reader: &mut impl BufRead, writer: &mut impl Write) -> Result<Option<Request>, ReadError> {
    let mut budget = MAX_HEADER;
    // RFC 9112 asks servers to skip blank lines before a request line.
    let line = loop {
        match read_crlf_line(reader, &mut budget, "header block")? {
            None => return Ok(None),
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Bad(400, "malformed request line".into()));
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !target.starts_with('/') {
        return Err(ReadError::Bad(400, "malformed request line".into()));
    }
    let mut headers = Vec::new();
    loop {
        let Some(l) = read_crlf_line(reader, &mut budget, "header block")? else {
            return Err(ReadError::Closed);
        };
        if l.is_empty() {
            break;
        }
        let Some((name, value)) = l.split_once(':') else {
            return Err(ReadError::Bad(400, "header line without colon".into()));
        };
        if name.is_empty() || name.contains(|c: char| c.is_ascii_whitespace()) {
            return Err(ReadError::Bad(400, "malformed header name".into()));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut req = Request {
        method: method.to_string(),
        target: target.to_string(),
        headers,
        body: Vec::new(),
        keep_alive: false,
    };
    let connection = req.header("connection").unwrap_or("").to_ascii_lowercase();
    req.keep_alive =
        if version == "HTTP/1.0" { connection.contains("keep-alive") } else { !connection.contains("close") };
    let framing = body_framing(&req)?;
    if framing != Framing::Length(0)
        && req.header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }
    req.body = match framing {
        Framing::Length(n) => read_exact_body(reader, n)?,
        Framing::Chunked => read_chunked(reader, &mut budget)?,
    };
    Ok(Some(req))
}

#[derive(Debug, PartialEq)]
enum Framing {
    Length(usize),
    Chunked,
}

fn body_framing(req: &Request) -> Result<Framing, ReadError> {
    let bad = |m: &str| Err(ReadError::Bad(400, m.to_string()));
    let te: Vec<&str> =
        req.headers.iter().filter(|(n, _)| n == "transfer-encoding").map(|(_, v)| v.as_str()).collect();
    let cl: Vec<&str> =
        req.headers.iter().filter(|(n, _)| n == "content-length").map(|(_, v)| v.as_str()).collect();
    if !te.is_empty() {
        // Only plain chunked; both headers at once is a smuggling pattern.
        if te.len() != 1 || !te[0].eq_ignore_ascii_case("chunked") || !cl.is_empty() {
            return bad("unsupported transfer-encoding");
        }
        return Ok(Framing::Chunked);
    }
    let Some(first) = cl.first() else { return Ok(Framing::Length(0)) };
    if cl.iter().any(|v| v != first) || first.is_empty() || !first.bytes().all(|b| b.is_ascii_digit()) {
        return bad("invalid content-length");
    }
    match first.parse::<usize>() {
        Ok(n) if n <= MAX_BODY => Ok(Framing::Length(n)),
        _ => Err(ReadError::Bad(413, format!("content-length over {MAX_BODY} bytes"))),
    }
}

fn read_exact_body(reader: &mut impl BufRead, n: usize) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    reader.take(n as u64).read_to_end(&mut body)?;
    if body.len() != n {
        return Err(ReadError::Closed);
    }
    Ok(body)
}

fn read_chunked(reader: &mut impl BufRead, budget: &mut usize) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    loop {
        // Chunk lines get their own small limit: many tiny chunks are legal.
        let Some(line) = read_crlf_line(reader, &mut { MAX_CHUNK_LINE }, "chunk size line")? else {
            return Err(ReadError::Closed);
        };
        let hex = line.split(';').next().unwrap_or("").trim();
        let size = match usize::from_str_radix(hex, 16) {
            Ok(s) if !hex.is_empty() => s,
            _ => return Err(ReadError::Bad(400, "malformed chunk size".into())),
        };
        if size == 0 {
            break;
        }
        if size > MAX_BODY - body.len() {
            return Err(ReadError::Bad(413, format!("chunked body over {MAX_BODY} bytes")));
        }
        body.extend(read_exact_body(reader, size)?);
        match read_crlf_line(reader, &mut { MAX_CHUNK_LINE }, "chunk")? {
            Some(l) if l.is_empty() => {}
            Some(_) => return Err(ReadError::Bad(400, "chunk longer than its size".into())),
            None => return Err(ReadError::Closed),
        }
    }
    // Trailer fields, ignored, up to the blank line.
    loop {
        match read_crlf_line(reader, budget, "header block")? {
            Some(l) if l.is_empty() => return Ok(body),
            Some(_) => continue,
            None => return Err(ReadError::Closed),
        }
    }
}

/// One line without its CRLF (or bare LF), charged against `budget`.
/// `None` at EOF before any byte.
fn read_crlf_line(
    reader: &mut impl BufRead,
    budget: &mut usize,
    what: &str,
) -> Result<Option<String>, ReadError> {
    let mut buf = Vec::new();
    // One extra byte tells "exactly at the limit" from "over it".
    let n = reader.take(*budget as u64 + 1).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if n > *budget {
        return Err(ReadError::Bad(400, format!("{what} too long")));
    }
    *budget -= n;
    if buf.last() != Some(&b'\n') {
        return Err(ReadError::Closed); // EOF mid-line
    }
    buf.pop();
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        _ => "Unknown",
    }
}

fn write_response(w: &mut impl Write, resp: &Response, keep_alive: bool) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", resp.status, reason(resp.status));
    for (name, value) in &resp.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n", resp.body.len()));
    head.push_str(if keep_alive { "connection: keep-alive\r\n\r\n" } else { "connection: close\r\n\r\n" });
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&resp.body);
    w.write_all(&bytes)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(raw: &[u8]) -> Result<Option<Request>, ReadError> {
        read_request(&mut Cursor::new(raw), &mut Vec::new())
    }

    fn status_of(r: Result<Option<Request>, ReadError>) -> Option<u16> {
        match r {
            Err(ReadError::Bad(s, _)) => Some(s),
            _ => None,
        }
    }

    #[test]
    fn parses_content_length_and_chunked_bodies() {
        let r = parse(b"POST /mcp?x=1 HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}").ok().flatten().unwrap();
        assert_eq!(
            (r.method.as_str(), r.path(), r.body.as_slice(), r.keep_alive),
            ("POST", "/mcp", &b"{}"[..], true)
        );
        let raw = b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3;ext=1\r\n{\"a\r\n4\r\n\":1}\r\n0\r\nX-Trailer: y\r\n\r\n";
        let r = parse(raw).ok().flatten().unwrap();
        assert_eq!(r.body, b"{\"a\":1}");
        assert!(!r.keep_alive);
        let r = parse(b"GET /mcp HTTP/1.0\r\n\r\n").ok().flatten().unwrap();
        assert!(!r.keep_alive);
        assert!(matches!(parse(b""), Ok(None)));
    }

    #[test]
    fn rejects_malformed_and_oversized_requests() {
        assert_eq!(status_of(parse(b"POST /mcp\r\n\r\n")), Some(400));
        assert_eq!(status_of(parse(b"POST /mcp HTTP/2\r\n\r\n")), Some(400));
        assert_eq!(status_of(parse(b"POST /mcp HTTP/1.1\r\nno colon\r\n\r\n")), Some(400));
        assert_eq!(status_of(parse(b"POST /mcp HTTP/1.1\r\nContent-Length: -1\r\n\r\n")), Some(400));
        assert_eq!(
            status_of(parse(b"POST /mcp HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")),
            Some(400)
        );
        assert_eq!(
            status_of(parse(b"POST /mcp HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n")),
            Some(413)
        );
        assert_eq!(status_of(parse(b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n")), Some(400));
        assert_eq!(
            status_of(parse(b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")),
            Some(400)
        );
        assert_eq!(
            status_of(parse(b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffff\r\n")),
            Some(413)
        );
        let mut big = b"GET /mcp HTTP/1.1\r\nX: ".to_vec();
        big.extend(vec![b'a'; MAX_HEADER]);
        big.extend_from_slice(b"\r\n\r\n");
        assert_eq!(status_of(parse(&big)), Some(400));
        // Truncated input is a hang-up, not a 400.
        assert!(matches!(
            parse(b"POST /mcp HTTP/1.1\r\nContent-Length: 5\r\n\r\n{}"),
            Err(ReadError::Closed)
        ));
    }

    #[test]
    fn sends_100_continue_only_when_asked_and_a_body_follows() {
        let mut out = Vec::new();
        let raw = b"POST /mcp HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}";
        assert!(read_request(&mut Cursor::new(&raw[..]), &mut out).is_ok());
        assert_eq!(out, b"HTTP/1.1 100 Continue\r\n\r\n");
        let mut out = Vec::new();
        let raw = b"POST /mcp HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 999999999\r\n\r\n";
        assert_eq!(status_of(read_request(&mut Cursor::new(&raw[..]), &mut out)), Some(413));
        assert!(out.is_empty());
    }
}