//! Scenario files: TOML, unknown keys rejected, every error located as
//! `file:line:col`. A scenario declares servers and policies, the provider
//! and version range it applies to, what the driver must support, a stream of
//! steps, and what must be observed after each step.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fakes::codex::script::RequestKind;
use fakes::version::VersionRange;
use serde::Deserialize;
use serde_json::Value;

/// Acceptance criteria and feature tags a scenario may claim to cover; see
/// scenarios/COVERAGE.md.
pub const COVERAGE_TAGS: &[&str] = &[
    "AC-1", "AC-2", "AC-3", "AC-4", "AC-5", "AC-6", "AC-7", "AC-8", "F1", "F4", "GW-1", "GW-2", "GW-3", "GW-4", "GW-5",
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Stable slug; also the trial name.
    pub id: String,
    pub title: String,
    pub covers: Vec<String>,
    pub provider: Provider,
    #[serde(default = "any_version")]
    pub versions: String,
    /// Driver capabilities this scenario needs; unclaimed ones skip it.
    #[serde(default)]
    pub requires: Vec<String>,
    /// Mutant drivers that must fail this scenario (strict).
    pub caught_by: Vec<String>,
    pub policy: GlobalPolicyDecl,
    #[serde(default)]
    pub servers: Vec<ServerDecl>,
    #[serde(default)]
    pub launch: LaunchExpect,
    /// Host tools the driver must expose to the child through its bridge.
    #[serde(default)]
    pub bridge: Option<BridgeDecl>,
    /// What the provider must have been told (Codex only).
    #[serde(default)]
    pub provider_saw: ProviderSawExpect,
    /// An MCP gateway among the servers, and the host's catalog for it.
    #[serde(default)]
    pub gateway: Option<GatewayDecl>,
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(skip)]
    pub path: PathBuf,
}

