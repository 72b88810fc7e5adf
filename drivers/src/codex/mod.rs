//! Reference driver for `codex app-server`.
//!
//! Per-tool policies are projected into CODEX_HOME/config.toml; the global
//! policy is `on-request` (never `never`, which Codex 0.148+ turns into an
//! in-CLI denial), or granular with experimentalApi when the driver bridges
//! its host's tools; approval prompts are answered per [`respond`]. A running
//! app-server is reused only while the compatibility fingerprint of what it
//! was launched with still matches.

pub mod elicitation;
pub mod exec;
pub mod projection;
pub mod respond;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bridge::BridgeServer;
use crate::child::ChildProcess;
use crate::error::DriverError;
use crate::events::{BridgeCall, Event};
use crate::gateway::binding::{tool_policies, Binding, ConsentKey};
use crate::host::{FailClosed, Host};
use crate::launch::{BridgeSpec, BridgedResult, Launch, ToolCallRecord, TurnReport};
use crate::parts::Parts;
use crate::spec::{ApprovalPolicy, GlobalPolicy, McpServerSpec, ServerSet, Transport};
pub use respond::{Answer, Context};

/// How long the driver waits for the provider to say anything.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

struct Running {
    child: ChildProcess,
    fingerprint: String,
    secrets: BTreeMap<String, String>,
    next_id: u64,
}

enum Incoming {
    Response { id: Value, result: Result<Value, Value> },
    Request { id: Value, method: String, params: Value },
    Notification { method: String, params: Value },
    Bridge(BridgeCall),
}

pub struct CodexDriver {
    parts: Parts,
    launch: Option<Launch>,
    base: ServerSet,
    running: Option<Running>,
    thread_id: Option<String>,
    /// Codex persists a thread at its first turn; until then there is
    /// nothing to resume and a relaunch starts a fresh thread.
    thread_has_turns: bool,
    events_tx: Sender<Event>,
    events: Receiver<Event>,
    generation: u64,
    bridge: Option<BridgeServer>,
    /// Gateway tool bindings of this session, by runtime id.
    bindings: BTreeMap<String, Binding>,
    /// OAuth consents the host gave, per binding.
    consents: BTreeSet<ConsentKey>,
}

impl CodexDriver {
    pub fn new(parts: Parts) -> CodexDriver {
        let (events_tx, events) = mpsc::channel();
        CodexDriver {
            parts,
            launch: None,
            base: ServerSet::default(),
            running: None,
            thread_id: None,
            thread_has_turns: false,
            events_tx,
            events,
            generation: 0,
            bridge: None,
            bindings: BTreeMap::new(),
            consents: Default::default(),
        }
    }

    pub fn fingerprint(&self, servers: Vec<McpServerSpec>, global: GlobalPolicy) -> Result<String, DriverError> {
        let set = (self.parts.build)(servers)?;
        Ok((self.parts.fingerprint)(&set, global))
    }

    /// Validates the declarations and starts a thread. Bad declarations fail
    /// here, before any process starts.
    pub fn open(&mut self, launch: Launch) -> Result<(), DriverError> {
        self.base = self.gateway_policies((self.parts.build)(launch.servers.clone())?, &launch)?;
        if let Some(b) = &launch.bridge {
            if self.base.get(b.server.trim()).is_some() {
                return Err(DriverError::new("duplicate-conflict", format!("bridge server `{}` is also declared", b.server)));
            }
            let tools = b.tools.iter().map(|t| json!({"name": t.name, "description": t.description,
                "inputSchema": {"type": "object", "additionalProperties": true}})).collect();
            let server = BridgeServer::start(tools, self.events_tx.clone())
                .map_err(|e| DriverError::new("launch-failed", format!("bridge server: {e}")))?;
            self.base.insert(self.bridge_spec(b, server.url()))?;
            self.bridge = Some(server);
        }
        self.launch = Some(launch);
        self.thread_id = None;
        self.thread_has_turns = false;
        let base = self.base.clone();
        self.ensure(&base)
    }

    /// The bridge server as one more MCP server of the child's.
    fn bridge_spec(&self, b: &BridgeSpec, url: String) -> McpServerSpec {
        let approved = b.tools.iter().filter(|_| self.parts.approve_bridge_tools).map(|t| (t.name.clone(), ApprovalPolicy::Approve));
        McpServerSpec {
            name: b.server.clone(),
            transport: Transport::Http { url, bearer_token_env: None },
            reason: "the driver's bridge to its host's tools".into(),
            tools: approved.collect(),
        }
    }

