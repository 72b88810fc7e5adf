//! The fake providers' MCP client: stdio child processes and Streamable HTTP
//! on loopback, as the real CLIs connect to the servers they are configured
//! with. What differs between providers is in [`ClientProfile`].

use std::collections::BTreeMap;
use std::io::BufReader;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use loopback_http::ClientError;
use serde_json::{json, Value};

use crate::wire::{self, Line};

const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// How a provider introduces itself to MCP servers.
#[derive(Debug, Clone)]
pub struct ClientProfile {
    /// `clientInfo.name`, `clientInfo.title` (left out when `None`) and
    /// `clientInfo.version`.
    pub name: &'static str,
    pub title: Option<&'static str>,
    pub version: String,
    pub protocol_version: &'static str,
    pub capabilities: Value,
    /// `capabilities.experimental` announced to stdio servers only.
    pub stdio_experimental: Option<Value>,
    /// Claude Code 2.1.332 first asks `server/discover`, falling back on -32601.
    pub probe_discover: bool,
}

/// Where and how to reach one server.
#[derive(Debug, Clone, Default)]
pub struct ServerTarget {
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<std::path::PathBuf>,
    pub url: Option<String>,
    /// Extra HTTP headers, e.g. `Authorization: Bearer ...`.
    pub headers: BTreeMap<String, String>,
}

pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    pub annotations: Option<Value>,
}

pub struct McpConnection {
    pub tools: Vec<Tool>,
    transport: Transport,
    next_id: u64,
    /// The last progressToken handed out on this session (tools/list takes 0).
    progress_token: u64,
    /// A notification went out after the last answer came in.
    unanswered_notification: bool,
}

enum Transport {
    Stdio { child: Child, stdin: ChildStdin, lines: Receiver<Value> },
    Http { url: String, headers: BTreeMap<String, String>, session: Option<String> },
}

impl Transport {
    fn is_stdio(&self) -> bool {
        matches!(self, Transport::Stdio { .. })
    }

    /// Starts (stdio) or addresses (HTTP) one server, without any handshake.
    fn open(settings: &ServerTarget, env: &BTreeMap<String, String>) -> Result<Transport, String> {
        if let Some(url) = &settings.url {
            Ok(Transport::Http { url: url.clone(), headers: settings.headers.clone(), session: None })
        } else if let Some(cmd) = &settings.command {
            let mut command = Command::new(cmd);
            command
                .args(&settings.args)
                .env_clear()
                .envs(env)
                .envs(&settings.env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null());
            if let Some(cwd) = &settings.cwd {
                command.current_dir(cwd);
            }
            let mut child = command.spawn().map_err(|e| format!("failed to start `{cmd}`: {e}"))?;
            let stdin = child.stdin.take().ok_or("no stdin")?;
            let stdout = child.stdout.take().ok_or("no stdout")?;
            let (tx, lines) = mpsc::channel();
            std::thread::spawn(move || {
                let mut r = BufReader::new(stdout);
                loop {
                    match wire::read_line(&mut r, wire::MAX_LINE) {
                        Ok(Line::Json(v)) => {
                            if tx.send(v).is_err() {
                                break;
                            }
                        }
                        Ok(Line::Garbage { .. }) | Ok(Line::TooLong { .. }) => continue,
                        Ok(Line::Eof) | Err(_) => break,
                    }
                }
            });
            Ok(Transport::Stdio { child, stdin, lines })
        } else {
            Err("server has neither `command` nor `url`".into())
        }
    }
}

impl McpConnection {
    fn new(transport: Transport) -> McpConnection {
        McpConnection { tools: Vec::new(), transport, next_id: 0, progress_token: 0, unanswered_notification: false }
    }

