//! The reference driver (the `drivers` crate) behind the harness's
//! [`Driver`] trait: as written, fail-closed, and driving Claude Code in SDK
//! host mode ([`ReferenceDriver::claude_sdk`]). Its parts and wiring can be
//! swapped, which is how [`crate::mutants`] builds the broken variants.

use std::collections::{BTreeMap, BTreeSet};

use drivers::bridge::BridgeTool;
use drivers::claude::ClaudeDriver;
use drivers::claude_sdk::ClaudeSdkDriver;
use drivers::codex::exec::CodexExecDriver;
use drivers::codex::CodexDriver;
use drivers::{ApprovalPolicy, BridgeSpec, GlobalPolicy, HostDecision, HostPrompt, Launch as DriverLaunch, McpServerSpec, Parts};
use serde_json::Value;

use crate::driver::{self, Driver, Failure, Host, Launch, ServerSpec, Transport, TurnOutput};
use crate::scenario::design::HOST_PROMPTS;
use fakes::version::VersionRange;
use crate::scenario::HostAnswer;

/// The name of [`ReferenceDriver::fail_closed`].
pub const FAIL_CLOSED: &str = "reference-fail-closed";
/// The name of [`ReferenceDriver::claude_sdk`].
pub const CLAUDE_SDK: &str = "reference-claude-sdk";
/// The name of [`ReferenceDriver::codex_exec`].
pub const CODEX_EXEC: &str = "reference-codex-exec";

/// What the `codex exec` driver claims: Codex only, fail-closed by
/// construction (exec asks nobody), a process per turn.
const CODEX_EXEC_CAPABILITIES: &[&str] = &[
    "codex",
    crate::scenario::design::CODEX_EXEC,
    "per-tool-approval",
    "fingerprint",
    "resume",
    "call-scoped-servers",
    "http-servers",
    "secret-rotation",
];

/// What the SDK host driver claims: Claude Code only, prompts to the host.
const CLAUDE_SDK_CAPABILITIES: &[&str] = &[
    "claude",
    "per-tool-approval",
    HOST_PROMPTS,
    "fingerprint",
    "resume",
    "call-scoped-servers",
    "http-servers",
    "secret-rotation",
    "bridge",
    "sdk-host",
];

/// The Claude Code versions that connect the MCP servers an SDK host's
/// initialize delivers (2.1.325 answers it but connects none); recorded
/// on 2.1.326..2.1.330, 2.1.332 and 2.1.334.
const CLAUDE_SDK_VERSIONS: &str = ">=2.1.326";

/// Adapter-level faults: bugs in how a driver library is wired into a host,
/// as opposed to the [`Parts`] it is made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wiring {
    /// Unknown approval modes are dropped instead of rejected.
    pub lenient_modes: bool,
    /// Call-scoped servers stay attached after their call.
    pub sticky_scoped: bool,
    /// Resume re-declares servers without their tool policies.
    pub resume_drops_policies: bool,
    /// Resume keeps the running provider whatever changed.
    pub resume_is_noop: bool,
    /// Resume hands Codex the tool policies as `thread/resume` config on the
    /// running app-server (which keeps a loaded thread's config).
    pub resume_sends_thread_config: bool,
    /// Providers without a per-tool primitive launch anyway, policies dropped.
    pub silent_downgrade: bool,
}

/// The provider-specific driver behind one session.
enum Session {
    None,
    Codex(CodexDriver),
    Claude(ClaudeDriver),
    ClaudeSdk(ClaudeSdkDriver),
    CodexExec(CodexExecDriver),
    /// A provider the reference drives without per-tool policies only.
    Unsupported(String),
}

pub struct ReferenceDriver {
    name: String,
    parts: Parts,
    session: Session,
    wiring: Wiring,
    ever_scoped: Vec<ServerSpec>,
    mode: Mode,
}