    /// Re-opens with possibly changed declarations or secrets, continuing the
    /// same thread. The running app-server is kept only when nothing changed.
    pub fn resume(&mut self, launch: Launch) -> Result<(), DriverError> {
        let mut base = self.gateway_policies((self.parts.build)(launch.servers.clone())?, &launch)?;
        if let (Some(b), Some(server)) = (&launch.bridge, &self.bridge) {
            base.insert(self.bridge_spec(b, server.url()))?;
        }
        self.base = base;
        self.launch = Some(launch);
        let base = self.base.clone();
        self.ensure(&base)
    }

    /// Runs one turn. `scoped` servers are attached for this call only.
    pub fn turn(&mut self, prompt: &str, scoped: Vec<McpServerSpec>, host: &mut dyn Host) -> Result<TurnReport, DriverError> {
        let scoped = (self.parts.build)(scoped)?;
        let set = self.base.merged(&scoped)?;
        self.ensure(&set)?;
        let launch = self.launch.clone().ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let thread_id = self.thread_id.clone().unwrap_or_default();
        let input = json!([{"type": "text", "text": prompt, "text_elements": []}]);
        let turn_req = self.request("turn/start", json!({"threadId": thread_id, "input": input}))?;
        self.thread_has_turns = true;
        let mut report = TurnReport::default();
        // Bridge items Codex announced, oldest first: (tool, arguments, call id).
        let mut announced: VecDeque<(String, Value, String)> = VecDeque::new();
        // Bridge calls that arrived before their item was announced.
        let mut unannounced: Vec<BridgeCall> = Vec::new();
        let bridge = launch.bridge.as_ref();
        loop {
            match self.next(Instant::now() + REPLY_TIMEOUT)? {
                Incoming::Response { id, result: Err(e) } if id == turn_req => {
                    return Err(DriverError::new("provider-rejected", format!("turn/start failed: {e}")));
                }
                Incoming::Response { .. } => {}
                Incoming::Request { id, method, params } => {
                    let gateway = launch.gateway.as_ref().map(|g| g.server.trim());
                    let answer = if method == "mcpServer/elicitation/request" && gateway.is_some() && params["serverName"].as_str() == gateway {
                        Ok((self.parts.gateway_respond)(&params, &self.bindings, &mut self.consents, host))
                    } else {
                        let ctx = Context { servers: &set, global: launch.global, thread_id: &thread_id, bridge };
                        if self.parts.host_prompts {
                            (self.parts.respond)(&method, &params, &ctx, host)
                        } else {
                            (self.parts.respond)(&method, &params, &ctx, &mut FailClosed(host))
                        }
                    };
                    self.reply(&id, answer)?;
                }
                Incoming::Bridge(call) => {
                    let position = announced.iter().position(|(t, a, _)| *t == call.tool && *a == call.arguments);
                    if position.is_none() && (self.parts.bridge_call_id)(&call.meta, None).is_empty() {
                        // Before 0.148.0 `_meta` names no call id, and the item
                        // announcing this call may still be queued behind it
                        // (stdout and the bridge are read by different
                        // threads): it is answered once announced.
                        unannounced.push(call);
                        continue;
                    }
                    let pending = position.and_then(|i| announced.remove(i)).map(|(_, _, id)| id);
                    self.answer_bridge(call, pending, host, &mut report);
                }
                Incoming::Notification { method, params } => match method.as_str() {
                    "item/started" => {
                        let item = &params["item"];
                        if item["type"] == "mcpToolCall" && bridge.is_some_and(|b| item["server"] == json!(b.server.trim())) {
                            let (tool, arguments) = (item["tool"].as_str().unwrap_or("").to_string(), item["arguments"].clone());
                            let id = item["id"].as_str().unwrap_or("").to_string();
                            match unannounced.iter().position(|c| c.tool == tool && c.arguments == arguments) {
                                Some(i) => self.answer_bridge(unannounced.remove(i), Some(id), host, &mut report),
                                None => announced.push_back((tool, arguments, id)),
                            }
                        }
                    }
                    "item/completed" => {
                        if let Some(record) = tool_call_record(&params) {
                            report.tool_calls.push(record);
                        }
                    }
                    "turn/completed" => return Ok(report),
                    _ => {}
                },
            }
        }
    }

