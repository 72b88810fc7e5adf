//! Reference driver for `codex app-server`.
//!
//! Per-tool policies are projected into CODEX_HOME/config.toml; the global
//! policy is always `on-request` (never `never`, which Codex 0.148+ turns into
//! an in-CLI denial); approval prompts are answered per [`respond`]. A running
//! app-server is reused only while the compatibility fingerprint of what it
//! was launched with still matches.

pub mod app_server;
pub mod projection;
pub mod respond;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::{json, Value};

use crate::fingerprint;
use crate::host::{DriverError, Host};
use crate::spec::{GlobalPolicy, McpServerSpec, ServerSet, SpecError};
use app_server::{AppServer, Incoming, REPLY_TIMEOUT};
pub use respond::{Answer, Context};

/// The pieces of behaviour a driver can get wrong, as plain functions.
#[derive(Clone, Copy)]
pub struct Parts {
    pub build: fn(Vec<McpServerSpec>) -> Result<ServerSet, SpecError>,
    pub fingerprint: fn(&ServerSet, GlobalPolicy) -> String,
    pub config_toml: fn(&ServerSet) -> String,
    pub approval_policy: fn(GlobalPolicy) -> Value,
    pub respond: fn(&str, &Value, &Context, &mut dyn Host) -> Answer,
}

impl Parts {
    pub fn reference() -> Parts {
        Parts {
            build: ServerSet::build,
            fingerprint: fingerprint::fingerprint,
            config_toml: projection::config_toml,
            approval_policy: |_| json!("on-request"),
            respond: respond::respond,
        }
    }
}

