//! The app-server session loop: client requests in, notifications and server
//! requests out, every message recorded.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{self, BufReader};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::approval::{self, Decision};
use super::config::{BaseConfig, Settings};
use super::profile::{self, Profile};
use super::script::{Action, RequestKind, Script};
use crate::mcp_client::{McpConnection, ServerTarget};
use crate::wire::{self, Line, Recorder};

/// How long the fake waits for the client to answer one of its requests. The
/// real CLI waits forever; a bound keeps an abandoned fake from lingering.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Server {
    profile: Profile,
    script: Script,
    rec: Recorder,
    base: BaseConfig,
    home: PathBuf,
    env: BTreeMap<String, String>,
    out: io::Stdout,
    inbox: Receiver<Line>,
    /// Client messages read while waiting for a reply, handled afterwards.
    deferred: VecDeque<Value>,
    next_request_id: i64,
    progress_tokens: u64,
    /// The server's result when the provider failed to read it.
    last_raw_result: Option<Value>,
    initialized: bool,
    experimental_api: bool,
    /// `clientInfo.name` from initialize: the thread's `originator`.
    client_name: String,
    thread: Option<Thread>,
    closed: bool,
}

struct Thread {
    id: String,
    /// The thread object as thread/start and thread/started carry it.
    info: Value,
    approval_policy: Value,
    sandbox: String,
    settings: Settings,
    servers: BTreeMap<String, Result<McpConnection, String>>,
    approved_for_session: BTreeSet<(String, String)>,
}

struct Reply {
    result: Option<Value>,
    error: Option<Value>,
}

enum Outcome {
    Completed(Value),
    Failed(String),
}