    /// Starts (stdio) or reaches (HTTP) the server, initializes it and lists
    /// its tools, as Codex does: `notifications/initialized` without params,
    /// then (HTTP) the optional GET stream, then tools/list with progress
    /// token 0. `env` is the provider's own environment, which stdio servers
    /// inherit.
    pub fn connect(
        settings: &ServerTarget,
        env: &BTreeMap<String, String>,
        profile: &ClientProfile,
    ) -> Result<McpConnection, String> {
        let transport = Transport::open(settings, env)?;
        let mut conn = McpConnection::new(transport);
        if profile.probe_discover {
            // Any error (the usual -32601) means: fall back to initialize.
            let _ = conn.request("server/discover", json!({}));
        }
        conn.request("initialize", initialize_params(profile, conn.transport.is_stdio()))?;
        conn.notify("notifications/initialized", Value::Null)?;
        conn.open_stream();
        let listed = conn.request("tools/list", json!({"_meta": {"progressToken": conn.progress_token}}))?;
        conn.tools = parse_tools(&listed);
        Ok(conn)
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Calls a tool with `meta` as `_meta`, plus this session's next
    /// progressToken.
    pub fn call(&mut self, tool: &str, arguments: &Value, meta: Value) -> Result<Value, String> {
        self.call_answering(tool, arguments, meta, None)
    }

    /// [`McpConnection::call`]; a request the server sends meanwhile (stdio:
    /// its `elicitation/create`) gets `on_request(method, params)` as its
    /// result, or is left unanswered without a handler.
    pub fn call_answering(&mut self, tool: &str, arguments: &Value, mut meta: Value, on_request: Option<&mut dyn FnMut(&str, &Value) -> Value>) -> Result<Value, String> {
        self.progress_token += 1;
        if let Some(m) = meta.as_object_mut() {
            m.insert("progressToken".into(), json!(self.progress_token));
        }
        self.request_answering("tools/call", json!({"name": tool, "arguments": arguments, "_meta": meta}), on_request)
    }

    /// Sends a notification; `params` Null is left out.
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.unanswered_notification = true;
        match &mut self.transport {
            Transport::Stdio { stdin, .. } => wire::write_message(stdin, &msg).map_err(|e| e.to_string()),
            Transport::Http { .. } => self.http_post(&msg).map(|_| ()),
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.request_answering(method, params, None)
    }

    fn request_answering(&mut self, method: &str, params: Value, mut on_request: Option<&mut dyn FnMut(&str, &Value) -> Value>) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let reply = match &mut self.transport {
            Transport::Stdio { stdin, lines, .. } => {
                wire::write_message(stdin, &msg).map_err(|e| format!("MCP server closed its input: {e}"))?;
                loop {
                    let v = lines
                        .recv_timeout(CALL_TIMEOUT)
                        .map_err(|_| format!("MCP server did not answer `{method}`"))?;
                    if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                        break v;
                    }
                    if let (Some(handler), Some(m), Some(rid)) = (on_request.as_mut(), v.get("method").and_then(Value::as_str), v.get("id")) {
                        let result = handler(m, v.get("params").unwrap_or(&Value::Null));
                        let _ = wire::write_message(stdin, &json!({"jsonrpc": "2.0", "id": rid, "result": result}));
                    }
                }
            }
            Transport::Http { .. } => self
                .http_post(&msg)?
                .ok_or_else(|| format!("MCP server sent no body for `{method}`"))?,
        };
        self.unanswered_notification = false;
        if let Some(err) = reply.get("error") {
            return Err(err.get("message").and_then(Value::as_str).unwrap_or("MCP error").to_string());
        }
        Ok(reply.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Opens the optional server-to-client SSE stream (GET), as both real
    /// CLIs do after `notifications/initialized`; whatever the answer (our
    /// servers say 405), the session carries on and the stream is not read.
    fn open_stream(&mut self) {
        let Transport::Http { url, headers, session } = &self.transport else { return };
        let mut head = vec![("accept".to_string(), "text/event-stream".to_string()), ("connection".to_string(), "close".to_string())];
        head.extend(headers.iter().map(|(n, v)| (n.clone(), v.clone())));
        if let Some(s) = session {
            head.push(("mcp-session-id".into(), s.clone()));
        }
        let _ = loopback_http::request("GET", url, &head, Vec::new(), STREAM_TIMEOUT);
    }

    /// One POST on a fresh loopback connection. Returns the JSON body, if any.
    fn http_post(&mut self, msg: &Value) -> Result<Option<Value>, String> {
        self.http_post_within(msg, CALL_TIMEOUT)
    }

    /// [`Self::http_post`] waiting at most `timeout` for each piece of the
    /// answer; one that does not come in time gives the error [`HTTP_TIMED_OUT`].
    fn http_post_within(&mut self, msg: &Value, timeout: Duration) -> Result<Option<Value>, String> {
        let Transport::Http { url, headers, session } = &mut self.transport else {
            return Err("not an HTTP server".into());
        };
        let mut head: Vec<(String, String)> = [
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("connection", "close"),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
        head.extend(headers.iter().map(|(n, v)| (n.clone(), v.clone())));
        if let Some(s) = session {
            head.push(("mcp-session-id".into(), s.clone()));
        }
        let failed = |e: ClientError| match e {
            ClientError::TimedOut => HTTP_TIMED_OUT.to_string(),
            ClientError::Failed(m) => m,
        };
        let timeout = timeout.max(Duration::from_millis(1));
        let mut reply = loopback_http::request("POST", url, &head, msg.to_string().into_bytes(), timeout).map_err(failed)?;
        if let Some(s) = reply.header("mcp-session-id") {
            *session = Some(s.to_string());
        }
        if reply.status == 401 {
            return Err("MCP server refused the bearer token (401)".into());
        }
        if !(200..300).contains(&reply.status) {
            return Err(format!("MCP server answered HTTP {}", reply.status));
        }
        if reply.header("content-type").is_some_and(|c| c.starts_with("text/event-stream")) {
            // The answer is the first event carrying a JSON-RPC response;
            // server requests and notifications before it are passed over.
            while let Some(event) = reply.next_event().map_err(failed)? {
                let v: Value = serde_json::from_str(event.data.trim()).map_err(|e| format!("bad JSON from MCP server: {e}"))?;
                if v.get("method").is_none() {
                    return Ok(Some(v));
                }
            }
            return Ok(None);
        }
        let raw = reply.body().map_err(failed)?;
        let text = String::from_utf8_lossy(&raw);
        if text.trim().is_empty() {
            return Ok(None);
        }
        serde_json::from_str(text.trim()).map(Some).map_err(|e| format!("bad JSON from MCP server: {e}"))
    }
}

/// Error text of an HTTP exchange whose answer did not come in time.
const HTTP_TIMED_OUT: &str = "timed out waiting for the MCP server";

/// How long the optional GET stream may take to be answered or refused.
const STREAM_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a stdio server is given, before it is stopped, to read a
/// notification sent last (such as a `notifications/cancelled`): the real
/// CLIs take longer than that to exit after sending one.
const SETTLE: Duration = Duration::from_millis(200);

/// The `initialize` params of [`McpConnection::connect`].
fn initialize_params(profile: &ClientProfile, stdio: bool) -> Value {
    let mut client_info = json!({"name": profile.name, "version": profile.version});
    if let Some(title) = profile.title {
        client_info["title"] = json!(title);
    }
    let mut capabilities = profile.capabilities.clone();
    if let (true, Some(experimental)) = (stdio, &profile.stdio_experimental) {
        capabilities["experimental"] = experimental.clone();
    }
    json!({"protocolVersion": profile.protocol_version, "capabilities": capabilities, "clientInfo": client_info})
}

/// A handshake spelled out message by message, for a provider whose exact
/// wire shape matters (Claude Code: a string-id `server/discover` probe,
/// request ids counted from 0, its full clientInfo).
#[derive(Debug, Clone)]
pub struct Handshake {
    /// `(id, params)` of a `server/discover` probe sent first; whatever the
    /// answer (usually -32601), `initialize` follows.
    pub discover: Option<(Value, Value)>,
    /// The complete `initialize` params.
    pub initialize: Value,
    /// Id of `initialize`; later requests count up from it.
    pub first_id: u64,
}

/// What [`McpConnection::connect_with`] learned besides the connection.
#[derive(Debug, Clone)]
pub struct Greeting {
    /// The `initialize` result (serverInfo, capabilities).
    pub initialize: Value,
    /// The `tools/list` entries as sent, input schemas and all.
    pub tools: Vec<Value>,
}

/// The error a client answers a server request it does not serve with.
pub fn method_not_found() -> Value {
    json!({"code": -32601, "message": "Method not found"})
}

/// Why [`McpConnection::call_with_timeout`] brought back no result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallFailure {
    /// No answer within the timeout; `notifications/cancelled` was sent.
    TimedOut,
    /// The server answered with a JSON-RPC error.
    Rpc { code: i64, message: String },
    /// The transport failed: the server exited, HTTP error, bad JSON.
    Transport(String),
}

impl McpConnection {
    /// Like [`McpConnection::connect`], with every handshake message given in
    /// full by the caller.
    pub fn connect_with(
        settings: &ServerTarget,
        env: &BTreeMap<String, String>,
        handshake: &Handshake,
    ) -> Result<(McpConnection, Greeting), String> {
        let transport = Transport::open(settings, env)?;
        let mut conn = McpConnection::new(transport);
        let mut no_requests = |_: &str, _: &Value| Err(method_not_found());
        if let Some((id, params)) = &handshake.discover {
            let _ = conn.exchange(id.clone(), "server/discover", params.clone(), CALL_TIMEOUT, None, &mut no_requests);
        }
        let first = handshake.first_id;
        let initialize = conn
            .exchange(json!(first), "initialize", handshake.initialize.clone(), CALL_TIMEOUT, None, &mut no_requests)
            .map_err(|e| describe_failure("initialize", &e))?;
        conn.next_id = first;
        let msg = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        match &mut conn.transport {
            Transport::Stdio { stdin, .. } => wire::write_message(stdin, &msg).map_err(|e| e.to_string())?,
            Transport::Http { .. } => {
                conn.http_post(&msg)?;
            }
        }
        conn.open_stream();
        conn.next_id += 1;
        let listed = conn
            .exchange(json!(conn.next_id), "tools/list", Value::Null, CALL_TIMEOUT, None, &mut no_requests)
            .map_err(|e| describe_failure("tools/list", &e))?;
        conn.tools = parse_tools(&listed);
        let tools = listed.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
        Ok((conn, Greeting { initialize, tools }))
    }

