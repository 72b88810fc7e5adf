//! Reference driver for Claude Code in SDK host mode: what the Agent SDKs
//! do, without Node or Python. One long-lived CLI per session
//! (`--input-format stream-json`, started at the first turn), the MCP
//! servers sent in the initialize request (`--await-initialize`, the TS
//! SDK's delivery), one user message per turn.
//!
//! `approve` is projected to exact `--allowedTools=mcp__S__T` entries and
//! `prompt` to exact ask rules, on the names Claude Code renames tools to
//! ([`crate::claude::projection`]); every other gated call arrives as a
//! `can_use_tool` control request, answered by the print driver's decision
//! ([`answer`]). A resume, or call-scoped servers, that change what the CLI
//! was started with replace it by one continuing the session (`--resume`).
//! The host's own tools (bridge) are an SDK server answered in process over
//! `mcp_message` ([`sdk_server`]), as the Agent SDKs run theirs.

pub mod answer;
pub mod control;
pub mod plan;
pub mod sdk_server;
#[cfg(test)]
mod tests;

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::child::ChildProcess;
use crate::claude::calls::Calls;
use crate::claude::{check_secrets, host_tool, run_host_tool};
use crate::codex::respond::Context;
use crate::error::DriverError;
use crate::events::Event;
use crate::host::{Host, HostDecision};
use crate::launch::{Launch, TurnReport};
use crate::parts::Parts;
use crate::spec::{McpServerSpec, ServerSet};
use control::FromCli;
use plan::Plan;
use sdk_server::{Handled, SdkServer};

/// How long the driver waits for the CLI.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// From start to the initialize answer.
    pub initialize: Duration,
    /// From the user message to the turn's result.
    pub turn: Duration,
    /// For the CLI to exit on its own once its input is closed.
    pub exit: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts { initialize: Duration::from_secs(30), turn: Duration::from_secs(60), exit: Duration::from_secs(2) }
    }
}

/// The CLI of this session and what it was started with.
struct Running {
    child: ChildProcess,
    plan: Plan,
}

/// What a wait ends at.
enum Until {
    /// The CLI's answer to the host's request with this id.
    Response(String),
    /// The turn's `result` message.
    Result,
}

/// One turn's view of the session.
struct Turn<'a> {
    ctx: Context<'a>,
    bridge: Option<String>,
    calls: Calls,
    report: TurnReport,
}

pub struct ClaudeSdkDriver {
    parts: Parts,
    timeouts: Timeouts,
    launch: Option<Launch>,
    base: ServerSet,
    session_id: Option<String>,
    events_tx: Sender<Event>,
    events: Receiver<Event>,
    generation: u64,
    bridge: Option<SdkServer>,
    running: Option<Running>,
    /// The permission mode the host switched to, if it did: set on the
    /// running CLI, and passed to one started later.
    mode: Option<String>,
    /// Requests of the host's own sent so far (their ids).
    requests: u64,
}

impl ClaudeSdkDriver {
    pub fn new(parts: Parts) -> ClaudeSdkDriver {
        let (events_tx, events) = mpsc::channel();
        ClaudeSdkDriver {
            parts,
            timeouts: Timeouts::default(),
            launch: None,
            base: ServerSet::default(),
            session_id: None,
            events_tx,
            events,
            generation: 0,
            bridge: None,
            running: None,
            mode: None,
            requests: 0,
        }
    }

    pub fn with_timeouts(mut self, timeouts: Timeouts) -> ClaudeSdkDriver {
        self.timeouts = timeouts;
        self
    }

    /// The session id the CLI reported, once a turn has started.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Validates everything a turn will need and makes the SDK server for
    /// the host's tools; the CLI starts at the first turn.
    pub fn open(&mut self, launch: Launch) -> Result<(), DriverError> {
        self.stop();
        self.base = (self.parts.build)(launch.servers.clone())?;
        self.bridge = None;
        if let Some(b) = &launch.bridge {
            let name = b.server.trim().to_string();
            if self.base.get(&name).is_some() {
                return Err(DriverError::new("duplicate-conflict", format!("bridge server `{name}` is also declared")));
            }
            self.bridge = Some(SdkServer::new(name, &b.tools));
        }
        self.session_id = None;
        check_secrets(&self.base, &launch)?;
        self.launch = Some(launch);
        Ok(())
    }

    /// Takes new declarations, policies and secrets. A running CLI started
    /// with others is stopped; the next turn continues the session in a new
    /// one. Unchanged, it is kept.
    pub fn resume(&mut self, launch: Launch) -> Result<(), DriverError> {
        if self.launch.is_none() {
            return Err(DriverError::new("not-open", "open() first"));
        }
        self.base = (self.parts.build)(launch.servers.clone())?;
        check_secrets(&self.base, &launch)?;
        self.launch = Some(launch);
        let plan = self.plan(&self.base)?;
        if self.running.as_ref().is_some_and(|r| r.plan != plan) {
            self.stop();
        }
        Ok(())
    }