    /// Runs one bridged call on the host and answers the child, keyed by
    /// the child's call id (from `_meta`, else the announcing item's).
    fn answer_bridge(&self, call: BridgeCall, announced: Option<String>, host: &mut dyn Host, report: &mut TurnReport) {
        let call_id = (self.parts.bridge_call_id)(&call.meta, announced);
        let result = (self.parts.bridge_result)(&host.call_tool(&call.tool, &call.arguments));
        report.bridged.push(BridgedResult { call_id, tool: call.tool.clone(), result: result.clone() });
        let _ = call.reply.send(result);
    }

    /// The open thread's id, once a thread/start or thread/resume succeeded.
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    /// Sends one client request to the running app-server and waits for its
    /// result; server requests that arrive meanwhile are refused. The
    /// session's notion of what the app-server was launched with is not
    /// changed: `thread/resume` of the loaded thread, for one, keeps the
    /// config the thread started with (measured), so changed policies still
    /// need [`CodexDriver::resume`].
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, DriverError> {
        let id = self.request(method, params)?;
        self.await_response(&id)
    }

    pub fn close(&mut self) {
        self.running = None;
        self.bridge = None;
    }

    /// Binds the gateway catalog and gives the gateway server the per-tool
    /// policies the bindings call for.
    fn gateway_policies(&mut self, set: ServerSet, launch: &Launch) -> Result<ServerSet, DriverError> {
        let Some(gw) = &launch.gateway else {
            self.bindings.clear();
            return Ok(set);
        };
        self.bindings = (self.parts.gateway_bind)(gw)?;
        let policies = tool_policies(&self.bindings);
        let servers: Vec<McpServerSpec> = set
            .servers()
            .map(|s| {
                let mut s = s.clone();
                if s.name == gw.server.trim() {
                    s.tools = policies.clone();
                }
                s
            })
            .collect();
        if !servers.iter().any(|s| s.name == gw.server.trim()) {
            return Err(DriverError::new("invalid-name", format!("gateway server `{}` is not declared", gw.server)));
        }
        Ok((self.parts.build)(servers)?)
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, DriverError> {
        let r = self.running.as_mut().ok_or_else(|| DriverError::new("not-open", "no app-server"))?;
        r.next_id += 1;
        let id = json!(r.next_id);
        r.child.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        Ok(id)
    }

    fn reply(&mut self, id: &Value, answer: Answer) -> Result<(), DriverError> {
        let r = self.running.as_mut().ok_or_else(|| DriverError::new("not-open", "no app-server"))?;
        let msg = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        };
        r.child.send(&msg)
    }