/// Which way of driving a provider a variant uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `codex app-server` and Claude Code's print mode.
    Default,
    /// Claude Code in SDK host mode ([`ClaudeSdkDriver`]), and nothing else.
    ClaudeSdk,
    /// `codex exec` ([`CodexExecDriver`]), and nothing else.
    CodexExec,
}

impl ReferenceDriver {
    pub fn new() -> ReferenceDriver {
        ReferenceDriver::variant("reference", Parts::reference(), Wiring::default())
    }

    /// The reference design as a fail-closed driver: it refuses every
    /// provider prompt itself and does not claim `host-prompts`.
    pub fn fail_closed() -> ReferenceDriver {
        ReferenceDriver::variant(FAIL_CLOSED, Parts::fail_closed(), Wiring::default())
    }

    /// The reference design driving Claude Code as an Agent SDK does (one
    /// long-lived CLI, prompts as `can_use_tool`), for Claude Code only.
    pub fn claude_sdk() -> ReferenceDriver {
        ReferenceDriver::variant(CLAUDE_SDK, Parts::reference(), Wiring::default()).in_mode(Mode::ClaudeSdk)
    }

    /// The reference design driving `codex exec` as `@openai/codex-sdk`
    /// does, for Codex only.
    pub fn codex_exec() -> ReferenceDriver {
        ReferenceDriver::variant(CODEX_EXEC, Parts::fail_closed(), Wiring::default()).in_mode(Mode::CodexExec)
    }

    pub fn variant(name: &str, parts: Parts, wiring: Wiring) -> ReferenceDriver {
        ReferenceDriver { name: name.to_string(), parts, session: Session::None, wiring, ever_scoped: Vec::new(), mode: Mode::Default }
    }

    /// This variant drives its provider in `mode`.
    pub fn in_mode(mut self, mode: Mode) -> ReferenceDriver {
        self.mode = mode;
        self
    }

    fn specs(&self, servers: &[ServerSpec]) -> Result<Vec<McpServerSpec>, Failure> {
        servers.iter().map(|s| self.spec(s)).collect()
    }

    fn spec(&self, s: &ServerSpec) -> Result<McpServerSpec, Failure> {
        let mut tools = std::collections::BTreeMap::new();
        for (tool, mode) in &s.tools {
            match ApprovalPolicy::parse(mode) {
                Ok(p) => {
                    tools.insert(tool.clone(), p);
                }
                Err(_) if self.wiring.lenient_modes => {}
                Err(e) => return Err(failure(e)),
            }
        }
        let transport = match &s.transport {
            Transport::Stdio { command, args } => {
                drivers::Transport::Stdio { command: command.clone(), args: args.clone(), env: Default::default() }
            }
            Transport::Http { url, bearer_token_env } => {
                drivers::Transport::Http { url: url.clone(), bearer_token_env: bearer_token_env.clone() }
            }
        };
        Ok(McpServerSpec { name: s.name.clone(), transport, reason: s.reason.clone(), tools })
    }

    fn launch(&self, l: &Launch) -> Result<DriverLaunch, Failure> {
        Ok(DriverLaunch {
            process: l.process.clone(),
            global: global(&l.global)?,
            servers: self.specs(&l.servers)?,
            gateway: l.gateway.clone(),
            bridge: l.bridge.as_ref().map(|b| BridgeSpec {
                server: b.server.clone(),
                tools: b.tools.iter().map(|t| BridgeTool { name: t.clone(), description: format!("Host tool {t}") }).collect(),
            }),
        })
    }
}

impl Default for ReferenceDriver {
    fn default() -> Self {
        ReferenceDriver::new()
    }
}

impl Driver for ReferenceDriver {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn capabilities(&self) -> BTreeSet<String> {
        match self.mode {
            Mode::ClaudeSdk => return CLAUDE_SDK_CAPABILITIES.iter().map(|c| c.to_string()).collect(),
            Mode::CodexExec => return CODEX_EXEC_CAPABILITIES.iter().map(|c| c.to_string()).collect(),
            Mode::Default => {}
        }
        let mut caps = driver::reference_capabilities();
        if !self.parts.host_prompts {
            caps.remove(HOST_PROMPTS);
        }
        caps
    }