    /// One user message, played to the turn's `result`. A turn that fails
    /// leaves the CLI in an unknown state: it is stopped, and the next turn
    /// resumes the session in a new one.
    pub fn turn(&mut self, prompt: &str, scoped: Vec<McpServerSpec>, host: &mut dyn Host) -> Result<TurnReport, DriverError> {
        let set = self.base.merged(&(self.parts.build)(scoped)?)?;
        let launch = self.launch.clone().ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let plan = self.plan(&set)?;
        let ctx = Context { servers: &set, global: launch.global, thread_id: "", bridge: launch.bridge.as_ref() };
        let mut turn = Turn { ctx, bridge: self.bridge.as_ref().map(|s| s.name.clone()), calls: Calls::default(), report: TurnReport::default() };
        let played = self.play(prompt, plan, &launch, host, &mut turn);
        if played.is_err() {
            self.stop();
        }
        played.map(|_| turn.report)
    }

    /// Switches the session's permission mode between turns: the running
    /// CLI is told (`set_permission_mode`), one started later gets it on
    /// its command line.
    pub fn permission_mode(&mut self, mode: &str) -> Result<(), DriverError> {
        let mode = (self.parts.claude_permission_mode)(mode);
        self.mode = Some(mode.clone());
        if self.running.is_none() {
            return Ok(());
        }
        let launch = self.launch.clone().ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let set = self.base.clone();
        let ctx = Context { servers: &set, global: launch.global, thread_id: "", bridge: launch.bridge.as_ref() };
        let mut turn = Turn { ctx, bridge: None, calls: Calls::default(), report: TurnReport::default() };
        self.requests += 1;
        let id = format!("mode{}", self.requests);
        self.send(&control::set_permission_mode(&id, &mode))?;
        // Between turns nothing is asked: a stray prompt is declined.
        let mut nobody = Nobody;
        let response = self.pump(Instant::now() + self.timeouts.initialize, &Until::Response(id), &mut nobody, &mut turn)?;
        control::check_success(&response).map_err(|e| DriverError::new("provider-rejected", e))
    }

    /// Stops the CLI (it ends its session on EOF; killed if it does not
    /// exit in time) and drops the host's SDK server.
    pub fn close(&mut self) {
        self.stop();
        self.bridge = None;
    }

    fn plan(&self, set: &ServerSet) -> Result<Plan, DriverError> {
        let launch = self.launch.as_ref().ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let bridge = self.bridge.as_ref().map(|s| plan::Bridge { server: &s.name });
        Plan::new(set, launch, &self.parts, bridge)
    }

    fn play(&mut self, prompt: &str, plan: Plan, launch: &Launch, host: &mut dyn Host, turn: &mut Turn) -> Result<(), DriverError> {
        // Started for other declarations, policies or secrets (call-scoped
        // servers), or gone while idle: replaced.
        if let Some(r) = &mut self.running {
            if r.plan != plan || r.child.exit_code().is_some() {
                self.stop();
            }
        }
        if self.running.is_none() {
            self.start(plan, launch, host, turn)?;
        }
        self.send(&control::user(prompt))?;
        self.pump(Instant::now() + self.timeouts.turn, &Until::Result, host, turn).map(|_| ())
    }

    /// Starts the CLI, continuing the session if there is one, and waits
    /// for its answer to initialize.
    fn start(&mut self, plan: Plan, launch: &Launch, host: &mut dyn Host, turn: &mut Turn) -> Result<(), DriverError> {
        self.generation += 1;
        let mut argv = plan.argv(self.session_id.as_deref());
        if let Some(mode) = &self.mode {
            argv.insert(argv.len() - 1, format!("--permission-mode={mode}"));
        }
        let child = ChildProcess::spawn(&launch.process.binary, &argv, &launch.process.cwd, &plan.env, self.events_tx.clone(), self.generation)?;
        let id = format!("init{}", self.generation);
        let request = control::initialize(&id, &plan.servers, &plan.sdk_servers, (self.parts.claude_hooks)());
        let servers_sent = !plan.servers.is_empty();
        self.running = Some(Running { child, plan });
        self.send(&request)?;
        let response = self.pump(Instant::now() + self.timeouts.initialize, &Until::Response(id), host, turn)?;
        control::check_initialized(&response, servers_sent).map_err(|e| DriverError::new("provider-rejected", e))
    }

    fn send(&mut self, msg: &Value) -> Result<(), DriverError> {
        match &mut self.running {
            Some(r) => r.child.send(msg),
            None => Err(DriverError::new("provider-exited", "no claude process")),
        }
    }