    /// The next message from the current app-server or the bridge.
    fn next(&mut self, deadline: Instant) -> Result<Incoming, DriverError> {
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let event = match self.events.recv_timeout(wait) {
                Ok(e) => e,
                Err(RecvTimeoutError::Timeout) => return Err(DriverError::new("timeout", "app-server stopped answering")),
                Err(RecvTimeoutError::Disconnected) => return Err(DriverError::new("provider-exited", "event channel closed")),
            };
            let msg = match event {
                Event::Bridge(call) => return Ok(Incoming::Bridge(call)),
                Event::Child { generation, .. } | Event::ChildExited { generation } if generation != self.generation => continue,
                Event::ChildExited { .. } => {
                    let code = self.running.as_mut().and_then(|r| r.child.exit_code());
                    return Err(DriverError::new("provider-exited", format!("app-server exited (code {code:?})")));
                }
                Event::Child { line: Err(e), .. } => return Err(DriverError::new("protocol-error", e)),
                Event::Child { line: Ok(v), .. } => v,
            };
            let method = msg.get("method").and_then(Value::as_str).map(String::from);
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            return Ok(match (method, msg.get("id").cloned()) {
                (Some(method), Some(id)) => Incoming::Request { id, method, params },
                (Some(method), None) => Incoming::Notification { method, params },
                (None, Some(id)) => Incoming::Response {
                    id,
                    result: match msg.get("error") {
                        Some(e) => Err(e.clone()),
                        None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
                    },
                },
                (None, None) => return Err(DriverError::new("protocol-error", format!("neither request nor response: {msg}"))),
            });
        }
    }

    /// Waits for the response to `id`; server requests before it are refused
    /// (nothing has been started that could legitimately ask).
    fn await_response(&mut self, id: &Value) -> Result<Value, DriverError> {
        loop {
            match self.next(Instant::now() + REPLY_TIMEOUT)? {
                Incoming::Response { id: got, result } if &got == id => {
                    return result.map_err(|e| {
                        let msg = e.get("message").and_then(Value::as_str).unwrap_or("error").to_string();
                        DriverError::new("provider-rejected", msg)
                    });
                }
                Incoming::Request { id, method, .. } => {
                    self.reply(&id, Err((-32600, format!("unsolicited server request `{method}`"))))?;
                }
                Incoming::Bridge(call) => {
                    let _ = call.reply.send(json!({"content": [], "isError": true}));
                }
                _ => {}
            }
        }
    }

    /// Makes sure an app-server launched for exactly `set` is running with a
    /// thread open, reusing the current one when its fingerprint matches.
    fn ensure(&mut self, set: &ServerSet) -> Result<(), DriverError> {
        let launch = self.launch.clone().ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let fp = (self.parts.fingerprint)(set, launch.global);
        let mut secrets = BTreeMap::new();
        for var in set.secret_envs() {
            let value = launch
                .process
                .secrets
                .get(var)
                .ok_or_else(|| DriverError::new("missing-secret", format!("no value for `{var}`")))?;
            secrets.insert(var.to_string(), value.clone());
        }
        if let Some(r) = &self.running {
            if r.fingerprint == fp && r.secrets == secrets {
                return Ok(());
            }
        }
        self.running = None;
        std::fs::create_dir_all(&launch.process.home)
            .and_then(|_| std::fs::write(launch.process.home.join("config.toml"), (self.parts.codex_config)(set)))
            .map_err(|e| DriverError::new("launch-failed", format!("cannot write config.toml: {e}")))?;
        self.generation += 1;
        let args = vec!["app-server".to_string(), "--listen".into(), "stdio://".into()];
        let mut env = secrets.clone();
        env.insert("CODEX_HOME".into(), launch.process.home.display().to_string());
        let child = ChildProcess::spawn(&launch.process.binary, &args, &launch.process.cwd, &env, self.events_tx.clone(), self.generation)?;
        self.running = Some(Running { child, fingerprint: fp, secrets, next_id: 0 });
        let bridged = launch.bridge.is_some();
        let init = self.request(
            "initialize",
            json!({"clientInfo": {"name": "approval-reference-driver", "title": "Reference driver", "version": env!("CARGO_PKG_VERSION")},
                   "capabilities": {"experimentalApi": bridged}}),
        )?;
        self.await_response(&init)?;
        let r = self.running.as_mut().ok_or_else(|| DriverError::new("not-open", "no app-server"))?;
        r.child.send(&json!({"jsonrpc": "2.0", "method": "initialized"}))?;
        let mut params = json!({
            "cwd": launch.process.cwd.display().to_string(),
            "approvalPolicy": (self.parts.approval_policy)(launch.global, bridged),
            "sandbox": "read-only",
        });
        if let Some(gw) = &launch.gateway {
            // Tools the catalog does not bind must still reach the driver.
            params["config"] = json!({format!("mcp_servers.{}.default_tools_approval_mode", gw.server.trim()): "prompt"});
        }
        let method = match self.thread_id.as_ref().filter(|_| self.thread_has_turns) {
            Some(id) => {
                params["threadId"] = json!(id);
                "thread/resume"
            }
            None => "thread/start",
        };
        let req = self.request(method, params)?;
        let result = self.await_response(&req).inspect_err(|_| self.running = None)?;
        let id = result
            .pointer("/thread/id")
            .and_then(Value::as_str)
            .ok_or_else(|| DriverError::new("protocol-error", format!("{method} result has no thread id")))?;
        self.thread_id = Some(id.to_string());
        Ok(())
    }
}

fn tool_call_record(params: &Value) -> Option<ToolCallRecord> {
    mcp_call_record(params.get("item")?, "mcpToolCall")
}

/// The driver's record of an MCP tool call item of type `kind` (the
/// app-server's `mcpToolCall`, exec's `mcp_tool_call`: same fields).
pub(crate) fn mcp_call_record(item: &Value, kind: &str) -> Option<ToolCallRecord> {
    if item.get("type")?.as_str()? != kind {
        return None;
    }
    let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Some(ToolCallRecord {
        call_id: s("id"),
        server: s("server"),
        tool: s("tool"),
        status: s("status"),
        error: item.pointer("/error/message").and_then(Value::as_str).map(String::from),
    })
}

