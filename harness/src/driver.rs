//! The driver under test, as the harness sees it. Everything crossing this
//! boundary is plain serializable data, so the same calls can travel over a
//! process boundary to a driver written in any language.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub use crate::scenario::HostAnswer;

/// One MCP server as the host declares it to the driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSpec {
    pub name: String,
    pub transport: Transport,
    pub reason: String,
    /// Exact tool name -> approval mode as written by the host (the driver
    /// validates it).
    pub tools: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Transport {
    Stdio { command: String, args: Vec<String> },
    Http { url: String, bearer_token_env: Option<String> },
}

/// Everything needed to open a session with the provider.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Launch {
    pub provider: String,
    /// The provider executable the driver must run (a fake, or a real
    /// binary), its isolated home and working directory, and the secrets.
    #[serde(flatten)]
    pub process: Process,
    /// `ask` or `auto-approve`.
    pub global: String,
    pub servers: Vec<ServerSpec>,
    /// The host's own tools, to expose to the child through the driver.
    pub bridge: Option<BridgeSpec>,
    /// A gateway among `servers`, with the host's catalog.
    #[serde(default)]
    pub gateway: Option<GatewaySpec>,
}

/// The gateway's catalog, the bindings a driver makes from it and the pauses
/// they cause: the reference library's own types, which are also the
/// protocol's.
/// Where the provider runs: the reference library's own type (flattened
/// into the protocol's `launch`).
pub use drivers::Process;
pub use drivers::gateway::{Binding, CatalogRow, GatewayApproval, GatewayEvent, GatewaySpec, ResumeAnswer};

/// Host tools a driver exposes to the child as MCP server `server`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BridgeSpec {
    pub server: String,
    pub tools: Vec<String>,
}

/// A decision the driver hands to its host: the reference library's own
/// type, which is also the protocol's (`{"type": "tool_call", ...}`).
pub use drivers::HostPrompt as Prompt;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: String,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl Failure {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure { kind: kind.into(), message: message.into() }
    }
}

/// The driver's own record of a tool call, keyed by the provider's call id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub status: String,
}

/// The driver's record of a bridged call, keyed by the child's call id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BridgedRecord {
    pub call_id: String,
    pub tool: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TurnOutput {
    pub tool_calls: Vec<ToolCallRecord>,
    #[serde(default)]
    pub bridged: Vec<BridgedRecord>,
}

pub trait Host {
    fn decide(&mut self, prompt: &Prompt) -> HostAnswer;
    /// Asked after `decide` accepted `prompt`: the arguments the host puts
    /// in place of the model's, if it edited them (an SDK host's allow with
    /// `updatedInput`).
    fn edited_input(&mut self, _prompt: &Prompt) -> Option<serde_json::Value> {
        None
    }
    /// Runs a host tool the driver bridged; returns an MCP CallToolResult.
    fn call_tool(&mut self, tool: &str, arguments: &serde_json::Value) -> serde_json::Value;
    /// A gateway pause: approval interrupt or OAuth consent.
    fn interrupt(&mut self, event: &GatewayEvent) -> ResumeAnswer;
}

pub trait Driver {
    fn name(&self) -> String;
    /// Capabilities the driver claims, e.g. `codex`, `per-tool-approval`.
    fn capabilities(&self) -> BTreeSet<String>;
    /// The provider versions the driver can drive, per provider it names
    /// (`hello`'s optional `provider_versions`); others are skipped with
    /// the reason. A provider it does not name: every version.
    fn provider_versions(&self) -> BTreeMap<String, fakes::version::VersionRange> {
        BTreeMap::new()
    }
    fn fingerprint(&mut self, servers: &[ServerSpec], global: &str) -> Result<String, Failure>;
    fn open(&mut self, launch: &Launch) -> Result<(), Failure>;
    /// One turn; `scoped` servers are attached for this call only.
    fn turn(&mut self, prompt: &str, scoped: &[ServerSpec], host: &mut dyn Host) -> Result<TurnOutput, Failure>;
    /// Re-open with (possibly changed) declarations or secrets.
    fn resume(&mut self, launch: &Launch) -> Result<(), Failure>;
    /// Switch the provider's permission mode between turns (`sdk-host`).
    fn permission_mode(&mut self, mode: &str) -> Result<(), Failure> {
        Err(Failure::new("unsupported", format!("cannot switch to permission mode {mode}")))
    }
    fn close(&mut self);
    /// Where the trial keeps what the driver said (its run directory's
    /// `driver/`); drivers with nothing of their own to record ignore it.
    fn record_to(&mut self, _dir: &std::path::Path) {}
}

/// Capabilities the reference driver claims: all of them but `sdk-host`
/// and `codex-exec` (it drives Claude Code in print mode and `codex
/// app-server`; `reference-claude-sdk` drives Claude Code's SDK host mode,
/// `reference-codex-exec` drives `codex exec`).
pub fn reference_capabilities() -> BTreeSet<String> {
    let other_modes = ["sdk-host", crate::scenario::design::CODEX_EXEC];
    crate::scenario::CAPABILITIES.iter().map(|(name, _)| name.to_string()).filter(|n| !other_modes.contains(&n.as_str())).collect()
}

/// Claimed capabilities the harness does not know.
pub fn unknown_capabilities(claimed: &BTreeSet<String>) -> Vec<String> {
    claimed.iter().filter(|c| !crate::scenario::is_capability(c)).cloned().collect()
}
