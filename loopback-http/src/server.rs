//! HTTP/1.1 servers on ephemeral loopback ports: keep-alive, pipelining,
//! chunked bodies and `Expect: 100-continue` as hyper does them; header and
//! body limits enforced while reading, so a hostile peer gets 413/431/400
//! rather than our memory.

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body as _, Bytes, Frame, Incoming, SizeHint};
use hyper::header::{HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH};
use hyper::{StatusCode, Version};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc as chan, oneshot};
use tokio::task::JoinSet;

use crate::io::{Memory, Tokio};
use crate::{runtime, runtime_thread};

/// Size limits of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Request line plus headers; over it the answer is 431.
    pub max_header: usize,
    /// Body after de-chunking; over it the answer is 413, sent as soon as
    /// the declared length or the bytes read so far pass it.
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_header: 64 * 1024, max_body: 16 * 1024 * 1024 }
    }
}

/// Answers requests, on a thread where blocking and sleeping are fine.
/// `bad_request` hears about requests answered before any handler saw them
/// (malformed: 400, header block too large: 431, body too large: 413).
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, req: &Request) -> Response;
    fn bad_request(&self, _status: u16, _error: &str) {}
}

pub struct Request {
    pub method: String,
    /// Path and query, e.g. `/mcp?x=1`.
    pub target: String,
    /// Names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// First value of a header (`name` lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

/// A whole body (sent with `content-length`) or, from [`Response::streaming`],
/// one fed piece by piece (sent chunked), e.g. server-sent events.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    stream: Option<chan::UnboundedReceiver<Bytes>>,
}

impl Response {
    pub fn empty(status: u16) -> Response {
        Response { status, headers: Vec::new(), body: Vec::new(), stream: None }
    }

    pub fn json(status: u16, v: &impl ToString) -> Response {
        Response::bytes(status, "application/json", v.to_string().into_bytes())
    }

    pub fn bytes(status: u16, content_type: &str, body: Vec<u8>) -> Response {
        Response { status, headers: vec![("content-type", content_type.to_string())], body, stream: None }
    }

    /// A response whose body is whatever the [`BodySender`] sends until it
    /// is dropped.
    pub fn streaming(status: u16, content_type: &str) -> (Response, BodySender) {
        let (tx, rx) = chan::unbounded_channel();
        let mut r = Response::bytes(status, content_type, Vec::new());
        r.stream = Some(rx);
        (r, BodySender(tx))
    }
}

/// Feeds a streaming response; dropping it ends the body.
pub struct BodySender(chan::UnboundedSender<Bytes>);

impl BodySender {
    /// False once the peer is gone.
    pub fn send(&self, chunk: impl Into<Vec<u8>>) -> bool {
        self.0.send(Bytes::from(chunk.into())).is_ok()
    }
}

/// A running server; stops on [`Server::shutdown`] or drop, which return
/// once the port is closed and every connection is hung up.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: Option<mpsc::Receiver<()>>,
}

impl Server {
    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url_for(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.addr.port())
    }

    pub fn shutdown(self) {
        drop(self)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Waiting on the runtime's own thread could never end.
        if std::thread::current().id() != runtime_thread() {
            if let Some(done) = self.done.take() {
                let _ = done.recv();
            }
        }
    }
}

/// [`serve_with`] the default [`Limits`].
pub fn serve<H: Handler>(handler: H) -> io::Result<Server> {
    serve_with(handler, Limits::default())
}

/// Binds an ephemeral loopback port and serves it on the process's runtime.
pub fn serve_with<H: Handler>(handler: H, limits: Limits) -> io::Result<Server> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let rt = runtime();
    let listener = {
        let _entered = rt.enter();
        TcpListener::from_std(listener)?
    };
    let (stop, stopped) = oneshot::channel();
    let (finished, done) = mpsc::channel();
    rt.spawn(accept_loop(listener, Arc::new(handler), limits, stopped, finished));
    Ok(Server { addr, stop: Some(stop), done: Some(done) })
}

