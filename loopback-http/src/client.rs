//! A blocking HTTP/1.1 client for loopback servers: one request per
//! connection, the answer's head first, then its body as a whole or as
//! server-sent events while they arrive, each wait bounded by a timeout.
//! The exchange runs on the calling thread (`Handle::block_on`); the
//! runtime's thread drives the socket readiness and the timers.

use std::collections::VecDeque;
use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::time::Duration;

use hyper::body::{Body as _, Bytes, Incoming};
use hyper::header::{HeaderName, HeaderValue, HOST};
use tokio::net::TcpStream;

use crate::io::Tokio;
use crate::server::{Body, Limits};
use crate::{runtime, sse};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// Nothing arrived within the timeout.
    TimedOut,
    /// Could not connect, the peer broke the exchange, or the request
    /// itself was unusable.
    Failed(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::TimedOut => f.write_str("timed out"),
            ClientError::Failed(m) => f.write_str(m),
        }
    }
}

type Conn = hyper::client::conn::http1::Connection<Tokio<TcpStream>, Body>;

/// The answer's status and headers; the body is read with [`Reply::body`]
/// or [`Reply::next_event`]. Dropping it hangs up.
pub struct Reply {
    pub status: u16,
    /// Names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    timeout: Duration,
    body: Incoming,
    conn: Pin<Box<Conn>>,
    conn_done: bool,
    left: usize,
    ended: bool,
    events: sse::Parser,
    ready: VecDeque<sse::Event>,
}

/// Sends `method` to `url` (`http://HOST:PORT/path`; `localhost` means
/// 127.0.0.1) with `headers` and `body`, on a new connection, and waits at
/// most `timeout` for the answer's head. Sets `host` and `content-length`.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Reply, ClientError> {
    let (authority, path) = split_url(url)?;
    let bad = |e: &dyn fmt::Display| ClientError::Failed(format!("cannot send this request: {e}"));
    let mut req = hyper::Request::new(Body::Full(Some(Bytes::from(body))));
    *req.method_mut() = method.parse().map_err(|e| bad(&e))?;
    *req.uri_mut() = path.parse().map_err(|e| bad(&e))?;
    req.headers_mut().insert(HOST, HeaderValue::from_str(&authority).map_err(|e| bad(&e))?);
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(&e))?;
        req.headers_mut().append(name, HeaderValue::from_str(value).map_err(|e| bad(&e))?);
    }
    let exchange = async {
        let stream = TcpStream::connect(&authority).await.map_err(|e| format!("connect {authority}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake::<_, Body>(Tokio::new(stream)).await.map_err(|e| e.to_string())?;
        let mut conn = Box::pin(conn);
        let mut conn_done = false;
        let sent = sender.send_request(req);
        let mut sent = pin!(sent);
        let resp = poll_fn(|cx| {
            if !conn_done && conn.as_mut().poll(cx).is_ready() {
                conn_done = true;
            }
            sent.as_mut().poll(cx)
        })
        .await
        .map_err(|e| describe(&e))?;
        Ok::<_, String>((resp, conn, conn_done))
    };
    let (resp, conn, conn_done) = within(timeout, exchange)?.map_err(ClientError::Failed)?;
    let (parts, body) = resp.into_parts();
    let headers = parts
        .headers
        .iter()
        .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).trim().to_string()))
        .collect();
    Ok(Reply {
        status: parts.status.as_u16(),
        headers,
        timeout,
        body,
        conn,
        conn_done,
        left: Limits::default().max_body,
        ended: false,
        events: sse::Parser::default(),
        ready: VecDeque::new(),
    })
}

/// Runs `fut` on the calling thread, giving up after `timeout`.
fn within<F: Future>(timeout: Duration, fut: F) -> Result<F::Output, ClientError> {
    // The timer is made inside: it needs the runtime's context.
    runtime().block_on(async { tokio::time::timeout(timeout, fut).await }).map_err(|_| ClientError::TimedOut)
}

impl Reply {
    /// First value of a header (`name` lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The whole body (at most 16 MiB), waiting at most the timeout for
    /// each piece.
    pub fn body(mut self) -> Result<Vec<u8>, ClientError> {
        let mut out = Vec::new();
        while let Some(piece) = self.piece()? {
            out.extend_from_slice(&piece);
        }
        Ok(out)
    }

    /// The next server-sent event of a `text/event-stream` body, waiting at
    /// most the timeout for each piece; `None` once the body has ended.
    pub fn next_event(&mut self) -> Result<Option<sse::Event>, ClientError> {
        loop {
            if let Some(ev) = self.ready.pop_front() {
                return Ok(Some(ev));
            }
            match self.piece()? {
                Some(piece) => self.events.push(&piece),
                None => return Ok(self.events.finish()),
            }
            while let Some(ev) = self.events.next_event() {
                self.ready.push_back(ev);
            }
        }
    }

    fn piece(&mut self) -> Result<Option<Bytes>, ClientError> {
        while !self.ended {
            let (body, conn, conn_done) = (&mut self.body, &mut self.conn, &mut self.conn_done);
            let frame = within(
                self.timeout,
                poll_fn(|cx| {
                    if !*conn_done && conn.as_mut().poll(cx).is_ready() {
                        *conn_done = true;
                    }
                    Pin::new(&mut *body).poll_frame(cx)
                }),
            )?;
            match frame {
                None => self.ended = true,
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue };
                    if data.len() > self.left {
                        return Err(ClientError::Failed(format!(
                            "answer body over {} bytes",
                            Limits::default().max_body
                        )));
                    }
                    self.left -= data.len();
                    return Ok(Some(data));
                }
                Some(Err(e)) => return Err(ClientError::Failed(describe(&e))),
            }
        }
        Ok(None)
    }
}

fn describe(e: &hyper::Error) -> String {
    match std::error::Error::source(e) {
        Some(s) => format!("{e}: {s}"),
        None => e.to_string(),
    }
}

/// `http://127.0.0.1:PORT/path` -> ("127.0.0.1:PORT", "/path"). Loopback HTTP only.
fn split_url(url: &str) -> Result<(String, String), ClientError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| ClientError::Failed(format!("only http:// URLs are supported: {url}")))?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    Ok((host.replace("localhost", "127.0.0.1"), path.to_string()))
}
