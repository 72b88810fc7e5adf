//! The reference driver behind the harness's [`Driver`] trait, and the
//! deliberately broken variants the suite must fail.

use std::collections::BTreeSet;

use drivers::bridge::BridgeTool;
use drivers::claude::ClaudeDriver;
use drivers::codex::CodexDriver;
use drivers::{
    ApprovalPolicy, BridgeSpec, GlobalPolicy, HostDecision, HostPrompt, Launch as DriverLaunch, McpServerSpec, Parts,
    ServerSet, SpecError,
};
use serde_json::{json, Value};

use crate::driver::{self, Driver, Failure, Host, Launch, Prompt, ServerSpec, Transport, TurnOutput};
use crate::scenario::HostAnswer;

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
    /// Providers without a per-tool primitive launch anyway, policies dropped.
    pub silent_downgrade: bool,
}

/// The provider-specific driver behind one session.
enum Session {
    None,
    Codex(CodexDriver),
    Claude(ClaudeDriver),
    /// A provider the reference drives without per-tool policies only.
    Unsupported(String),
}

pub struct ReferenceDriver {
    name: String,
    parts: Parts,
    session: Session,
    wiring: Wiring,
    ever_scoped: Vec<ServerSpec>,
}

impl ReferenceDriver {
    pub fn new() -> ReferenceDriver {
        ReferenceDriver::variant("reference", Parts::reference(), Wiring::default())
    }

    pub fn variant(name: &str, parts: Parts, wiring: Wiring) -> ReferenceDriver {
        ReferenceDriver { name: name.to_string(), parts, session: Session::None, wiring, ever_scoped: Vec::new() }
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
            binary: l.binary.clone(),
            home: l.home.clone(),
            cwd: l.cwd.clone(),
            secrets: l.secrets.clone(),
            global: global(&l.global)?,
            servers: self.specs(&l.servers)?,
            gateway: l.gateway.as_ref().map(|g| drivers::gateway::GatewaySpec {
                server: g.server.clone(),
                session: g.session.clone(),
                catalog: g
                    .catalog
                    .iter()
                    .map(|r| drivers::gateway::CatalogRow {
                        row_id: r.row_id.clone(),
                        target_id: r.target_id.clone(),
                        raw_tool: r.raw_tool.clone(),
                        approval: if r.approval == "required" {
                            drivers::gateway::GatewayApproval::Required
                        } else {
                            drivers::gateway::GatewayApproval::None
                        },
                        oauth_provider: r.oauth_provider.clone(),
                        custom_parameters: r.custom_parameters.clone(),
                    })
                    .collect(),
            }),
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
        driver::reference_capabilities()
    }

    fn fingerprint(&mut self, servers: &[ServerSpec], global_policy: &str) -> Result<String, Failure> {
        let set = (self.parts.build)(self.specs(servers)?).map_err(failure)?;
        Ok((self.parts.fingerprint)(&set, global(global_policy)?))
    }

    fn open(&mut self, launch: &Launch) -> Result<(), Failure> {
        let mut l = self.launch(launch)?;
        self.session = match launch.provider.as_str() {
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
            // The reference only checks these providers' declarations; it
            // starts their CLI only to show a downgrade would have launched.
            Session::Unsupported(_) => {
                let _ = std::process::Command::new(&launch.binary).status();
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
        match &mut self.session {
            Session::Codex(d) => d.resume(l).map_err(failure),
            Session::Claude(d) => d.resume(l).map_err(failure),
            _ => Ok(()),
        }
    }

    fn close(&mut self) {
        match &mut self.session {
            Session::Codex(d) => d.close(),
            Session::Claude(d) => d.close(),
            _ => {}
        }
        self.session = Session::None;
    }
}

struct HostBridge<'a>(&'a mut dyn Host);

impl drivers::Host for HostBridge<'_> {
    fn decide(&mut self, prompt: &HostPrompt) -> HostDecision {
        let p = match prompt {
            HostPrompt::ToolCall { server, tool } => Prompt::ToolCall { server: server.clone(), tool: tool.clone() },
            HostPrompt::Command => Prompt::Command,
            HostPrompt::FileChange => Prompt::FileChange,
            HostPrompt::Permissions => Prompt::Permissions,
            HostPrompt::UrlElicitation { server } => Prompt::UrlElicitation { server: server.clone() },
            HostPrompt::FormElicitation { server } => Prompt::FormElicitation { server: server.clone() },
        };
        match self.0.decide(&p) {
            HostAnswer::Accept => HostDecision::Accept,
            HostAnswer::Decline => HostDecision::Decline,
            HostAnswer::Cancel => HostDecision::Cancel,
        }
    }