enum Next {
    Stop,
    Accepted(io::Result<(TcpStream, SocketAddr)>),
}

async fn accept_loop(
    listener: TcpListener,
    handler: Arc<dyn Handler>,
    limits: Limits,
    mut stop: oneshot::Receiver<()>,
    finished: mpsc::Sender<()>,
) {
    let mut conns = JoinSet::new();
    loop {
        let next = poll_fn(|cx| {
            if Pin::new(&mut stop).poll(cx).is_ready() {
                return Poll::Ready(Next::Stop);
            }
            // Reap finished connections.
            while let Poll::Ready(Some(_)) = conns.poll_join_next(cx) {}
            listener.poll_accept(cx).map(Next::Accepted)
        })
        .await;
        match next {
            Next::Stop => break,
            Next::Accepted(Ok((stream, _))) => {
                conns.spawn(serve_tcp(stream, handler.clone(), limits));
            }
            // E.g. out of file descriptors: must not spin.
            Next::Accepted(Err(_)) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
    drop(listener);
    conns.shutdown().await;
    let _ = finished.send(());
}

async fn serve_tcp(mut stream: TcpStream, handler: Arc<dyn Handler>, limits: Limits) {
    let _ = stream.set_nodelay(true);
    if let Err(e) = serve_io(Tokio::deferred(&mut stream), &handler, limits).await {
        report(handler.as_ref(), &e);
    }
    linger(stream).await;
}

/// Ends a connection hyper is done with. Closing with unread input makes
/// the kernel send a reset, which can destroy an error answer before the
/// peer reads it; so stop writing, then drain (bounded in bytes and time)
/// what the peer is still sending.
async fn linger(mut stream: TcpStream) {
    use tokio::io::{AsyncRead, AsyncWrite};
    let _ = poll_fn(|cx| Pin::new(&mut stream).poll_shutdown(cx)).await;
    let drain = async {
        let mut budget = 1024 * 1024usize;
        let mut buf = [0u8; 16 * 1024];
        while budget > 0 {
            let mut rb = tokio::io::ReadBuf::new(&mut buf);
            match poll_fn(|cx| Pin::new(&mut stream).poll_read(cx, &mut rb)).await {
                Ok(()) if !rb.filled().is_empty() => budget = budget.saturating_sub(rb.filled().len()),
                _ => return,
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(500), drain).await;
}

/// Tells the handler about requests hyper itself refused.
fn report(handler: &dyn Handler, e: &hyper::Error) {
    let status = if e.is_parse_too_large() {
        431
    } else if e.is_parse() && e.to_string().starts_with("URI too long") {
        414
    } else if e.is_parse() {
        400
    } else {
        return; // the peer went away or broke the stream: nothing was answered
    };
    handler.bad_request(status, &e.to_string());
}

async fn serve_io<I>(io: I, handler: &Arc<dyn Handler>, limits: Limits) -> hyper::Result<()>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
{
    let handler = handler.clone();
    let service = hyper::service::service_fn(move |req| answer(req, handler.clone(), limits));
    hyper::server::conn::http1::Builder::new()
        // A peer may close its sending side and still wait for the answer.
        .half_close(true)
        .auto_date_header(false)
        .max_header_size(limits.max_header)
        .serve_connection(io, service)
        .await
}

/// The service's error: the peer hung up mid-request, so the connection
/// closes with no answer.
#[derive(Debug)]
struct HungUp;

impl std::fmt::Display for HungUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the peer hung up mid-request")
    }
}

impl std::error::Error for HungUp {}

async fn answer(
    req: hyper::Request<Incoming>,
    handler: Arc<dyn Handler>,
    limits: Limits,
) -> Result<hyper::Response<Body>, HungUp> {
    let (parts, mut body) = req.into_parts();
    let keep_alive = wants_keep_alive(&parts);
    // hyper has already refused malformed or conflicting lengths.
    let declared = parts.headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body as u64) {
        handler.bad_request(413, &format!("content-length over {} bytes", limits.max_body));
        return Ok(closing(413));
    }
    let mut data = Vec::new();
    while let Some(frame) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        match frame {
            Ok(frame) => {
                let Ok(chunk) = frame.into_data() else { continue }; // trailers
                if chunk.len() > limits.max_body - data.len() {
                    handler.bad_request(413, &format!("chunked body over {} bytes", limits.max_body));
                    return Ok(closing(413));
                }
                data.extend_from_slice(&chunk);
            }
            Err(e) if ended_early(&e) => return Err(HungUp),
            Err(e) => {
                // Broken chunked framing.
                handler.bad_request(400, &describe(&e));
                return Ok(closing(400));
            }
        }
    }
    let request = Request {
        method: parts.method.to_string(),
        target: parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_string(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).trim().to_string()))
            .collect(),
        body: data,
    };
    let answered = tokio::task::spawn_blocking(move || handler.handle(&request)).await;
    Ok(match answered {
        Ok(resp) => to_hyper(resp, keep_alive),
        Err(_) => closing(500), // the handler panicked
    })
}