    /// Handles everything the CLI and the bridge send until `until`, by
    /// `deadline`: gated calls are answered, other requests refused, tool
    /// calls recorded, the host's tools run.
    fn pump(&mut self, deadline: Instant, until: &Until, host: &mut dyn Host, turn: &mut Turn) -> Result<Value, DriverError> {
        loop {
            let event = match self.events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(e) => e,
                Err(RecvTimeoutError::Timeout) => {
                    let what = match until {
                        Until::Response(_) => "answer initialize",
                        Until::Result => "finish the turn",
                    };
                    return Err(DriverError::new("timeout", format!("claude did not {what} in time")));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(DriverError::new("provider-exited", "event channel closed")),
            };
            let msg = match event {
                Event::Bridge(call) => {
                    let answer = host_tool(&self.parts, &call, host, &mut turn.report);
                    let _ = call.reply.send(answer);
                    continue;
                }
                Event::Child { generation, .. } | Event::ChildExited { generation } if generation != self.generation => continue,
                Event::ChildExited { .. } => {
                    let code = self.running.as_mut().and_then(|r| r.child.exit_code());
                    return Err(DriverError::new("provider-exited", format!("claude exited (code {code:?}) mid-turn")));
                }
                Event::Child { line: Err(e), .. } => return Err(DriverError::new("protocol-error", e)),
                Event::Child { line: Ok(msg), .. } => msg,
            };
            match control::classify(msg).map_err(|e| DriverError::new("protocol-error", e))? {
                FromCli::CanUseTool { id, request } => {
                    let name = request.get("tool_name").and_then(Value::as_str).unwrap_or("");
                    let input = request.get("input").cloned().unwrap_or(json!({}));
                    let behavior = (self.parts.claude_can_use_tool)(name, &input, &turn.ctx, host);
                    self.send(&control::can_use_tool_reply(&id, &request, behavior))?;
                }
                FromCli::Elicitation { id, request } => {
                    // A fail-closed driver refuses it itself; the CLI then
                    // tells the server the user declined.
                    let answer = if self.parts.host_prompts { (self.parts.claude_elicitation)(&request, host) } else { HostDecision::Decline.elicit_result() };
                    self.send(&control::success_reply(&id, answer))?;
                }
                FromCli::HookCallback { id, request } => {
                    let output = (self.parts.claude_hook_answer)(request.get("input").unwrap_or(&Value::Null));
                    self.send(&control::success_reply(&id, output))?;
                }
                FromCli::McpMessage { id, server, message } => {
                    let answer = match self.bridge.as_ref().filter(|s| s.name == server).map(|s| s.handle(&message)) {
                        Some(Handled::Answer(a)) => a,
                        Some(Handled::Call { id, tool, arguments, meta }) => {
                            sdk_server::result(id, run_host_tool(&self.parts, &tool, &arguments, &meta, host, &mut turn.report))
                        }
                        None => sdk_server::error(message.get("id").cloned().unwrap_or(Value::Null), -32601, &format!("Server '{server}' not found")),
                    };
                    self.send(&sdk_server::reply(&id, answer))?;
                }
                FromCli::Unsupported { id, subtype } => self.send(&control::unsupported(&id, &subtype))?,
                FromCli::Response { id, response } => {
                    if matches!(until, Until::Response(want) if *want == id) {
                        return Ok(response);
                    }
                }
                // Every request is answered at once: nothing to take back.
                FromCli::Cancelled => {}
                FromCli::Stream(msg) => {
                    if msg["type"] == "system" && msg["subtype"] == "init" {
                        if let Some(id) = msg["session_id"].as_str() {
                            self.session_id = Some(id.to_string());
                        }
                    }
                    turn.calls.observe(&msg, turn.ctx.servers, turn.bridge.as_deref(), &mut turn.report);
                    if matches!(until, Until::Result) && msg["type"] == "result" {
                        return Ok(msg);
                    }
                }
            }
        }
    }

    fn stop(&mut self) {
        if let Some(mut r) = self.running.take() {
            r.child.close_input();
            r.child.exited_within(self.timeouts.exit);
        }
    }
}

/// The host between turns: nothing is asked then, so a prompt that comes
/// anyway is declined, and no host tool runs.
struct Nobody;

impl Host for Nobody {
    fn decide(&mut self, _prompt: &crate::host::HostPrompt) -> crate::host::HostDecision {
        crate::host::HostDecision::Decline
    }

    fn call_tool(&mut self, _tool: &str, _arguments: &Value) -> Value {
        json!({"content": [{"type": "text", "text": "no host tool runs between turns"}], "isError": true})
    }

    fn interrupt(&mut self, _event: &crate::gateway::binding::GatewayEvent) -> crate::gateway::binding::ResumeAnswer {
        crate::gateway::binding::ResumeAnswer::Deny
    }
}