    fn provider_versions(&self) -> BTreeMap<String, VersionRange> {
        match self.mode {
            Mode::ClaudeSdk => [("claude".to_string(), CLAUDE_SDK_VERSIONS.parse().expect("a valid range"))].into(),
            Mode::Default | Mode::CodexExec => BTreeMap::new(),
        }
    }

    fn fingerprint(&mut self, servers: &[ServerSpec], global_policy: &str) -> Result<String, Failure> {
        let set = (self.parts.build)(self.specs(servers)?).map_err(failure)?;
        Ok((self.parts.fingerprint)(&set, global(global_policy)?))
    }

    fn open(&mut self, launch: &Launch) -> Result<(), Failure> {
        let mut l = self.launch(launch)?;
        self.session = match launch.provider.as_str() {
            "claude" if self.mode == Mode::ClaudeSdk => Session::ClaudeSdk(ClaudeSdkDriver::new(self.parts)),
            other if self.mode == Mode::ClaudeSdk => return Err(Failure::new("unsupported", format!("{} drives only Claude Code, not {other}", self.name))),
            "codex" if self.mode == Mode::CodexExec => Session::CodexExec(CodexExecDriver::new(self.parts)),
            other if self.mode == Mode::CodexExec => return Err(Failure::new("unsupported", format!("{} drives only Codex, not {other}", self.name))),
            "codex" => Session::Codex(CodexDriver::new(self.parts)),
            "claude" => Session::Claude(ClaudeDriver::new(self.parts)),
            other => {
                let set = (self.parts.build)(l.servers.clone()).map_err(failure)?;
                if self.wiring.silent_downgrade {
                    l.servers.iter_mut().for_each(|s| s.tools.clear());
                } else {
                    drivers::fail_closed::check(other, &set).map_err(failure)?;
                }
                Session::Unsupported(other.to_string())
            }
        };
        match &mut self.session {
            Session::Codex(d) => d.open(l).map_err(failure),
            Session::Claude(d) => d.open(l).map_err(failure),
            Session::ClaudeSdk(d) => d.open(l).map_err(failure),
            Session::CodexExec(d) => d.open(l).map_err(failure),
            // The reference only checks these providers' declarations; it
            // starts their CLI only to show a downgrade would have launched.
            Session::Unsupported(_) => {
                let _ = std::process::Command::new(&launch.process.binary).status();
                Ok(())
            }
            Session::None => Ok(()),
        }
    }

    fn turn(&mut self, prompt: &str, scoped: &[ServerSpec], host: &mut dyn Host) -> Result<TurnOutput, Failure> {
        let mut scoped = scoped.to_vec();
        if self.wiring.sticky_scoped {
            for s in &scoped {
                if !self.ever_scoped.iter().any(|e| e.name == s.name) {
                    self.ever_scoped.push(s.clone());
                }
            }
            scoped = self.ever_scoped.clone();
        }
        let specs = self.specs(&scoped)?;
        let mut bridge = HostBridge(host);
        let report = match &mut self.session {
            Session::Codex(d) => d.turn(prompt, specs, &mut bridge),
            Session::Claude(d) => d.turn(prompt, specs, &mut bridge),
            Session::ClaudeSdk(d) => d.turn(prompt, specs, &mut bridge),
            Session::CodexExec(d) => d.turn(prompt, specs),
            Session::Unsupported(p) => return Err(Failure::new("unsupported", format!("the reference driver does not drive {p}"))),
            Session::None => return Err(Failure::new("not-open", "open() first")),
        }
        .map_err(failure)?;
        Ok(TurnOutput {
            tool_calls: report
                .tool_calls
                .into_iter()
                .map(|r| driver::ToolCallRecord { call_id: r.call_id, server: r.server, tool: r.tool, status: r.status })
                .collect(),
            bridged: report.bridged.into_iter().map(|b| driver::BridgedRecord { call_id: b.call_id, tool: b.tool }).collect(),
        })
    }