    fn call_tool(&mut self, tool: &str, arguments: &Value) -> Value {
        self.0.call_tool(tool, arguments)
    }

    fn interrupt(&mut self, event: &drivers::gateway::GatewayEvent) -> drivers::gateway::ResumeAnswer {
        use drivers::gateway::{GatewayApproval, GatewayEvent as E, ResumeAnswer as R};
        let binding = |b: &drivers::gateway::Binding| driver::Binding {
            target_id: b.target_id.clone(),
            raw_tool: b.raw_tool.clone(),
            runtime_id: b.runtime_id.clone(),
            catalog_row_id: b.catalog_row_id.clone(),
            approval: if b.approval == GatewayApproval::Required { "required" } else { "none" }.into(),
            oauth_provider_id: b.oauth_provider_id.clone(),
            custom_parameters_digest: b.custom_parameters_digest.clone(),
            session: b.session.clone(),
        };
        let e = match event {
            E::ApprovalInterrupt(b) => driver::GatewayEvent::ApprovalInterrupt { binding: binding(b) },
            E::OAuthRequired(b) => driver::GatewayEvent::OauthRequired { binding: binding(b) },
        };
        match self.0.interrupt(&e) {
            driver::ResumeAnswer::Approve => R::Approve,
            driver::ResumeAnswer::Deny => R::Deny,
            driver::ResumeAnswer::Consented => R::Consented,
            driver::ResumeAnswer::Declined => R::Declined,
        }
    }
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

// ---- mutants ---------------------------------------------------------------

/// A known driver bug, as a constructor of the broken driver.
pub struct Mutant {
    pub name: &'static str,
    pub bug: &'static str,
    pub build: fn() -> ReferenceDriver,
}

fn with_parts(name: &str, change: impl FnOnce(&mut Parts)) -> ReferenceDriver {
    let mut parts = Parts::reference();
    change(&mut parts);
    ReferenceDriver::variant(name, parts, Wiring::default())
}

fn with_wiring(name: &str, wiring: Wiring) -> ReferenceDriver {
    ReferenceDriver::variant(name, Parts::reference(), wiring)
}

pub fn mutants() -> Vec<Mutant> {
    vec![
        Mutant {
            name: "reject-all-requests",
            bug: "refuses every server request, so a prompted tool the host approves never runs",
            build: || {
                with_parts("reject-all-requests", |p| {
                    p.respond = |m, _, _, _| Err((-32601, format!("unsupported `{m}`")));
                    p.claude_permission = |name, _, _, _| json!({"behavior": "deny", "message": format!("{name} refused")});
                })
            },
        },
        Mutant {
            name: "global-never",
            bug: "maps auto-approve to approvalPolicy `never`, an in-CLI denial on Codex 0.148+",
            build: || {
                with_parts("global-never", |p| {
                    p.approval_policy = |g, _| match g {
                        GlobalPolicy::AutoApprove => json!("never"),
                        GlobalPolicy::Ask => json!("on-request"),
                    }
                })
            },
        },
        Mutant {
            name: "blanket-accept",
            bug: "accepts every elicitation and permission prompt, not only those it may settle",
            build: || {
                with_parts("blanket-accept", |p| {
                    p.claude_permission = |_, input, _, _| json!({"behavior": "allow", "updatedInput": input});
                    p.respond = |m, params, ctx, host| {
                        if m == "mcpServer/elicitation/request" {
                            Ok(json!({"action": "accept", "content": {}}))
                        } else {
                            drivers::codex::respond::respond(m, params, ctx, host)
                        }
                    }
                })
            },
        },
        Mutant {
            name: "accept-commands",
            bug: "approves command, file-change and permission requests without the host",
            build: || {
                with_parts("accept-commands", |p| {
                    p.respond = |m, params, ctx, host| match m {
                        "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => Ok(json!({"decision": "accept"})),
                        "item/permissions/requestApproval" => {
                            Ok(json!({"permissions": params.get("permissions").cloned().unwrap_or(json!({})), "scope": "session"}))
                        }
                        _ => drivers::codex::respond::respond(m, params, ctx, host),
                    }
                })
            },
        },
        Mutant {
            name: "ack-unknown-requests",
            bug: "answers server requests it does not understand with an empty result",
            build: || {
                with_parts("ack-unknown-requests", |p| {
                    p.respond = |m, params, ctx, host| match drivers::codex::respond::respond(m, params, ctx, host) {
                        Err((-32601, _)) => Ok(json!({})),
                        other => other,
                    }
                })
            },
        },
        Mutant {
            name: "drop-policy",
            bug: "silently drops per-tool policies from the provider config",
            build: || {
                with_parts("drop-policy", |p| {
                    p.claude_rules = |_| drivers::parts::ClaudeRules::default();
                    p.codex_config = |set| {
                        let stripped: Vec<McpServerSpec> =
                            set.servers().map(|s| McpServerSpec { tools: Default::default(), ..s.clone() }).collect();
                        drivers::codex::projection::config_toml(&ServerSet::build(stripped).unwrap_or_default())
                    }
                })
            },
        },
        Mutant {
            name: "server-wide-approve",
            bug: "approves a whole server when one of its tools is approved",
            build: || {
                with_parts("server-wide-approve", |p| {
                    p.claude_rules = |set| {
                        let mut rules = drivers::parts::claude_rules(set);
                        for s in set.servers().filter(|s| s.tools.values().any(|p| *p == ApprovalPolicy::Approve)) {
                            rules.allow.push(format!("mcp__{}", s.name));
                        }
                        rules
                    };
                    p.codex_config = |set| {
                        let mut text = drivers::codex::projection::config_toml(set);
                        for s in set.servers() {
                            if s.tools.values().any(|p| *p == ApprovalPolicy::Approve) {
                                text.push_str(&format!("\n[mcp_servers.{}]\ndefault_tools_approval_mode = \"approve\"\n", s.name));
                            }
                        }
                        // Appending a second [mcp_servers.X] header is invalid
                        // TOML; merge by re-parsing.
                        merge_duplicate_tables(&text)
                    }
                })
            },
        },
        Mutant {
            name: "name-only-match",
            bug: "matches approvals by tool name alone, so another server's same-named tool is approved too",
            build: || {
                with_parts("name-only-match", |p| {
                    p.claude_permission = |name, input, ctx, host| {
                        let approved = ctx.servers.servers().any(|s| {
                            s.tools.iter().any(|(t, p)| *p == ApprovalPolicy::Approve && name.ends_with(&format!("__{t}")))
                        });
                        if approved {
                            json!({"behavior": "allow", "updatedInput": input})
                        } else {
                            drivers::claude::permission(name, input, ctx, host)
                        }
                    };
                    p.respond = |m, params, ctx, host| {
                        if m == "mcpServer/elicitation/request" {
                            if let Some(tool) = drivers::codex::respond::approval_tool_name(params) {
                                if ctx.servers.servers().any(|s| s.tools.get(&tool) == Some(&ApprovalPolicy::Approve)) {
                                    return Ok(json!({"action": "accept", "content": {}}));
                                }
                            }
                        }
                        drivers::codex::respond::respond(m, params, ctx, host)
                    }
                })
            },
        },
        Mutant {
            name: "meta-tool-name-only",
            bug: "identifies the tool only by _meta.tool_name, which Codex sends from 0.167.2 on",
            build: || {
                with_parts("meta-tool-name-only", |p| {
                    p.respond = |m, params, ctx, host| {
                        let mut params = params.clone();
                        if params.pointer("/_meta/tool_name").is_none() {
                            params["message"] = json!("");
                        }
                        drivers::codex::respond::respond(m, &params, ctx, host)
                    }
                })
            },
        },
        Mutant {
            name: "persist-always",
            bug: "answers approvals with _meta.persist = always, so one yes outlives the policy",
            build: || {
                with_parts("persist-always", |p| {
                    p.respond = |m, params, ctx, host| {
                        let mut answer = drivers::codex::respond::respond(m, params, ctx, host);
                        if let Ok(v) = &mut answer {
                            if v.get("action") == Some(&json!("accept")) {
                                v["_meta"] = json!({"persist": "always"});
                            }
                        }
                        answer
                    }
                })
            },
        },
        Mutant {
            name: "fingerprint-ignores-policy",
            bug: "fingerprint covers servers but not tool policies, so a policy change reuses the old provider",
            build: || {
                with_parts("fingerprint-ignores-policy", |p| {
                    p.fingerprint = |set, g| {
                        let stripped: Vec<McpServerSpec> =
                            set.servers().map(|s| McpServerSpec { tools: Default::default(), ..s.clone() }).collect();
                        drivers::fingerprint::fingerprint(&ServerSet::build(stripped).unwrap_or_default(), g)
                    }
                })
            },
        },
        Mutant {
            name: "no-normalization",
            bug: "takes declarations verbatim: no trimming, later duplicates silently win",
            build: || with_parts("no-normalization", |p| p.build = build_verbatim),
        },
        Mutant {
            name: "reject-all-duplicates",
            bug: "refuses identical duplicate declarations that should merge",
            build: || with_parts("reject-all-duplicates", |p| p.build = build_rejecting_duplicates),
        },
        Mutant {
            name: "lenient-modes",
            bug: "drops unknown approval modes instead of refusing to launch",
            build: || with_wiring("lenient-modes", Wiring { lenient_modes: true, ..Wiring::default() }),
        },
        Mutant {
            name: "sticky-scoped-servers",
            bug: "keeps call-scoped servers attached after their call",
            build: || with_wiring("sticky-scoped-servers", Wiring { sticky_scoped: true, ..Wiring::default() }),
        },
        Mutant {
            name: "resume-drops-policies",
            bug: "re-declares servers without their tool policies on resume",
            build: || with_wiring("resume-drops-policies", Wiring { resume_drops_policies: true, ..Wiring::default() }),
        },
        Mutant {
            name: "secret-inline",
            bug: "writes the bearer token itself into the child's arguments instead of naming its env var",
            build: || with_parts("secret-inline", |p| p.claude_auth_header = |_, value| format!("Bearer {value}")),
        },
        Mutant {
            name: "bridge-plain-on-request",
            bug: "bridges its tools under plain on-request instead of granular approval with experimentalApi",
            build: || with_parts("bridge-plain-on-request", |p| p.approval_policy = |_, _| json!("on-request")),
        },
        Mutant {
            name: "silent-downgrade",
            bug: "launches a provider without a per-tool primitive anyway, dropping the policies",
            build: || with_wiring("silent-downgrade", Wiring { silent_downgrade: true, ..Wiring::default() }),
        },
        Mutant {
            name: "bridge-keeps-annotations",
            bug: "passes host tool results to the child verbatim, annotations and user-only blocks included",
            build: || with_parts("bridge-keeps-annotations", |p| p.bridge_result = |r| r.clone()),
        },
        Mutant {
            name: "bridge-sends-twice",
            bug: "sends each bridged result block to the child twice",
            build: || {
                with_parts("bridge-sends-twice", |p| {
                    p.bridge_result = |r| {
                        let mut out = drivers::bridge::model_facing(r);
                        let blocks = out["content"].as_array().cloned().unwrap_or_default();
                        out["content"] = Value::Array(blocks.iter().chain(blocks.iter()).cloned().collect());
                        out
                    }
                })
            },
        },
        Mutant {
            name: "bridge-forwards-user-blocks",
            bug: "strips annotations from bridged results but forwards blocks meant only for the user",
            build: || {
                with_parts("bridge-forwards-user-blocks", |p| {
                    p.bridge_result = |r| {
                        let mut out = r.clone();
                        if let Some(blocks) = out["content"].as_array_mut() {
                            blocks.iter_mut().filter_map(Value::as_object_mut).for_each(|b| {
                                b.remove("annotations");
                            });
                        }
                        out
                    }
                })
            },
        },
        Mutant {
            name: "bridge-keyed-by-progress-token",
            bug: "records bridged results under the MCP progress token instead of the child's call id",
            build: || {
                with_parts("bridge-keyed-by-progress-token", |p| {
                    p.bridge_call_id = |meta, _| meta.get("progressToken").map(|t| t.to_string()).unwrap_or_default()
                })
            },
        },
        Mutant {
            name: "gateway-no-interrupt",
            bug: "runs gateway tools whose catalog row requires approval without an approval interrupt",
            build: || {
                with_parts("gateway-no-interrupt", |p| {
                    p.gateway_respond = |params, bindings, consents, host| {
                        let relaxed = bindings
                            .iter()
                            .map(|(k, b)| (k.clone(), drivers::gateway::Binding { approval: drivers::gateway::GatewayApproval::None, ..b.clone() }))
                            .collect();
                        drivers::gateway::respond(params, &relaxed, consents, host)
                    }
                })
            },
        },
        Mutant {
            name: "gateway-policy-by-raw-name",
            bug: "takes a gateway tool's policy from the first catalog row with the same raw tool name, whatever its target",
            build: || {
                with_parts("gateway-policy-by-raw-name", |p| {
                    p.gateway_bind = |spec| {
                        let mut bindings = drivers::gateway::bind(spec)?;
                        let first: std::collections::BTreeMap<String, drivers::gateway::GatewayApproval> =
                            spec.catalog.iter().rev().map(|r| (r.raw_tool.clone(), r.approval)).collect();
                        for b in bindings.values_mut() {
                            b.approval = first[&b.raw_tool];
                        }
                        Ok(bindings)
                    }
                })
            },
        },
        Mutant {
            name: "gateway-skips-oauth",
            bug: "lets gateway calls through without the OAuth consent their target needs",
            build: || {
                with_parts("gateway-skips-oauth", |p| {
                    p.gateway_respond = |params, bindings, consents, host| {
                        let no_oauth = bindings
                            .iter()
                            .map(|(k, b)| (k.clone(), drivers::gateway::Binding { oauth_provider_id: None, ..b.clone() }))
                            .collect();
                        drivers::gateway::respond(params, &no_oauth, consents, host)
                    }
                })
            },
        },
        Mutant {
            name: "gateway-consent-ignores-parameters",
            bug: "keeps OAuth consent across changed customParameters (binding keyed without its digest)",
            build: || {
                with_parts("gateway-consent-ignores-parameters", |p| {
                    p.gateway_bind = |spec| {
                        let mut bindings = drivers::gateway::bind(spec)?;
                        bindings.values_mut().for_each(|b| b.custom_parameters_digest = "ignored".into());
                        Ok(bindings)
                    }
                })
            },
        },
        Mutant {
            name: "gateway-unbound-runs",
            bug: "lets gateway tools that no catalog row binds run ungoverned",
            build: || {
                with_parts("gateway-unbound-runs", |p| {
                    p.gateway_respond = |params, bindings, consents, host| {
                        let tool = drivers::codex::respond::approval_tool_name(params).unwrap_or_default();
                        if bindings.contains_key(&tool) {
                            drivers::gateway::respond(params, bindings, consents, host)
                        } else {
                            json!({"action": "accept", "content": {}})
                        }
                    }
                })
            },
        },
        Mutant {
            name: "resume-is-noop",
            bug: "resume keeps the running provider, so rotated secrets and changed policies never arrive",
            build: || with_wiring("resume-is-noop", Wiring { resume_is_noop: true, ..Wiring::default() }),
        },
    ]
}

fn build_verbatim(specs: Vec<McpServerSpec>) -> Result<ServerSet, SpecError> {
    Ok(ServerSet::unchecked(specs))
}

fn build_rejecting_duplicates(specs: Vec<McpServerSpec>) -> Result<ServerSet, SpecError> {
    let mut seen = BTreeSet::new();
    for s in &specs {
        if !seen.insert(s.name.trim().to_string()) {
            return Err(SpecError::new("duplicate-conflict", format!("server `{}` declared twice", s.name)));
        }
    }
    ServerSet::build(specs)
}

fn merge_duplicate_tables(text: &str) -> String {
    let mut merged = toml::Table::new();
    for chunk in text.split("\n[mcp_servers.").enumerate().map(|(i, c)| if i == 0 { c.to_string() } else { format!("[mcp_servers.{c}") }) {
        if let Ok(t) = chunk.parse::<toml::Table>() {
            merge(&mut merged, t);
        }
    }
    toml::to_string(&merged).unwrap_or_default()
}

fn merge(into: &mut toml::Table, from: toml::Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