impl Server {
    pub fn new(
        profile: Profile,
        script: Script,
        rec: Recorder,
        base: BaseConfig,
        home: PathBuf,
        env: BTreeMap<String, String>,
    ) -> Server {
        let (tx, inbox) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stdin = BufReader::new(io::stdin());
            loop {
                let line = wire::read_line(&mut stdin, wire::MAX_LINE).unwrap_or(Line::Eof);
                let eof = line == Line::Eof;
                if tx.send(line).is_err() || eof {
                    break;
                }
            }
        });
        Server {
            profile,
            script,
            rec,
            base,
            home,
            env,
            out: io::stdout(),
            inbox,
            deferred: VecDeque::new(),
            next_request_id: 0,
            progress_tokens: 0,
            last_raw_result: None,
            initialized: false,
            experimental_api: false,
            client_name: String::new(),
            thread: None,
            closed: false,
        }
    }

    pub fn run(mut self) -> i32 {
        while let Some(msg) = self.next_message(None) {
            self.handle_client(msg);
        }
        self.rec.record(&json!({"event": "exit", "code": 0, "reason": "stdin closed"}));
        0
    }

    /// Next client message, deferred ones first. None at EOF or deadline.
    fn next_message(&mut self, deadline: Option<Instant>) -> Option<Value> {
        if let Some(m) = self.deferred.pop_front() {
            return Some(m);
        }
        loop {
            if self.closed {
                return None;
            }
            let line = match deadline {
                None => self.inbox.recv().unwrap_or(Line::Eof),
                Some(d) => match self.inbox.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(l) => l,
                    Err(RecvTimeoutError::Timeout) => return None,
                    Err(RecvTimeoutError::Disconnected) => Line::Eof,
                },
            };
            match line {
                Line::Json(v) => {
                    self.rec.record(&json!({"dir": "c2s", "msg": v}));
                    return Some(v);
                }
                Line::Garbage { text, error } => {
                    self.rec.record(&json!({"event": "bad_client_line", "text": text, "error": error}));
                    self.send(json!({"id": null, "error": {"code": -32700, "message": profile::parse_error(&error)}}));
                }
                Line::TooLong { len } => {
                    self.rec.record(&json!({"event": "bad_client_line", "error": format!("line of {len} bytes")}));
                }
                Line::Eof => {
                    self.closed = true;
                    return None;
                }
            }
        }
    }

    fn send(&mut self, msg: Value) {
        self.send_marked(msg, false);
    }

    /// `raw`: a request written by the scenario (`raw_request`), marked in the
    /// transcript so the harness does not hold it to the real schema.
    fn send_marked(&mut self, msg: Value, raw: bool) {
        let mut line = json!({"dir": "s2c", "msg": msg});
        if raw {
            line["raw"] = json!(true);
        }
        self.rec.record(&line);
        if wire::write_message(&mut self.out, &line["msg"]).is_err() {
            self.closed = true;
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"method": method, "params": params, "emittedAtMs": now_ms()}));
    }

    fn respond(&mut self, id: &Value, result: Result<Value, (i64, String)>) {
        match result {
            Ok(r) => self.send(json!({"id": id, "result": r})),
            Err((code, message)) => self.send(json!({"id": id, "error": {"code": code, "message": message}})),
        }
    }

    fn handle_client(&mut self, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str).map(String::from);
        let id = msg.get("id").cloned();
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let (Some(method), Some(id)) = (method, id) else {
            // Notifications (`initialized`) and stray responses need no answer.
            return;
        };
        let result = match method.as_str() {
            "initialize" => self.initialize(&params),
            _ if !self.initialized => Err((-32600, profile::NOT_INITIALIZED.to_string())),
            "thread/start" | "thread/resume" => {
                let opened = self.open_thread(&method, &params);
                let ok = opened.is_ok();
                self.respond(&id, opened);
                if ok {
                    self.start_servers();
                }
                return;
            }
            "turn/start" => return self.turn(&id, &params),
            "turn/interrupt" => Ok(json!({})),
            other => Err((-32601, profile::unknown_method(other))),
        };
        self.respond(&id, result);
    }

    fn initialize(&mut self, params: &Value) -> Result<Value, (i64, String)> {
        if self.initialized {
            return Err((-32600, profile::ALREADY_INITIALIZED.into()));
        }
        self.initialized = true;
        self.experimental_api = params.pointer("/capabilities/experimentalApi").and_then(Value::as_bool) == Some(true);
        let name = params.pointer("/clientInfo/name").and_then(Value::as_str).unwrap_or("unknown");
        self.client_name = name.to_string();
        Ok(json!({
            "userAgent": format!("{name}/{} (fake)", self.profile.version),
            "codexHome": self.home.display().to_string(),
            "platformFamily": "unix",
            "platformOs": "linux",
        }))
    }

    fn open_thread(&mut self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        let resume = if method == "thread/resume" {
            match params.get("threadId").and_then(Value::as_str) {
                // Real Codex writes a thread's rollout at its first turn; a
                // thread that never had one cannot be resumed.
                Some(t) if self.load_state().rollouts.iter().any(|k| k == t) => Some(t.to_string()),
                Some(t) => return Err((-32600, profile::no_rollout(t))),
                None => return Err((-32600, profile::MISSING_THREAD_ID.to_string())),
            }
        } else {
            None
        };
        let policy = params.get("approvalPolicy").cloned().unwrap_or(json!("on-request"));
        match &policy {
            Value::String(s) if ["untrusted", "on-failure", "on-request", "never"].contains(&s.as_str()) => {}
            Value::Object(o) if o.contains_key("granular") => {
                if !self.experimental_api {
                    return Err((-32600, profile::GRANULAR_NEEDS_EXPERIMENTAL_API.into()));
                }
            }
            other => return Err((-32600, profile::unknown_approval_policy(other))),
        }
        let sandbox = params.get("sandbox").and_then(Value::as_str).unwrap_or("read-only").to_string();
        let settings = self.base.for_thread(params.get("config")).map_err(|e| (-32600, e))?;
        let id = match resume {
            Some(id) => id,
            None => self.new_thread_id(),
        };
        self.rec.record(&json!({
            "event": "thread", "method": method, "id": id, "approvalPolicy": policy, "sandbox": sandbox,
            "servers": describe_servers(&settings),
        }));
        self.thread = None; // stop the old thread's MCP servers first
        let cwd = match params.get("cwd").and_then(Value::as_str) {
            Some(c) => c.to_string(),
            None => std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| "/".into()),
        };
        let info = self.thread_object(&id, &cwd);
        let mut result = json!({
            "thread": info, "model": "mock-model", "modelProvider": "mock", "serviceTier": null,
            "cwd": cwd, "runtimeWorkspaceRoots": [cwd], "instructionSources": [],
            "approvalPolicy": policy, "approvalsReviewer": "user", "sandbox": sandbox_policy(&sandbox),
            "activePermissionProfile": null, "reasoningEffort": null, "multiAgentMode": "explicitRequestOnly",
        });
        if self.profile.thread_start_lists_disabled_plugins() {
            result["disabledPluginIds"] = json!([]);
        }
        self.thread = Some(Thread {
            id,
            info,
            approval_policy: policy,
            sandbox,
            settings,
            servers: BTreeMap::new(),
            approved_for_session: BTreeSet::new(),
        });
        Ok(result)
    }

    /// A thread object with this version's fields (measured on the real CLI
    /// of each MEASURED version). No rollout file is written, so no `path`.
    fn thread_object(&self, id: &str, cwd: &str) -> Value {
        let now = now_ms() / 1000;
        let mut t = json!({
            "id": id, "extra": null, "sessionId": id, "forkedFromId": null, "parentThreadId": null,
            "preview": "", "ephemeral": false, "historyMode": if self.profile.thread_history_paginated() { "paginated" } else { "legacy" },
            "modelProvider": "mock", "createdAt": now, "updatedAt": now, "recencyAt": now,
            "status": {"type": "idle"}, "path": null, "cwd": cwd, "cliVersion": self.profile.version.to_string(),
            "source": "vscode", "canAcceptDirectInput": true, "threadSource": null, "agentNickname": null,
            "agentRole": null, "gitInfo": null, "name": null, "turns": [],
        });
        if self.profile.thread_has_section() {
            t["section"] = Value::Null;
            t["sectionEnteredAt"] = Value::Null;
        } else {
            t["isPinned"] = json!(false);
        }
        if self.profile.thread_names_model() {
            t["projectId"] = Value::Null;
            t["model"] = json!("mock-model");
            t["reasoningEffort"] = Value::Null;
        }
        if self.profile.thread_has_environments() {
            t["environments"] = json!([{"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}]);
            t["attachedToThreadId"] = Value::Null;
            t["originator"] = json!(self.client_name);
            t["daybreakEnabled"] = Value::Null;
        }
        t
    }

    fn startup_status(&self, thread_id: &str, name: &str, status: &str, error: Value) -> Value {
        let mut p = json!({"threadId": thread_id, "name": name, "status": status, "error": error, "failureReason": null});
        if self.profile.startup_status_has_environment_id() {
            p["environmentId"] = Value::Null;
        }
        p
    }

    /// A turn object; `times` are startedAt and completedAt (seconds) and durationMs.
    fn turn_object(&self, id: &str, items: Value, status: &str, times: [Value; 3]) -> Value {
        let [started, completed, duration] = times;
        let view = if status == "inProgress" { "notLoaded" } else { "summary" };
        let mut t = json!({"id": id, "items": items, "itemsView": view, "status": status, "error": null,
                           "startedAt": started, "completedAt": completed, "durationMs": duration});
        if self.profile.turn_has_root_turn_id() {
            t["rootTurnId"] = json!(id);
        }
        t
    }

    fn agent_message(&self, id: String, text: &str) -> Value {
        let mut m = json!({"type": "agentMessage", "id": id, "text": text, "phase": null, "memoryCitation": null});
        if self.profile.agent_message_has_delivery() {
            m["delivery"] = Value::Null;
            m["questions"] = Value::Null;
        }
        if self.profile.agent_message_has_moderation() {
            m["moderation"] = Value::Null;
        }
        m
    }

    fn item_started(&mut self, ctx: &Value, mut item: Value, started_ms: u64) {
        if self.profile.items_have_timestamps() {
            item["startedAtMs"] = json!(started_ms);
            item["completedAtMs"] = Value::Null;
        }
        self.notify("item/started", json!({"item": item, "threadId": ctx["threadId"], "turnId": ctx["turnId"], "startedAtMs": started_ms}));
    }

    /// Sends item/completed; returns the item as sent.
    fn item_completed(&mut self, ctx: &Value, mut item: Value, started_ms: u64) -> Value {
        let now = now_ms();
        let mut params = json!({"threadId": ctx["threadId"], "turnId": ctx["turnId"], "completedAtMs": now});
        if self.profile.items_have_timestamps() {
            item["startedAtMs"] = json!(started_ms);
            item["completedAtMs"] = json!(now);
        }
        if self.profile.item_completed_has_token_count() {
            params["contentTokenCount"] = Value::Null;
        }
        params["item"] = item.clone();
        self.notify("item/completed", params);
        item
    }

    /// Connects every enabled MCP server of the new thread, announcing each
    /// start as the real CLI does.
    fn start_servers(&mut self) {
        let Some(thread) = self.thread.as_ref() else { return };
        let thread_id = thread.id.clone();
        let info = thread.info.clone();
        let enabled: Vec<_> = thread
            .settings
            .mcp_servers
            .iter()
            .filter(|(_, s)| s.enabled.unwrap_or(true))
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect();
        self.notify("thread/started", json!({"thread": info}));
        let client = self.profile.mcp_client();
        for (name, settings) in enabled {
            let starting = self.startup_status(&thread_id, &name, "starting", Value::Null);
            self.notify("mcpServer/startupStatus/updated", starting);
            let conn = target(&settings, &self.env).and_then(|t| McpConnection::connect(&t, &self.env, &client));
            let (status, error) = match &conn {
                Ok(_) => ("ready", Value::Null),
                Err(e) => ("failed", json!(e)),
            };
            self.rec.record(&json!({"event": "mcp_startup", "server": name, "status": status, "error": error}));
            let done = self.startup_status(&thread_id, &name, status, error);
            self.notify("mcpServer/startupStatus/updated", done);
            if let Some(t) = self.thread.as_mut() {
                t.servers.insert(name, conn);
            }
        }
    }

    fn new_thread_id(&mut self) -> String {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let id = format!("{:08x}-fake-{:04x}-{:012x}", std::process::id(), self.next_request_id & 0xffff, nanos & 0xffff_ffff_ffff);
        let mut state = self.load_state();
        state.threads.push(id.clone());
        self.save_state(&state);
        id
    }

    fn load_state(&self) -> State {
        std::fs::read_to_string(&self.script.state)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    fn save_state(&self, state: &State) {
        let _ = std::fs::write(&self.script.state, serde_json::to_string(state).unwrap_or_default());
    }

    // ---- turns -------------------------------------------------------------

    fn turn(&mut self, id: &Value, params: &Value) {
        let Some(thread_id) = self.thread.as_ref().map(|t| t.id.clone()) else {
            return self.respond(id, Err((-32600, profile::NO_ACTIVE_THREAD.into())));
        };
        if params.get("threadId").and_then(Value::as_str) != Some(thread_id.as_str()) {
            return self.respond(id, Err((-32600, profile::thread_not_found(params.get("threadId").unwrap_or(&Value::Null)))));
        }
        let mut state = self.load_state();
        let index = state.next_turn;
        state.next_turn += 1;
        if !state.rollouts.contains(&thread_id) {
            state.rollouts.push(thread_id.clone());
        }
        self.save_state(&state);
        let turn_id = format!("turn-{index}");
        self.rec.record(&json!({"event": "turn", "index": index, "turn_id": turn_id, "input": params.get("input")}));
        let pending = self.turn_object(&turn_id, json!([]), "inProgress", [Value::Null, Value::Null, Value::Null]);
        self.respond(id, Ok(json!({"turn": pending})));
        let ctx = json!({"threadId": thread_id, "turnId": turn_id});
        let started = Instant::now();
        let started_at = json!(now_ms() / 1000);
        self.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": []}}));
        let running = self.turn_object(&turn_id, json!([]), "inProgress", [started_at.clone(), Value::Null, Value::Null]);
        self.notify("turn/started", json!({"threadId": thread_id, "turn": running}));
        let actions = self.script.turns.get(index).map(|t| t.actions.clone()).unwrap_or_default();
        for action in actions {
            if self.closed {
                return;
            }
            match action {
                Action::ToolCall { step, server, tool, arguments } => self.tool_call(&ctx, step, &server, &tool, &arguments),
                Action::Request { step, request, server } => self.provider_request(&ctx, step, request, server.as_deref()),
                Action::Raw { step, method, params } => {
                    let reply = self.ask_marked(&method, params, true);
                    self.record_answer(step, &method, &reply, classify_raw(&reply));
                }
            }
        }
        let msg = self.agent_message(format!("msg-{turn_id}"), "Done.");
        let msg_started = now_ms();
        self.item_started(&ctx, msg.clone(), msg_started);
        let msg = self.item_completed(&ctx, msg, msg_started);
        self.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "idle"}}));
        let times = [started_at, json!(now_ms() / 1000), json!(started.elapsed().as_millis() as u64)];
        let done = self.turn_object(&turn_id, json!([msg]), "completed", times);
        self.notify("turn/completed", json!({"threadId": thread_id, "turn": done}));
    }

    /// Sends a server request and waits for its reply, deferring any other
    /// client message until after. None when the client never answers.
    fn ask(&mut self, method: &str, params: Value) -> Option<Reply> {
        self.ask_marked(method, params, false)
    }

    fn ask_marked(&mut self, method: &str, params: Value, raw: bool) -> Option<Reply> {
        let id = self.next_request_id;
        self.next_request_id += 1;
        self.send_marked(json!({"method": method, "id": id, "params": params}), raw);
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        let mut held = Vec::new();
        let reply = loop {
            let Some(msg) = self.next_message(Some(deadline)) else { break None };
            let is_reply = msg.get("method").is_none() && msg.get("id") == Some(&json!(id));
            if is_reply {
                break Some(Reply { result: msg.get("result").cloned(), error: msg.get("error").cloned() });
            }
            held.push(msg);
        };
        self.deferred.extend(held);
        if reply.is_some() {
            let thread_id = self.thread.as_ref().map(|t| t.id.clone());
            self.notify("serverRequest/resolved", json!({"threadId": thread_id, "requestId": id}));
        }
        reply
    }

    fn record_answer(&mut self, step: usize, method: &str, reply: &Option<Reply>, answer: &str) {
        let raw = match reply {
            None => Value::Null,
            Some(r) => json!({"result": r.result, "error": r.error}),
        };
        self.rec.record(&json!({"event": "outcome", "step": step, "method": method, "prompted": true, "answer": answer, "reply": raw}));
    }

    fn provider_request(&mut self, ctx: &Value, step: usize, kind: RequestKind, server: Option<&str>) {
        let now = now_ms();
        let item_id = format!("item-{step}");
        let mut params = ctx.clone();
        let extra = match kind {
            RequestKind::Command => json!({"itemId": item_id, "startedAtMs": now, "command": "rm -rf build", "cwd": "/tmp", "reason": "clean the build directory"}),
            RequestKind::FileChange => json!({"itemId": item_id, "startedAtMs": now, "reason": "edit README.md", "grantRoot": null}),
            RequestKind::Permissions => json!({"itemId": item_id, "startedAtMs": now, "cwd": "/tmp", "reason": "needs network", "permissions": {"network": {"enabled": true}}}),
            RequestKind::UserInput => json!({"itemId": item_id, "isBlocking": true, "questions": [{"id": "q1", "header": "Choice", "question": "Which branch?"}]}),
            RequestKind::UrlElicitation => json!({"serverName": server.unwrap_or(""), "mode": "url", "elicitationId": format!("el-{step}"), "url": "https://example.invalid/consent", "message": "Open this page to sign in", "_meta": null}),
            RequestKind::FormElicitation => json!({"serverName": server.unwrap_or(""), "mode": "form", "message": "Please enter your API key", "requestedSchema": {"type": "object", "properties": {"api_key": {"type": "string"}}}, "_meta": null}),
        };
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        let method = match kind {
            RequestKind::Command => "item/commandExecution/requestApproval",
            RequestKind::FileChange => "item/fileChange/requestApproval",
            RequestKind::Permissions => "item/permissions/requestApproval",
            RequestKind::UserInput => "item/tool/requestUserInput",
            RequestKind::UrlElicitation | RequestKind::FormElicitation => "mcpServer/elicitation/request",
        };
        let reply = self.ask(method, params);
        let answer = match kind {
            RequestKind::Command | RequestKind::FileChange => classify_decision(&reply),
            RequestKind::Permissions => classify_permissions(&reply),
            RequestKind::UserInput => classify_user_input(&reply),
            RequestKind::UrlElicitation | RequestKind::FormElicitation => classify_elicitation(&reply),
        };
        self.record_answer(step, method, &reply, answer);
    }

    fn tool_call(&mut self, ctx: &Value, step: usize, server: &str, tool: &str, arguments: &Value) {
        let call_id = format!("call_{step}");
        let thread_id = ctx["threadId"].clone();
        // The model only sees tools of servers that started; anything else is
        // an unsupported call that never becomes an MCP item.
        let known = self.thread.as_ref().and_then(|t| match t.servers.get(server) {
            Some(Ok(conn)) => conn.tool(tool).map(|t| (t.annotations.clone(), t.description.clone())),
            _ => None,
        });
        let Some((annotations, description)) = known else {
            let text = profile::unsupported_call(server, tool);
            self.rec.record(&json!({"event": "outcome", "step": step, "prompted": false, "item_status": null, "model_saw": text, "server": server, "tool": tool}));
            return;
        };
        let read_only = annotations.as_ref().and_then(|a| a.get("readOnlyHint")).cloned().unwrap_or(Value::Null);
        let (with_read_only, with_environment) = (self.profile.tool_item_has_read_only_hint(), self.profile.tool_item_has_environment());
        let item = |status: &str, result: Value, error: Value, duration: Value| {
            let mut it = json!({"type": "mcpToolCall", "id": call_id, "server": server, "tool": tool, "status": status,
                   "arguments": arguments, "appContext": null, "pluginId": null, "result": result, "error": error,
                   "durationMs": duration});
            if with_read_only {
                it["readOnlyHint"] = read_only.clone();
            }
            if with_environment {
                it["environmentId"] = Value::Null;
                it["mcpAppUi"] = Value::Null;
            }
            it
        };
        let started = Instant::now();
        let started_ms = now_ms();
        self.item_started(ctx, item("inProgress", Value::Null, Value::Null, Value::Null), started_ms);
        let thread = self.thread.as_ref().expect("checked above");
        let mode = thread.settings.mcp_servers.get(server).map(|s| s.mode_for(tool)).unwrap_or(super::config::ApprovalMode::Auto);
        let session_ok = thread.approved_for_session.contains(&(server.to_string(), tool.to_string()));
        let decision = approval::decide(&self.profile, &thread.approval_policy, &thread.sandbox, mode, annotations.as_ref(), session_ok);
        let mut prompted = false;
        let mut answer = Value::Null;
        let mut persist = Value::Null;
        let outcome = match decision {
            Decision::DenyNever => Outcome::Failed(profile::NEVER_DENIAL.into()),
            Decision::Run => self.run_tool(ctx, &call_id, server, tool, arguments),
            Decision::Prompt => {
                prompted = true;
                self.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": ["waitingOnApproval"]}}));
                let params = self.approval_params(ctx, server, tool, description.as_deref(), arguments);
                let reply = self.ask("mcpServer/elicitation/request", params);
                self.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": []}}));
                answer = json!(classify_elicitation(&reply));
                persist = reply.as_ref().and_then(|r| r.result.as_ref()).and_then(|r| r.pointer("/_meta/persist")).cloned().unwrap_or(Value::Null);
                match answer.as_str() {
                    Some("accept") => {
                        self.remember_approval(server, tool, &persist);
                        self.run_tool(ctx, &call_id, server, tool, arguments)
                    }
                    Some("cancel") => Outcome::Failed(profile::CANCELLED.into()),
                    _ => Outcome::Failed(profile::REJECTED.into()),
                }
            }
        };
        // What the provider got from the server, before any rendering.
        let mcp_result = match &outcome {
            Outcome::Completed(r) => r.clone(),
            Outcome::Failed(_) => self.last_raw_result.take().unwrap_or(Value::Null),
        };
        let (status, result, error) = match &outcome {
            // The item carries the result's content, structuredContent and _meta only.
            Outcome::Completed(r) => ("completed", item_result(r), Value::Null),
            Outcome::Failed(e) => ("failed", Value::Null, json!({"message": e})),
        };
        let duration = json!(started.elapsed().as_millis() as u64);
        self.item_completed(ctx, item(status, result, error, duration), started_ms);
        let model_saw = self.model_output(&outcome);
        self.rec.record(&json!({
            "event": "outcome", "step": step, "server": server, "tool": tool, "call_id": call_id,
            "decision": format!("{decision:?}"), "prompted": prompted, "answer": answer, "persist": persist,
            "item_status": status, "model_saw": model_saw, "mcp_result": mcp_result,
        }));
    }

    fn approval_params(&self, ctx: &Value, server: &str, tool: &str, description: Option<&str>, arguments: &Value) -> Value {
        let display: Vec<Value> = arguments
            .as_object()
            .map(|o| o.iter().map(|(k, v)| json!({"name": k, "value": v, "display_name": k})).collect())
            .unwrap_or_default();
        let mut meta = json!({
            "codex_approval_kind": "mcp_tool_call",
            "persist": ["session", "always"],
            "tool_description": description,
            "tool_params": arguments,
            "tool_params_display": display,
        });
        if self.profile.elicitation_has_tool_name() {
            meta["tool_name"] = json!(tool);
        }
        let mut params = json!({
            "threadId": ctx["threadId"], "turnId": ctx["turnId"], "serverName": server, "mode": "form",
            "_meta": meta,
            "message": format!("Allow the {server} MCP server to run tool \"{tool}\"?"),
            "requestedSchema": {"type": "object", "properties": {}},
        });
        if self.profile.elicitation_has_environment_id() {
            params["environmentId"] = Value::Null;
        }
        params
    }

    /// `persist: "session"` stops re-prompting in this process; `"always"`
    /// writes the per-tool approval into CODEX_HOME/config.toml.
    fn remember_approval(&mut self, server: &str, tool: &str, persist: &Value) {
        match persist.as_str() {
            Some("session") => {
                if let Some(t) = self.thread.as_mut() {
                    t.approved_for_session.insert((server.to_string(), tool.to_string()));
                }
            }
            Some("always") => {
                if let Some(t) = self.thread.as_mut() {
                    t.approved_for_session.insert((server.to_string(), tool.to_string()));
                }
                let path = self.home.join("config.toml");
                let mut text = std::fs::read_to_string(&path).unwrap_or_default();
                text.push_str(&format!("\n[mcp_servers.{server}.tools.{tool}]\napproval_mode = \"approve\"\n"));
                let _ = std::fs::write(&path, text);
                self.rec.record(&json!({"event": "persisted", "server": server, "tool": tool}));
            }
            _ => {}
        }
    }

    fn next_progress_token(&mut self) -> u64 {
        self.progress_tokens += 1;
        self.progress_tokens
    }

    fn run_tool(&mut self, ctx: &Value, call_id: &str, server: &str, tool: &str, arguments: &Value) -> Outcome {
        let mut meta = json!({
            // A counter, as MCP clients use: unrelated to the call id.
            "progressToken": self.next_progress_token(),
            "threadId": ctx["threadId"],
            "x-codex-turn-metadata": {"turnId": ctx["turnId"]},
        });
        if self.profile.call_meta_has_call_id() {
            meta["callId"] = json!(call_id);
            meta["itemId"] = json!(call_id);
        }
        if self.profile.call_meta_has_session_id() {
            meta["sessionId"] = ctx["threadId"].clone();
            meta["windowId"] = json!("window-0");
        }
        let profile = self.profile;
        let Some(Ok(conn)) = self.thread.as_mut().and_then(|t| t.servers.get_mut(server)) else {
            return Outcome::Failed(profile::unknown_server(server));
        };
        match conn.call(tool, arguments, meta) {
            Ok(result) => {
                if profile.float_priority_breaks() && has_float_priority(&result) {
                    self.last_raw_result = Some(result);
                    Outcome::Failed(profile::UNEXPECTED_RESPONSE_TYPE.into())
                } else {
                    Outcome::Completed(result)
                }
            }
            Err(e) => Outcome::Failed(profile::tool_call_error(&e)),
        }
    }

    /// What the model receives as the function call output.
    fn model_output(&self, outcome: &Outcome) -> Value {
        let header = profile::OUTPUT_HEADER;
        let (text_parts, raw_blocks): (Vec<String>, Value) = match outcome {
            // Failures reach the model as a text block too (up to 0.150.x
            // that block is shown as JSON, as a result would be).
            Outcome::Failed(e) => (vec![e.clone()], json!([{"type": "text", "text": e}])),
            Outcome::Completed(r) => {
                let blocks = r.get("content").cloned().unwrap_or(json!([]));
                let texts = blocks
                    .as_array()
                    .map(|a| a.iter().map(|b| b.get("text").and_then(Value::as_str).map(String::from).unwrap_or_else(|| b.to_string())).collect())
                    .unwrap_or_default();
                (texts, blocks)
            }
        };
        if self.profile.output_as_input_text_array() {
            let mut parts = vec![json!({"type": "input_text", "text": header})];
            parts.extend(text_parts.into_iter().map(|t| json!({"type": "input_text", "text": t})));
            Value::Array(parts)
        } else {
            let body = match raw_blocks {
                Value::String(s) => s,
                Value::Array(blocks) => format!("[{}]", blocks.iter().map(block_json).collect::<Vec<_>>().join(",")),
                other => other.to_string(),
            };
            json!(format!("{header}\n{body}"))
        }
    }
}