fn wants_keep_alive(parts: &hyper::http::request::Parts) -> bool {
    let tokens = || {
        parts
            .headers
            .get_all(CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
    };
    if tokens().any(|t| t.eq_ignore_ascii_case("close")) {
        return false;
    }
    parts.version == Version::HTTP_11 || tokens().any(|t| t.eq_ignore_ascii_case("keep-alive"))
}

fn ended_early(e: &hyper::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof) {
            return true;
        }
        source = s.source();
    }
    e.is_incomplete_message() || e.is_closed()
}

fn describe(e: &hyper::Error) -> String {
    match std::error::Error::source(e) {
        Some(s) => format!("{e}: {s}"),
        None => e.to_string(),
    }
}

/// An empty answer after which the connection closes.
fn closing(status: u16) -> hyper::Response<Body> {
    let mut r = to_hyper(Response::empty(status), false);
    r.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    r
}

fn to_hyper(resp: Response, keep_alive: bool) -> hyper::Response<Body> {
    let body = match resp.stream {
        Some(rx) => Body::Stream(rx),
        None => Body::Full(Some(Bytes::from(resp.body))),
    };
    let mut out = hyper::Response::new(body);
    *out.status_mut() = StatusCode::from_u16(resp.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in resp.headers {
        // A value that cannot be sent as-is (e.g. a line break) is left out.
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&value)) {
            out.headers_mut().append(n, v);
        }
    }
    if keep_alive && !out.headers().contains_key(CONNECTION) {
        out.headers_mut().insert(CONNECTION, HeaderValue::from_static("keep-alive"));
    }
    out
}

pub(crate) enum Body {
    Full(Option<Bytes>),
    Stream(chan::UnboundedReceiver<Bytes>),
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(b) => Poll::Ready(b.take().filter(|b| !b.is_empty()).map(|b| Ok(Frame::data(b)))),
            Body::Stream(rx) => rx.poll_recv(cx).map(|c| c.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(b) if b.as_ref().is_none_or(Bytes::is_empty))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

/// What the server writes back on one connection whose peer sends `raw`
/// and then closes its sending side, with the default limits and a handler
/// answering every request 200 with its body. For fuzzing the request
/// handling without sockets.
pub fn answer_bytes(raw: &[u8]) -> Vec<u8> {
    struct Echo;
    impl Handler for Echo {
        fn handle(&self, req: &Request) -> Response {
            Response::bytes(200, "application/octet-stream", req.body.clone())
        }
    }
    let (tx, rx) = mpsc::channel();
    let input = raw.to_vec();
    runtime().spawn(async move {
        let mut conn = Memory { input, pos: 0, output: Vec::new() };
        let handler: Arc<dyn Handler> = Arc::new(Echo);
        let _ = serve_io(&mut conn, &handler, Limits::default()).await;
        let _ = tx.send(conn.output);
    });
    rx.recv().unwrap_or_default()
}