/// Everything a host supplies to launch a session.
#[derive(Debug, Clone)]
pub struct Launch {
    pub binary: PathBuf,
    pub home: PathBuf,
    pub cwd: PathBuf,
    /// Secret values by environment variable name; passed to the provider's
    /// environment only, never written anywhere.
    pub secrets: BTreeMap<String, String>,
    pub global: GlobalPolicy,
    pub servers: Vec<McpServerSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRecord {
    /// The provider's call id (Codex item id == the model's call_id).
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub status: String,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct TurnReport {
    pub tool_calls: Vec<ToolCallRecord>,
}

struct Running {
    app: AppServer,
    fingerprint: String,
    secrets: BTreeMap<String, String>,
}

pub struct CodexDriver {
    parts: Parts,
    launch: Option<Launch>,
    base: ServerSet,
    running: Option<Running>,
    thread_id: Option<String>,
}

impl CodexDriver {
    pub fn new(parts: Parts) -> CodexDriver {
        CodexDriver { parts, launch: None, base: ServerSet::default(), running: None, thread_id: None }
    }

    pub fn fingerprint(&self, servers: Vec<McpServerSpec>, global: GlobalPolicy) -> Result<String, DriverError> {
        let set = (self.parts.build)(servers)?;
        Ok((self.parts.fingerprint)(&set, global))
    }

    /// Validates the declarations and starts a thread. Bad declarations fail
    /// here, before any process starts.
    pub fn open(&mut self, launch: Launch) -> Result<(), DriverError> {
        self.base = (self.parts.build)(launch.servers.clone())?;
        self.launch = Some(launch);
        self.thread_id = None;
        let base = self.base.clone();
        self.ensure(&base)
    }

    /// Re-opens with possibly changed declarations or secrets, continuing the
    /// same thread. The running app-server is kept only when nothing changed.
    pub fn resume(&mut self, launch: Launch) -> Result<(), DriverError> {
        self.base = (self.parts.build)(launch.servers.clone())?;
        self.launch = Some(launch);
        let base = self.base.clone();
        self.ensure(&base)
    }

    /// Runs one turn. `scoped` servers are attached for this call only.
    pub fn turn(&mut self, prompt: &str, scoped: Vec<McpServerSpec>, host: &mut dyn Host) -> Result<TurnReport, DriverError> {
        let scoped = (self.parts.build)(scoped)?;
        let set = self.base.merged(&scoped)?;
        self.ensure(&set)?;
        let global = self.launch.as_ref().map(|l| l.global).ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let thread_id = self.thread_id.clone().unwrap_or_default();
        let respond = self.parts.respond;
        let app = &mut self.running.as_mut().ok_or_else(|| DriverError::new("not-open", "no app-server"))?.app;
        let input = json!([{"type": "text", "text": prompt, "text_elements": []}]);
        let turn_req = app.request("turn/start", json!({"threadId": thread_id, "input": input}))?;
        let mut report = TurnReport::default();
        let ctx = Context { servers: &set, global, thread_id: &thread_id };
        loop {
            match app.next(Instant::now() + REPLY_TIMEOUT)? {
                Incoming::Response { id, result: Err(e) } if id == turn_req => {
                    return Err(DriverError::new("provider-rejected", format!("turn/start failed: {e}")));
                }
                Incoming::Response { .. } => {}
                Incoming::Request { id, method, params } => {
                    let answer = respond(&method, &params, &ctx, host);
                    app.reply(&id, answer)?;
                }
                Incoming::Notification { method, params } => match method.as_str() {
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

    pub fn close(&mut self) {
        self.running = None;
    }

    /// Makes sure an app-server launched for exactly `set` is running with a
    /// thread open, reusing the current one when its fingerprint matches.
    fn ensure(&mut self, set: &ServerSet) -> Result<(), DriverError> {
        let launch = self.launch.clone().ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let fp = (self.parts.fingerprint)(set, launch.global);
        let mut secrets = BTreeMap::new();
        for var in set.secret_envs() {
            let value = launch
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
        std::fs::create_dir_all(&launch.home)
            .and_then(|_| std::fs::write(launch.home.join("config.toml"), (self.parts.config_toml)(set)))
            .map_err(|e| DriverError::new("launch-failed", format!("cannot write config.toml: {e}")))?;
        let args = vec!["app-server".to_string(), "--listen".into(), "stdio://".into()];
        let mut app = AppServer::spawn(&launch.binary, &args, &launch.home, &launch.cwd, &secrets)?;
        let init = app.request(
            "initialize",
            json!({"clientInfo": {"name": "approval-reference-driver", "title": "Reference driver", "version": env!("CARGO_PKG_VERSION")},
                   "capabilities": {}}),
        )?;
        await_response(&mut app, &init)?;
        app.notify("initialized")?;
        let mut params = json!({
            "cwd": launch.cwd.display().to_string(),
            "approvalPolicy": (self.parts.approval_policy)(launch.global),
            "sandbox": "read-only",
        });
        let method = match &self.thread_id {
            Some(id) => {
                params["threadId"] = json!(id);
                "thread/resume"
            }
            None => "thread/start",
        };
        let req = app.request(method, params)?;
        let result = await_response(&mut app, &req)?;
        let id = result
            .pointer("/thread/id")
            .and_then(Value::as_str)
            .ok_or_else(|| DriverError::new("protocol-error", format!("{method} result has no thread id")))?;
        self.thread_id = Some(id.to_string());
        self.running = Some(Running { app, fingerprint: fp, secrets });
        Ok(())
    }
}

/// Waits for the response to `id`; server requests before it are refused
/// (nothing has been started that could legitimately ask).
fn await_response(app: &mut AppServer, id: &Value) -> Result<Value, DriverError> {
    loop {
        match app.next(Instant::now() + REPLY_TIMEOUT)? {
            Incoming::Response { id: got, result } if &got == id => {
                return result.map_err(|e| {
                    let msg = e.get("message").and_then(Value::as_str).unwrap_or("error").to_string();
                    DriverError::new("provider-rejected", msg)
                });
            }
            Incoming::Request { id, method, .. } => {
                app.reply(&id, Err((-32600, format!("unsolicited server request `{method}`"))))?;
            }
            _ => {}
        }
    }
}

fn tool_call_record(params: &Value) -> Option<ToolCallRecord> {
    let item = params.get("item")?;
    if item.get("type")?.as_str()? != "mcpToolCall" {
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