    fn resume(&mut self, launch: &Launch) -> Result<(), Failure> {
        if self.wiring.resume_is_noop {
            return Ok(());
        }
        let mut l = self.launch(launch)?;
        if self.wiring.resume_drops_policies {
            for s in &mut l.servers {
                s.tools.clear();
            }
        }
        let config = self.wiring.resume_sends_thread_config.then(|| thread_config(&l));
        let policy = (self.parts.approval_policy)(l.global, l.bridge.is_some());
        let cwd = l.process.cwd.display().to_string();
        match &mut self.session {
            Session::Codex(d) => {
                d.resume(l).map_err(failure)?;
                match (config, d.thread_id().map(String::from)) {
                    (Some(config), Some(thread)) => {
                        let params = serde_json::json!({"threadId": thread, "cwd": cwd, "approvalPolicy": policy,
                                                        "sandbox": "read-only", "config": config});
                        d.call("thread/resume", params).map(|_| ()).map_err(failure)
                    }
                    _ => Ok(()),
                }
            }
            Session::Claude(d) => d.resume(l).map_err(failure),
            Session::ClaudeSdk(d) => d.resume(l).map_err(failure),
            Session::CodexExec(d) => d.resume(l).map_err(failure),
            _ => Ok(()),
        }
    }

    fn permission_mode(&mut self, mode: &str) -> Result<(), Failure> {
        match &mut self.session {
            Session::ClaudeSdk(d) => d.permission_mode(mode).map_err(failure),
            _ => Err(Failure::new("unsupported", format!("{} has no permission mode to switch to {mode}", self.name))),
        }
    }

    fn close(&mut self) {
        match &mut self.session {
            Session::Codex(d) => d.close(),
            Session::Claude(d) => d.close(),
            Session::ClaudeSdk(d) => d.close(),
            _ => {}
        }
        self.session = Session::None;
    }
}

struct HostBridge<'a>(&'a mut dyn Host);

impl drivers::Host for HostBridge<'_> {
    fn decide(&mut self, prompt: &HostPrompt) -> HostDecision {
        match self.0.decide(prompt) {
            HostAnswer::Accept => HostDecision::Accept,
            HostAnswer::Decline => HostDecision::Decline,
            HostAnswer::Cancel => HostDecision::Cancel,
        }
    }

    fn edited_input(&mut self, prompt: &HostPrompt) -> Option<Value> {
        self.0.edited_input(prompt)
    }

    fn call_tool(&mut self, tool: &str, arguments: &Value) -> Value {
        self.0.call_tool(tool, arguments)
    }

    fn interrupt(&mut self, event: &drivers::gateway::GatewayEvent) -> drivers::gateway::ResumeAnswer {
        self.0.interrupt(event)
    }
}

/// Every declared tool policy as a Codex thread config key.
fn thread_config(l: &DriverLaunch) -> Value {
    let keys = l.servers.iter().flat_map(|s| {
        s.tools.iter().map(move |(tool, p)| {
            (format!("mcp_servers.{}.tools.{}.approval_mode", s.name.trim(), tool.trim()), Value::from(p.as_str()))
        })
    });
    Value::Object(keys.collect())
}

fn global(s: &str) -> Result<GlobalPolicy, Failure> {
    match s {
        "ask" => Ok(GlobalPolicy::Ask),
        "auto-approve" => Ok(GlobalPolicy::AutoApprove),
        other => Err(Failure::new("invalid-policy", format!("global policy `{other}`"))),
    }
}

fn failure(e: impl Into<drivers::DriverError>) -> Failure {
    let e = e.into();
    Failure::new(e.kind, e.message)
}
