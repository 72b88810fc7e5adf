//! What a host hands a driver to open a session, and what a turn reports.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::bridge::BridgeTool;
use crate::gateway::binding::GatewaySpec;
use crate::spec::{GlobalPolicy, McpServerSpec};

/// The host's own tools, exposed to the child through the driver's bridge
/// server under the MCP server name `server`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeSpec {
    pub server: String,
    pub tools: Vec<BridgeTool>,
}

/// The provider process a driver starts: which executable, in which
/// isolated home and working directory, with which secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    pub binary: PathBuf,
    /// The provider's isolated home (CODEX_HOME, CLAUDE_CONFIG_DIR).
    pub home: PathBuf,
    pub cwd: PathBuf,
    /// Secret values by environment variable name; passed to the provider's
    /// environment only, never written anywhere.
    pub secrets: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
pub struct Launch {
    pub process: Process,
    pub global: GlobalPolicy,
    pub servers: Vec<McpServerSpec>,
    pub bridge: Option<BridgeSpec>,
    /// A gateway among `servers`, with the host's catalog.
    pub gateway: Option<GatewaySpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRecord {
    /// The provider's call id (Codex item id, Claude tool_use id).
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub status: String,
    pub error: Option<String>,
}

/// A bridged call as the driver recorded it, keyed by the child's call id.
#[derive(Debug, Clone, PartialEq)]
pub struct BridgedResult {
    pub call_id: String,
    pub tool: String,
    /// What was sent back to the child.
    pub result: Value,
}

#[derive(Debug, Clone, Default)]
pub struct TurnReport {
    pub tool_calls: Vec<ToolCallRecord>,
    pub bridged: Vec<BridgedResult>,
}