/// Codex reads an HTTP server's bearer token from the env var it names.
fn target(s: &super::config::ServerSettings, env: &BTreeMap<String, String>) -> Result<ServerTarget, String> {
    let mut headers = BTreeMap::new();
    if let Some(var) = &s.bearer_token_env_var {
        let token = env.get(var).ok_or_else(|| profile::missing_bearer_token(var))?;
        headers.insert("authorization".to_string(), format!("Bearer {token}"));
    }
    Ok(ServerTarget {
        command: s.command.clone(),
        args: s.args.clone(),
        env: s.env.clone(),
        cwd: s.cwd.clone(),
        url: s.url.clone(),
        headers,
    })
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct State {
    next_turn: usize,
    threads: Vec<String>,
    /// Threads that had a turn, so have a rollout to resume from.
    #[serde(default)]
    rollouts: Vec<String>,
}

/// A content block as the real CLI serializes it: Rust field order, `type`
/// first, not serde_json's sorted keys.
fn block_json(block: &Value) -> String {
    const ORDER: [&str; 10] = ["type", "text", "data", "mimeType", "uri", "name", "description", "resource", "annotations", "_meta"];
    let Some(map) = block.as_object() else { return block.to_string() };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by_key(|k| (ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()), k.as_str()));
    let fields: Vec<String> = keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), map[*k])).collect();
    format!("{{{}}}", fields.join(","))
}