    /// Calls a tool and waits at most `timeout`. `meta` builds `_meta` from
    /// the request id (Claude Code's progressToken is that id). On expiry
    /// the server gets `notifications/cancelled` with `cancel_reason`.
    /// Server requests arriving meanwhile (stdio) are answered with what
    /// `on_request(method, params)` returns: a result, or (Err) a JSON-RPC
    /// error object such as [`method_not_found`].
    pub fn call_with_timeout(
        &mut self,
        tool: &str,
        arguments: &Value,
        meta: impl FnOnce(u64) -> Value,
        timeout: Duration,
        cancel_reason: &str,
        on_request: &mut dyn FnMut(&str, &Value) -> Result<Value, Value>,
    ) -> Result<Value, CallFailure> {
        self.next_id += 1;
        let id = self.next_id;
        let params = json!({"name": tool, "arguments": arguments, "_meta": meta(id)});
        self.exchange(json!(id), "tools/call", params, timeout, Some(cancel_reason), on_request)
    }

    /// Ends the connection as the real CLIs do at exit: a stdio server is
    /// killed with its input still open, so it never reads EOF. A
    /// notification sent after the last answer (such as a
    /// `notifications/cancelled`) is first given up to `grace` to be read.
    pub fn close(self, grace: Duration) {
        if self.transport.is_stdio() && self.unanswered_notification {
            std::thread::sleep(grace.min(SETTLE));
        }
        // Drop kills the server before its input closes.
    }

