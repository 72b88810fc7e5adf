//! Reference driver for Claude Code in print mode (`claude -p`, one process
//! per turn, `--resume` to continue).
//!
//! `approve` is projected to an exact `--allowedTools mcp__S__T`, `prompt` to
//! an exact `permissions.ask` rule, both on the name Claude Code renames the
//! tool to (see [`projection`]). Every gated call reaches the driver
//! through its bridge server's permission prompt tool, which decides like the
//! Codex driver does: policy first, then the host.

pub mod calls;
pub mod projection;
pub mod respond;

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bridge::BridgeServer;
use crate::child::ChildProcess;
use crate::codex::respond::Context;
use crate::error::DriverError;
use crate::events::{BridgeCall, Event};
use crate::host::Host;
use crate::launch::{BridgedResult, Launch, TurnReport};
use crate::parts::Parts;
use crate::spec::{GlobalPolicy, McpServerSpec, ServerSet, Transport};
use calls::Calls;
use projection::{claude_part, claude_tool_name};
pub use respond::permission;

/// Name of the permission prompt tool on the bridge server.
pub const PERMISSION_TOOL: &str = "permission_prompt";
/// The bridge's MCP server name when the host bridges no tools of its own.
pub const DEFAULT_BRIDGE: &str = "approval-bridge";
const TURN_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a CLI that has sent its result gets to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

pub struct ClaudeDriver {
    parts: Parts,
    launch: Option<Launch>,
    base: ServerSet,
    session_id: Option<String>,
    events_tx: Sender<Event>,
    events: Receiver<Event>,
    generation: u64,
    bridge: Option<(String, BridgeServer)>,
}

impl ClaudeDriver {
    pub fn new(parts: Parts) -> ClaudeDriver {
        let (events_tx, events) = mpsc::channel();
        ClaudeDriver { parts, launch: None, base: ServerSet::default(), session_id: None, events_tx, events, generation: 0, bridge: None }
    }

    /// Validates everything a turn will need; no process starts before one.
    pub fn open(&mut self, launch: Launch) -> Result<(), DriverError> {
        self.base = (self.parts.build)(launch.servers.clone())?;
        let name = launch.bridge.as_ref().map_or(DEFAULT_BRIDGE.to_string(), |b| b.server.trim().to_string());
        if self.base.get(&name).is_some() {
            return Err(DriverError::new("duplicate-conflict", format!("bridge server `{name}` is also declared")));
        }
        let mut tools = vec![json!({
            "name": PERMISSION_TOOL,
            "description": "Decides whether Claude Code may run a gated tool call.",
            "inputSchema": {"type": "object", "properties": {"tool_name": {"type": "string"}, "input": {"type": "object"},
                            "tool_use_id": {"type": "string"}}, "required": ["tool_name", "input"]},
        })];
        for t in launch.bridge.iter().flat_map(|b| &b.tools) {
            tools.push(json!({"name": t.name, "description": t.description, "inputSchema": {"type": "object", "additionalProperties": true}}));
        }
        let server = BridgeServer::start(tools, self.events_tx.clone())
            .map_err(|e| DriverError::new("launch-failed", format!("bridge server: {e}")))?;
        self.bridge = Some((name, server));
        self.session_id = None;
        check_secrets(&self.base, &launch)?;
        self.launch = Some(launch);
        Ok(())
    }

    /// Print mode starts a process per turn, so a resume only takes the new
    /// declarations and secrets; the next turn uses them.
    pub fn resume(&mut self, launch: Launch) -> Result<(), DriverError> {
        self.base = (self.parts.build)(launch.servers.clone())?;
        check_secrets(&self.base, &launch)?;
        self.launch = Some(launch);
        Ok(())
    }