/// The thread's sandbox policy as thread/start reports it.
fn sandbox_policy(mode: &str) -> Value {
    match mode {
        "danger-full-access" => json!({"type": "dangerFullAccess"}),
        "workspace-write" => json!({"type": "workspaceWrite", "networkAccess": false}),
        _ => json!({"type": "readOnly", "networkAccess": false}),
    }
}

/// A tools/call result as an mcpToolCall item shows it.
fn item_result(r: &Value) -> Value {
    let field = |k: &str| r.get(k).cloned().unwrap_or(Value::Null);
    json!({"content": r.get("content").cloned().unwrap_or(json!([])), "structuredContent": field("structuredContent"), "_meta": field("_meta")})
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn describe_servers(settings: &Settings) -> Value {
    let mode = |m: Option<super::config::ApprovalMode>| m.map(|m| format!("{m:?}").to_lowercase());
    let servers: serde_json::Map<String, Value> = settings
        .mcp_servers
        .iter()
        .map(|(name, s)| {
            let tools: serde_json::Map<String, Value> = s.tools.iter().map(|(t, ts)| (t.clone(), json!(mode(ts.approval_mode)))).collect();
            (name.clone(), json!({
                "transport": if s.url.is_some() { "http" } else { "stdio" },
                "enabled": s.enabled.unwrap_or(true),
                "default_tools_approval_mode": mode(s.default_tools_approval_mode),
                "tools": tools,
            }))
        })
        .collect();
    Value::Object(servers)
}

fn has_float_priority(result: &Value) -> bool {
    result.get("content").and_then(Value::as_array).is_some_and(|blocks| {
        blocks.iter().any(|b| b.pointer("/annotations/priority").is_some_and(|p| p.is_f64()))
    })
}

/// Sorts a client reply: no reply, a JSON-RPC error, a result `judge` can
/// read, or something else (malformed).
fn classify(reply: &Option<Reply>, judge: impl Fn(&Value) -> Option<&'static str>) -> &'static str {
    match reply {
        None => "none",
        Some(Reply { error: Some(_), .. }) => "error",
        Some(Reply { result: Some(r), .. }) => judge(r).unwrap_or("malformed"),
        Some(_) => "malformed",
    }
}

fn classify_elicitation(reply: &Option<Reply>) -> &'static str {
    classify(reply, |r| match r.get("action").and_then(Value::as_str) {
        Some("accept") => Some("accept"),
        Some("decline") => Some("decline"),
        Some("cancel") => Some("cancel"),
        _ => None,
    })
}

fn classify_decision(reply: &Option<Reply>) -> &'static str {
    classify(reply, |r| match r.get("decision") {
        Some(Value::String(s)) => match s.as_str() {
            "accept" => Some("accept"),
            "acceptForSession" => Some("accept-for-session"),
            "decline" => Some("decline"),
            "cancel" => Some("cancel"),
            _ => None,
        },
        Some(Value::Object(_)) => Some("accept-with-amendment"),
        _ => None,
    })
}

fn classify_permissions(reply: &Option<Reply>) -> &'static str {
    classify(reply, |r| match r.get("permissions") {
        Some(Value::Object(p)) if p.values().all(Value::is_null) => Some("decline"),
        Some(Value::Object(_)) => Some("accept"),
        _ => None,
    })
}

fn classify_user_input(reply: &Option<Reply>) -> &'static str {
    classify(reply, |r| match r.get("answers") {
        Some(Value::Object(a)) if a.is_empty() => Some("empty-answers"),
        Some(Value::Object(_)) => Some("answered"),
        _ => None,
    })
}

fn classify_raw(reply: &Option<Reply>) -> &'static str {
    classify(reply, |_| Some("result"))
}
