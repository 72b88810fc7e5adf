//! Scenario files: TOML, unknown keys rejected, every error located as
//! `file:line:col`. A scenario declares servers and policies, the provider
//! and version range it applies to, what the driver must support, a stream of
//! steps, and what must be observed after each step.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

mod check;
pub mod criteria;
pub mod design;
mod error;
mod load;
mod read;
mod spans;

pub use check::{ANSWERS, ITEMS, MODEL_SAW};
pub use error::ScenarioError;
pub use read::{discover, MAX_SCENARIO_BYTES};


/// Every capability a driver may claim, with what it means
/// (docs/driver-protocol.md says the same). A scenario `requires` some; a
/// driver claiming one not listed here cannot be judged.
pub const CAPABILITIES: &[(&str, &str)] = &[
    ("codex", "drives Codex (`codex app-server`)"),
    ("claude", "drives Claude Code (`claude -p`, or the SDK host mode: `--input-format stream-json`)"),
    ("cursor", "drives Cursor's agent CLI"),
    ("codebuddy", "drives CodeBuddy's CLI"),
    ("per-tool-approval", "takes a per-tool approval policy (`approve` | `prompt`) for each declared tool"),
    ("host-prompts", "brings provider prompts to its host and returns the host's answer; without it the driver is judged fail-closed"),
    ("fingerprint", "reports a fingerprint of its declarations and policies"),
    ("resume", "re-opens a session with changed declarations or policies"),
    ("call-scoped-servers", "attaches servers for one call only"),
    ("http-servers", "attaches streamable HTTP servers, their bearer token named by an environment variable"),
    ("secret-rotation", "takes a rotated bearer secret on resume"),
    ("bridge", "bridges the host's own tools to the provider as an MCP server"),
    ("gateway", "runs gateway tools bound to catalog rows, with approval interrupts and OAuth consent"),
    ("codex-exec", "drives Codex through `codex exec --json`, a process per turn and `exec resume` after the first (as `@openai/codex-sdk` does); judged as exec: nobody is prompted, the CLI settles every call from its config"),
    ("sdk-host", "drives the provider's SDK control protocol: hands an accepted call the input the host edited, stops the turn when the host cancels a prompt, changes the permission mode between turns"),
];

pub fn is_capability(name: &str) -> bool {
    CAPABILITIES.iter().any(|(known, _)| *known == name)
}

/// The capability names, comma-separated, for error messages.
pub fn capability_names() -> String {
    CAPABILITIES.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}

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
    /// Why a `codex exec` driver cannot play this Codex scenario; such a
    /// driver skips it with this reason.
    #[serde(default)]
    pub not_in_exec: Option<String>,
    /// Claude Code only: MCP_TOOL_TIMEOUT in the CLI's environment (ms), the
    /// deadline of every MCP tool call; with a catalog tool's `delay_ms`, a
    /// call that times out.
    #[serde(default)]
    pub mcp_tool_timeout_ms: Option<u64>,
    /// A generated fidelity case (`seed S case N`): judged by comparing the
    /// fake's and the real CLI's recordings, so it claims no criterion, names
    /// no mutant and its steps expect nothing.
    #[serde(default)]
    pub generated: Option<String>,
    #[serde(skip)]
    pub path: PathBuf,
    /// Line and column of `id` and of each `caught_by` entry, for the
    /// checks across scenarios.
    #[serde(skip)]
    pub id_at: (usize, usize),
    #[serde(skip)]
    pub caught_by_at: Vec<(usize, usize)>,
}