fn any_version() -> String {
    "*".into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Codex,
    Claude,
    /// Cursor and CodeBuddy have no exact per-tool approval primitive; only
    /// the driver's refusal to launch is tested for them.
    Cursor,
    Codebuddy,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Codex => "codex",
            Provider::Claude => "claude",
            Provider::Cursor => "cursor",
            Provider::Codebuddy => "codebuddy",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobalPolicyDecl {
    /// `ask` or `auto-approve`.
    pub global: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDecl {
    pub name: String,
    pub transport: TransportKind,
    /// Why the host attaches this server (required).
    pub reason: String,
    /// HTTP only: env var holding the bearer token. The harness makes up the
    /// secret value, so none is ever written in a scenario.
    #[serde(default)]
    pub bearer_token_env: Option<String>,
    /// false: declared, but only attached for calls by an `attach` step.
    #[serde(default = "yes")]
    pub attached: bool,
    /// Per-tool policies as the host writes them (validated by the driver).
    #[serde(default)]
    pub tools: BTreeMap<String, ToolPolicyDecl>,
    /// What the fake MCP server exposes. Defaults to the policy tools,
    /// unannotated.
    #[serde(default)]
    pub catalog: Option<BTreeMap<String, CatalogTool>>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Stdio,
    Http,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolPolicyDecl {
    pub approval_mode: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogTool {
    #[serde(default)]
    pub annotations: Option<toml::Table>,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeDecl {
    /// MCP server name the child sees the host tools under.
    pub server: String,
    /// Each tool's result, as the host returns it (blocks may carry
    /// annotations the driver must not pass on).
    pub tools: BTreeMap<String, BridgeToolDecl>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeToolDecl {
    pub content: Vec<toml::Table>,
    #[serde(default)]
    pub is_error: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayDecl {
    /// The declared server that is the gateway.
    pub server: String,
    #[serde(default = "default_session")]
    pub session: String,
    pub catalog: Vec<CatalogRowDecl>,
    /// Tools the gateway exposes that no catalog row binds (`target___tool`).
    #[serde(default)]
    pub unbound: Vec<String>,
}

fn default_session() -> String {
    "session-1".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogRowDecl {
    pub row: String,
    pub target: String,
    pub tool: String,
    /// `required` or `none`.
    pub approval: String,
    #[serde(default)]
    pub oauth_provider: Option<String>,
    #[serde(default)]
    pub custom_parameters: BTreeMap<String, String>,
}

impl CatalogRowDecl {
    pub fn runtime_id(&self) -> String {
        format!("gateway_{}___{}", self.target, self.tool)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSawExpect {
    /// `on-request`, `never`, `granular` ... for every thread opened.
    pub approval_policy: Option<String>,
    /// initialize asked for `experimentalApi`.
    pub experimental_api: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchExpect {
    /// The driver must refuse to launch with this error kind, before any
    /// provider process starts.
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostAnswer {
    Accept,
    Decline,
    Cancel,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// The model calls `server`'s `tool` (in the current turn).
    ToolCall {
        server: String,
        tool: String,
        #[serde(default)]
        arguments: Option<toml::Table>,
        /// What the host answers if the driver asks it (default decline);
        /// for a gateway tool, the answer to its approval interrupt.
        #[serde(default)]
        host: Option<HostAnswer>,
        /// Gateway tools: whether the user completes OAuth consent when asked.
        #[serde(default)]
        consent: Option<Consent>,
        expect: ToolCallExpect,
    },
    /// The provider asks the client something (in the current turn).
    Request {
        request: RequestKind,
        #[serde(default)]
        server: Option<String>,
        #[serde(default)]
        host: Option<HostAnswer>,
        expect: RequestExpect,
    },
    /// A server request with any method (in the current turn).
    RawRequest {
        method: String,
        #[serde(default)]
        params: Option<toml::Table>,
        expect: RequestExpect,
    },
    /// Attach a declared `attached = false` server to the following calls.
    Attach { server: String },
    Detach { server: String },
    /// The host re-opens the session with its current declarations.
    Resume {},
    /// The host replaces the bearer secret of an HTTP server, then resumes.
    RotateSecret { server: String },
    /// The host changes one tool policy (absent `approval_mode` removes it).
    SetPolicy {
        server: String,
        tool: String,
        #[serde(default)]
        approval_mode: Option<String>,
    },
    /// The host reverses the order of its server and tool declarations.
    ReorderServers {},
    /// The host changes a gateway target's customParameters in its catalog.
    SetCustomParameters { target: String, custom_parameters: BTreeMap<String, String> },
    /// Ask the driver for the fingerprint of the current declarations.
    Fingerprint {
        label: String,
        #[serde(default)]
        expect: FingerprintExpect,
    },
}

impl Step {
    /// Steps that happen inside a turn; the others are host actions that end it.
    pub fn in_turn(&self) -> bool {
        matches!(self, Step::ToolCall { .. } | Step::Request { .. } | Step::RawRequest { .. })
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallExpect {
    /// The provider sent an approval prompt to the driver.
    pub prompted: Option<bool>,
    /// The driver passed a decision to the host.
    pub host_asked: Option<bool>,
    /// What the driver answered the provider's prompt.
    pub answer: Option<String>,
    /// The driver asked the provider to remember its answer.
    pub persisted: Option<bool>,
    /// How many times the MCP server received this call.
    pub server_calls: Option<u64>,
    /// completed | failed | none (no MCP item: the tool was not offered).
    pub item: Option<String>,
    /// result | rejected | cancelled | denied-never | not-granted |
    /// unsupported | timeout | error.
    pub model_saw: Option<String>,
    /// Texts of the content blocks the provider received, in order.
    pub blocks: Option<Vec<String>>,
    /// Whether any block the provider received carried annotations.
    pub annotated: Option<bool>,
    /// The driver recorded this bridged call under the provider's call id.
    pub driver_recorded: Option<bool>,
    /// Gateway: the driver paused with an approval interrupt.
    pub interrupted: Option<bool>,
    /// Gateway: the driver paused for OAuth consent.
    pub oauth_required: Option<bool>,
    /// Gateway: the catalog row the driver's binding named.
    pub bound_row: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Consent {
    Grant,
    Decline,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestExpect {
    pub answer: Option<String>,
    pub host_asked: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FingerprintExpect {
    pub same_as: Option<String>,
    pub differs_from: Option<String>,
}

/// A scenario file that could not be used, located as precisely as known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.path.display(), self.line, self.column, self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// A file or directory that could not be read at all (no position).
    pub fn unreadable(path: &Path, message: String) -> ScenarioError {
        ScenarioError { path: path.to_path_buf(), line: 0, column: 0, message }
    }
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| ScenarioError::unreadable(path, format!("cannot read: {e}")))?;
        Scenario::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let mut scenario: Scenario = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |s| fakes::codex::config::line_col(text, s.start));
            ScenarioError { path: path.to_path_buf(), line, column, message: e.message().trim().to_string() }
        })?;
        scenario.path = path.to_path_buf();
        scenario.validate().map_err(|(needle, message)| {
            let (line, column) = locate(text, &needle);
            ScenarioError { path: path.to_path_buf(), line, column, message }
        })?;
        Ok(scenario)
    }

    pub fn version_range(&self) -> VersionRange {
        self.versions.parse().unwrap_or_else(|_| VersionRange::any())
    }

    pub fn server(&self, name: &str) -> Option<&ServerDecl> {
        self.servers.iter().find(|s| s.name.trim() == name.trim())
    }

    /// Checks what serde cannot: references between fields. Errors carry a
    /// snippet of the file to locate them by.
    fn validate(&self) -> Result<(), (String, String)> {
        fn err<T>(needle: &str, msg: String) -> Result<T, (String, String)> {
            Err((needle.to_string(), msg))
        }
        if self.id.is_empty() || !self.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            return err("id", format!("field `id`: `{}` is not a slug of [a-z0-9-]", self.id));
        }
        if self.covers.is_empty() {
            return err("covers", "field `covers`: list at least one criterion".into());
        }
        for tag in &self.covers {
            if !COVERAGE_TAGS.contains(&tag.as_str()) {
                return err(tag, format!("field `covers`: unknown criterion `{tag}` (known: {})", COVERAGE_TAGS.join(", ")));
            }
        }
        if let Err(e) = self.versions.parse::<VersionRange>() {
            return err("versions", format!("field `versions`: {e}"));
        }
        if !["ask", "auto-approve"].contains(&self.policy.global.as_str()) {
            return err("global", format!("field `policy.global`: `{}` is not ask or auto-approve", self.policy.global));
        }
        if self.caught_by.is_empty() {
            return err("caught_by", "field `caught_by`: name at least one mutant driver that fails this scenario".into());
        }
        for s in &self.servers {
            if s.reason.trim().is_empty() {
                return err(&s.name, format!("server `{}`: field `reason` is empty", s.name));
            }
            if s.bearer_token_env.is_some() && s.transport != TransportKind::Http {
                return err(&s.name, format!("server `{}`: `bearer_token_env` needs transport = \"http\"", s.name));
            }
            if self.launch.error.is_none() {
                for (tool, p) in &s.tools {
                    if !["prompt", "approve"].contains(&p.approval_mode.as_str()) {
                        return err(
                            &p.approval_mode,
                            format!("server `{}` tool `{tool}`: approval_mode `{}` is not prompt or approve (only a scenario expecting a launch error may use it)", s.name, p.approval_mode),
                        );
                    }
                }
            }
        }
        if self.provider != Provider::Codex
            && (self.provider_saw.approval_policy.is_some() || self.provider_saw.experimental_api.is_some())
        {
            return err("provider_saw", "`provider_saw` is only checked for codex".into());
        }
        if self.launch.error.is_some() && !self.steps.is_empty() {
            return err("steps", "a scenario expecting a launch error has no steps".into());
        }
        if self.launch.error.is_none() && self.steps.is_empty() {
            return err("id", "field `steps`: a scenario needs steps or `launch.error`".into());
        }
        let mut labels = BTreeSet::new();
        for (i, step) in self.steps.iter().enumerate() {
            let n = i + 1;
            let need_server = |name: &str| match self.server(name) {
                Some(s) => Ok(s),
                None => err(name, format!("step {n}: no server `{name}` is declared")),
            };
            match step {
                Step::ToolCall { server, tool, expect, .. } => {
                    match &self.bridge {
                        Some(b) if b.server.trim() == server.trim() => {
                            if !b.tools.contains_key(tool.trim()) {
                                return err(tool, format!("step {n}: the bridge has no host tool `{tool}`"));
                            }
                        }
                        _ => {
                            let s = need_server(server)?;
                            let exposed = match &self.gateway {
                                Some(g) if g.server.trim() == s.name.trim() => gateway_catalog(g),
                                _ => catalog(s),
                            };
                            if !exposed.contains_key(tool.trim()) {
                                return err(tool, format!("step {n}: server `{server}` does not expose tool `{tool}` (add it to its catalog)"));
                            }
                        }
                    }
                    if expect.is_empty() {
                        return err(tool, format!("step {n}: field `expect` checks nothing"));
                    }
                }
                Step::Request { .. } | Step::RawRequest { .. } if self.provider != Provider::Codex => {
                    return err("request", format!("step {n}: provider requests are only scripted for codex"));
                }
                Step::Request { request, server, expect, .. } => {
                    let needs_server = matches!(request, RequestKind::UrlElicitation | RequestKind::FormElicitation);
                    match (needs_server, server) {
                        (true, Some(s)) => {
                            need_server(s)?;
                        }
                        (true, None) => return err("request", format!("step {n}: an elicitation names its `server`")),
                        _ => {}
                    }
                    if expect.answer.is_none() && expect.host_asked.is_none() {
                        return err("request", format!("step {n}: field `expect` checks nothing"));
                    }
                }
                Step::RawRequest { method, expect, .. } => {
                    if expect.answer.is_none() && expect.host_asked.is_none() {
                        return err(method, format!("step {n}: field `expect` checks nothing"));
                    }
                }
                Step::Attach { server } | Step::Detach { server } => {
                    if need_server(server)?.attached {
                        return err(server, format!("step {n}: server `{server}` is not declared with attached = false"));
                    }
                }
                Step::RotateSecret { server } => {
                    if need_server(server)?.bearer_token_env.is_none() {
                        return err(server, format!("step {n}: server `{server}` has no bearer_token_env"));
                    }
                }
                Step::SetPolicy { server, .. } => {
                    need_server(server)?;
                }
                Step::Fingerprint { label, expect } => {
                    for other in [&expect.same_as, &expect.differs_from].into_iter().flatten() {
                        if !labels.contains(other) {
                            return err(other, format!("step {n}: no earlier fingerprint is labelled `{other}`"));
                        }
                    }
                    labels.insert(label.clone());
                }
                Step::SetCustomParameters { target, .. } => match &self.gateway {
                    Some(g) if g.catalog.iter().any(|r| &r.target == target) => {}
                    _ => return err(target, format!("step {n}: no gateway catalog row for target `{target}`")),
                },
                Step::Resume {} | Step::ReorderServers {} => {}
            }
        }
        Ok(())
    }
}

impl ToolCallExpect {
    fn is_empty(&self) -> bool {
        self.prompted.is_none()
            && self.host_asked.is_none()
            && self.answer.is_none()
            && self.persisted.is_none()
            && self.server_calls.is_none()
            && self.item.is_none()
            && self.model_saw.is_none()
            && self.blocks.is_none()
            && self.annotated.is_none()
            && self.driver_recorded.is_none()
            && self.interrupted.is_none()
            && self.oauth_required.is_none()
            && self.bound_row.is_none()
    }
}

/// The tools the fake MCP server exposes for a declaration. A gateway
/// exposes its catalog's tools and the unbound ones.
pub fn gateway_catalog(gateway: &GatewayDecl) -> BTreeMap<String, CatalogTool> {
    gateway
        .catalog
        .iter()
        .map(|r| r.runtime_id())
        .chain(gateway.unbound.iter().map(|u| format!("gateway_{u}")))
        .map(|t| (t, CatalogTool::default()))
        .collect()
}

/// The tools the fake MCP server exposes for a declaration.
pub fn catalog(server: &ServerDecl) -> BTreeMap<String, CatalogTool> {
    match &server.catalog {
        Some(c) => c.iter().map(|(k, v)| (k.trim().to_string(), v.clone())).collect(),
        None => server.tools.keys().map(|k| (k.trim().to_string(), CatalogTool::default())).collect(),
    }
}

/// Best-effort position of the first occurrence of `needle` in the text.
fn locate(text: &str, needle: &str) -> (usize, usize) {
    match text.find(needle) {
        Some(offset) if !needle.is_empty() => fakes::codex::config::line_col(text, offset),
        _ => (1, 1),
    }
}

/// Converts TOML tables from scenario files into JSON for the wire.
pub fn toml_to_json(t: &toml::Table) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

/// All `*.toml` scenario files below `dir`, sorted by path.
pub fn discover(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"id = "ok"
title = "t"
covers = ["AC-1"]
provider = "codex"
caught_by = ["drop-policy"]

[policy]
global = "ask"

[[servers]]
name = "files"
transport = "stdio"
reason = "r"
tools.read_file.approval_mode = "approve"

[[steps]]
kind = "tool_call"
server = "files"
tool = "read_file"
expect = { server_calls = 1 }
"#;

    fn err(text: &str) -> String {
        Scenario::parse(Path::new("s.toml"), text).unwrap_err().to_string()
    }

    #[test]
    fn good_scenario_parses() {
        let s = Scenario::parse(Path::new("s.toml"), GOOD).unwrap();
        assert_eq!(s.steps.len(), 1);
        assert_eq!(catalog(&s.servers[0]).len(), 1);
    }

    #[test]
    fn errors_name_file_line_column_and_field() {
        let e = err(&GOOD.replace("reason = \"r\"", "reason = \"r\"\ncolour = \"blue\""));
        assert!(e.starts_with("s.toml:14:1: unknown field `colour`"), "{e}");
        let e = err(&GOOD.replace("transport = \"stdio\"", "transport = \"pigeon\""));
        assert!(e.starts_with("s.toml:12:13:") && e.contains("pigeon"), "{e}");
        let e = err(&GOOD.replace("kind = \"tool_call\"", "kind = \"teleport\""));
        assert!(e.starts_with("s.toml:17:8:") && e.contains("teleport"), "{e}");
        let e = err(&GOOD.replace("expect = { server_calls = 1 }", "expect = { server_calls = 1, vibes = true }"));
        // Inside a tagged step the position is the step's table header.
        assert!(e.starts_with("s.toml:16:1:") && e.contains("`vibes`"), "{e}");
        let e = err(&GOOD.replace("server = \"files\"", "server = \"nope\""));
        assert!(e.starts_with("s.toml:") && e.contains("no server `nope`"), "{e}");
        let e = err(&GOOD.replace("covers = [\"AC-1\"]", "covers = [\"AC-99\"]"));
        assert!(e.starts_with("s.toml:3:") && e.contains("AC-99"), "{e}");
        let e = err(&GOOD.replace("caught_by = [\"drop-policy\"]", "caught_by = []"));
        assert!(e.contains("caught_by"), "{e}");
        let e = err(&GOOD.replace("approval_mode = \"approve\"", "approval_mode = \"sometimes\""));
        assert!(e.starts_with("s.toml:14:34:") && e.contains("sometimes"), "{e}");
        let e = err(&GOOD.replace("expect = { server_calls = 1 }", "expect = {}"));
        assert!(e.contains("checks nothing"), "{e}");
        let e = err("id = [");
        assert!(e.starts_with("s.toml:1:"), "{e}");
    }
}