    /// One request and its answer, with a deadline. `params` Null is left out.
    fn exchange(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel_reason: Option<&str>,
        on_request: &mut dyn FnMut(&str, &Value) -> Result<Value, Value>,
    ) -> Result<Value, CallFailure> {
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        let deadline = std::time::Instant::now() + timeout;
        let reply = match &mut self.transport {
            Transport::Stdio { stdin, lines, .. } => {
                wire::write_message(stdin, &msg)
                    .map_err(|e| CallFailure::Transport(format!("MCP server closed its input: {e}")))?;
                loop {
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    let v = match lines.recv_timeout(left) {
                        Ok(v) => v,
                        Err(mpsc::RecvTimeoutError::Timeout) => break None,
                        Err(mpsc::RecvTimeoutError::Disconnected) => {
                            return Err(CallFailure::Transport("MCP server closed the connection".into()))
                        }
                    };
                    match (v.get("method").and_then(Value::as_str), v.get("id")) {
                        (Some(m), Some(rid)) => {
                            let answer = match on_request(m, v.get("params").unwrap_or(&Value::Null)) {
                                Ok(result) => json!({"jsonrpc": "2.0", "id": rid, "result": result}),
                                Err(error) => json!({"jsonrpc": "2.0", "id": rid, "error": error}),
                            };
                            let _ = wire::write_message(stdin, &answer);
                        }
                        (None, Some(rid)) if *rid == id => break Some(v),
                        _ => {}
                    }
                }
            }
            Transport::Http { .. } => match self.http_post_within(&msg, timeout) {
                Ok(Some(v)) => Some(v),
                Ok(None) => return Err(CallFailure::Transport(format!("MCP server sent no body for `{method}`"))),
                Err(e) if e == HTTP_TIMED_OUT => None,
                Err(e) => return Err(CallFailure::Transport(e)),
            },
        };
        let Some(reply) = reply else {
            if let Some(reason) = cancel_reason {
                let _ = self.notify("notifications/cancelled", json!({"requestId": id, "reason": reason}));
            }
            return Err(CallFailure::TimedOut);
        };
        self.unanswered_notification = false;
        if let Some(err) = reply.get("error") {
            return Err(CallFailure::Rpc {
                code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: err.get("message").and_then(Value::as_str).unwrap_or("MCP error").to_string(),
            });
        }
        Ok(reply.get("result").cloned().unwrap_or(Value::Null))
    }
}

fn describe_failure(method: &str, failure: &CallFailure) -> String {
    match failure {
        CallFailure::TimedOut => format!("MCP server did not answer `{method}`"),
        CallFailure::Rpc { code, message } => format!("MCP error {code}: {message}"),
        CallFailure::Transport(e) => e.clone(),
    }
}

/// The tools of a `tools/list` result; entries without a name are skipped.
fn parse_tools(listed: &Value) -> Vec<Tool> {
    listed
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(Tool {
                name: t.get("name")?.as_str()?.to_string(),
                description: t.get("description").and_then(Value::as_str).map(String::from),
                annotations: t.get("annotations").cloned(),
            })
        })
        .collect()
}

impl Drop for McpConnection {
    /// A stdio server is killed first: its input closes only afterwards, with
    /// the connection's fields, so it never sees EOF.
    fn drop(&mut self) {
        if let Transport::Stdio { child, .. } = &mut self.transport {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests;