    pub fn turn(&mut self, prompt: &str, scoped: Vec<McpServerSpec>, host: &mut dyn Host) -> Result<TurnReport, DriverError> {
        let set = self.base.merged(&(self.parts.build)(scoped)?)?;
        let launch = self.launch.clone().ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let (bridge_name, bridge_url) = match &self.bridge {
            Some((n, s)) => (n.clone(), s.url()),
            None => return Err(DriverError::new("not-open", "open() first")),
        };
        let env = check_secrets(&set, &launch)?;
        let args = self.arguments(prompt, &set, &launch, &bridge_name, &bridge_url);
        let mut env = env;
        env.insert("CLAUDE_CONFIG_DIR".into(), launch.process.home.display().to_string());
        self.generation += 1;
        let mut child = ChildProcess::spawn(&launch.process.binary, &args, &launch.process.cwd, &env, self.events_tx.clone(), self.generation)?;
        child.close_input();
        let ctx = Context { servers: &set, global: launch.global, thread_id: "", bridge: launch.bridge.as_ref() };
        let mut report = TurnReport::default();
        let mut calls = Calls::default();
        let deadline = Instant::now() + TURN_TIMEOUT;
        loop {
            let event = match self.events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(e) => e,
                Err(RecvTimeoutError::Timeout) => return Err(DriverError::new("timeout", "claude did not finish the turn")),
                Err(RecvTimeoutError::Disconnected) => return Err(DriverError::new("provider-exited", "event channel closed")),
            };
            match event {
                Event::Bridge(call) => {
                    let answer = if call.tool == PERMISSION_TOOL {
                        let tool_name = call.arguments.get("tool_name").and_then(Value::as_str).unwrap_or("");
                        let input = call.arguments.get("input").cloned().unwrap_or(json!({}));
                        let verdict = (self.parts.claude_permission)(tool_name, &input, &ctx, host);
                        json!({"content": [{"type": "text", "text": verdict.to_string()}]})
                    } else {
                        host_tool(&self.parts, &call, host, &mut report)
                    };
                    let _ = call.reply.send(answer);
                }
                Event::Child { generation, .. } | Event::ChildExited { generation } if generation != self.generation => {}
                Event::ChildExited { .. } => {
                    let code = child.exit_code();
                    return Err(DriverError::new("provider-exited", format!("claude exited (code {code:?}) before its result")));
                }
                Event::Child { line: Err(e), .. } => return Err(DriverError::new("protocol-error", e)),
                Event::Child { line: Ok(msg), .. } => {
                    if msg["type"] == "system" && msg["subtype"] == "init" {
                        self.session_id = msg["session_id"].as_str().map(String::from).or(self.session_id.take());
                    }
                    calls.observe(&msg, &set, Some(&bridge_name), &mut report);
                    if msg["type"] == "result" {
                        // The CLI saves the session on its way out: a kill
                        // right after the result can lose it (seen on
                        // 2.1.266: the next --resume finds no conversation).
                        child.exited_within(EXIT_GRACE);
                        return Ok(report);
                    }
                }
            }
        }
    }

    pub fn close(&mut self) {
        self.bridge = None;
    }

    fn arguments(&self, prompt: &str, set: &ServerSet, launch: &Launch, bridge: &str, bridge_url: &str) -> Vec<String> {
        let mut servers = mcp_servers(set, launch, &self.parts);
        servers.insert(bridge.to_string(), json!({"type": "http", "url": bridge_url}));
        let rules = (self.parts.claude_rules)(set);
        let mut allow = rules.allow;
        allow.extend(launch.bridge.iter().flat_map(|b| &b.tools).map(|t| claude_tool_name(bridge, &t.name)));
        // Fail-closed, nobody answers a prompt, so global auto-approve is
        // projected: each declared server allowed whole, its prompt tools
        // still asked (an ask rule beats an allow rule).
        if !self.parts.host_prompts && launch.global == GlobalPolicy::AutoApprove {
            allow.extend(set.servers().map(|s| format!("mcp__{}", claude_part(&s.name))));
        }
        let mut args = vec![
            "-p".to_string(),
            prompt.to_string(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--mcp-config".into(),
            json!({"mcpServers": servers}).to_string(),
            "--strict-mcp-config".into(),
        ];
        if let Some(mode) = self.parts.claude_print_mode {
            args.push("--permission-mode".into());
            args.push(mode.into());
        }
        // Fail-closed: no one to ask, so the CLI refuses gated calls itself.
        if self.parts.host_prompts {
            args.push("--permission-prompt-tool".into());
            args.push(claude_tool_name(bridge, PERMISSION_TOOL));
        }
        if !allow.is_empty() {
            args.push("--allowedTools".into());
            args.push(allow.join(","));
        }
        if !rules.ask.is_empty() {
            args.push("--settings".into());
            args.push(json!({"permissions": {"ask": rules.ask}}).to_string());
        }
        if let Some(id) = &self.session_id {
            args.push("--resume".into());
            args.push(id.clone());
        }
        args
    }
}

/// Runs a bridged call of one of the host's tools; what the child gets back
/// is recorded under the child's call id.
pub fn host_tool(parts: &Parts, call: &BridgeCall, host: &mut dyn Host, report: &mut TurnReport) -> Value {
    run_host_tool(parts, &call.tool, &call.arguments, &call.meta, host, report)
}

/// [`host_tool`] for a call that came some other way (an SDK server's
/// `mcp_message`): `meta` is the tools/call `_meta`.
pub fn run_host_tool(parts: &Parts, tool: &str, arguments: &Value, meta: &Value, host: &mut dyn Host, report: &mut TurnReport) -> Value {
    let call_id = (parts.bridge_call_id)(meta, None);
    let result = (parts.bridge_result)(&host.call_tool(tool, arguments));
    report.bridged.push(BridgedResult { call_id, tool: tool.to_string(), result: result.clone() });
    result
}

/// Each secret the servers need, from the launch: the child's environment.
pub fn check_secrets(set: &ServerSet, launch: &Launch) -> Result<BTreeMap<String, String>, DriverError> {
    set.secret_envs()
        .into_iter()
        .map(|var| match launch.process.secrets.get(var) {
            Some(v) => Ok((var.to_string(), v.clone())),
            None => Err(DriverError::new("missing-secret", format!("no value for `{var}`"))),
        })
        .collect()
}

/// The declared servers as Claude Code's `mcpServers` record (an
/// `--mcp-config` document's, or an SDK initialize request's); an HTTP
/// server's token as `parts.claude_auth_header` writes it.
pub fn mcp_servers(set: &ServerSet, launch: &Launch, parts: &Parts) -> serde_json::Map<String, Value> {
    let mut servers = serde_json::Map::new();
    for s in set.servers() {
        servers.insert(s.name.clone(), match &s.transport {
            Transport::Stdio { command, args, env } => json!({"type": "stdio", "command": command, "args": args, "env": env}),
            Transport::Http { url, bearer_token_env: Some(var) } => {
                let value = launch.process.secrets.get(var).map(String::as_str).unwrap_or("");
                json!({"type": "http", "url": url, "headers": {"Authorization": (parts.claude_auth_header)(var, value)}})
            }
            Transport::Http { url, bearer_token_env: None } => json!({"type": "http", "url": url}),
        });
    }
    servers
}