fn any_version() -> String {
    "*".into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
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
    /// The fake MCP server answers this tool's calls this late (ms).
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// The server asks the client this question (`elicitation/create`)
    /// during each call, before it answers (Codex, stdio servers).
    #[serde(default)]
    pub elicits: Option<String>,
    /// With `elicits`: the question is a URL-mode elicitation asking the
    /// user to open this page, not a form.
    #[serde(default)]
    pub elicit_url: Option<String>,
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

/// What the provider asks the client in a `request` step: the fakes'
/// script vocabulary (`command`, `file_change`, `permissions`,
/// `url_elicitation`, `form_elicitation`, `user_input`), which a scenario
/// hands to the fake as written.
pub use fakes::script::RequestKind;

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
/// Written `kind = "tool_call"` plus the fields; the loader hands serde
/// `tool_call = { fields }` so errors inside keep their positions.
#[serde(rename_all = "snake_case", deny_unknown_fields)]
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
        /// The arguments the host puts in place of the model's when it
        /// accepts (an SDK host's allow with `updatedInput`); the server
        /// must receive these.
        #[serde(default)]
        host_edits: Option<toml::Table>,
        /// Gateway tools: whether the user completes OAuth consent when asked.
        #[serde(default)]
        consent: Option<Consent>,
        expect: ToolCallExpect,
        /// What a fail-closed driver is expected to do instead, where that
        /// differs beyond what [`design`] derives; given fields replace
        /// `expect`'s.
        #[serde(default)]
        fail_closed: Option<ToolCallExpect>,
    },
    /// The provider asks the client something (in the current turn).
    Request {
        request: RequestKind,
        #[serde(default)]
        server: Option<String>,
        /// A `form_elicitation` that `server` sends itself while the turn's
        /// call of this tool runs (its catalog says `elicits`); the real CLI
        /// can be made to send it, unlike the provider's own requests.
        #[serde(default)]
        raised_by: Option<String>,
        #[serde(default)]
        host: Option<HostAnswer>,
        expect: RequestExpect,
        #[serde(default)]
        fail_closed: Option<RequestExpect>,
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
    /// The host switches the provider's permission mode between turns
    /// (Claude Code's SDK `set_permission_mode`).
    PermissionMode { mode: String },
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

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallExpect {
    /// The model made this call; false: the turn ended before it (the host
    /// cancelled an earlier prompt).
    pub made: Option<bool>,
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

/// Converts TOML tables from scenario files into JSON for the wire.
/// The arguments the model sends in step `step`'s call: the scenario's,
/// else unique ones, so the judge can attribute server calls to steps.
/// The step whose call raises request step `i` (`raised_by`): the nearest
/// call of that tool on that server before it in its turn, if any.
pub fn raising_call(steps: &[Step], i: usize) -> Option<usize> {
    let Some(Step::Request { server: Some(server), raised_by: Some(tool), .. }) = steps.get(i) else { return None };
    let calls_it = |j: &usize| matches!(&steps[*j], Step::ToolCall { server: s, tool: t, .. } if s.trim() == server.trim() && t.trim() == tool.trim());
    (0..i).rev().take_while(|j| steps[*j].in_turn()).find(calls_it)
}

pub fn call_arguments(step: usize, given: Option<&toml::Table>) -> Value {
    given.map(toml_to_json).unwrap_or_else(|| serde_json::json!({"note": format!("step {}", step + 1)}))
}

pub fn toml_to_json(t: &toml::Table) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}


/// A small valid scenario text for unit tests: a stdio server `files` whose
/// `tool` has approval `mode`, one call of it expecting `expect`, then
/// `more` (further TOML, e.g. steps).
#[cfg(test)]
pub(crate) fn sample(tool: &str, mode: &str, expect: &str, more: &str) -> String {
    format!(
        "id = \"ok\"\ntitle = \"t\"\ncovers = [\"AC-1\"]\nprovider = \"codex\"\ncaught_by = [\"drop-policy\"]\n\n\
         [policy]\nglobal = \"ask\"\n\n\
         [[servers]]\nname = \"files\"\ntransport = \"stdio\"\nreason = \"r\"\ntools.{tool}.approval_mode = \"{mode}\"\n\n\
         [[steps]]\nkind = \"tool_call\"\nserver = \"files\"\ntool = \"{tool}\"\nexpect = {expect}\n{more}"
    )
}
