//! What a driver asks its host.

use serde::{Deserialize, Serialize};

use crate::gateway::binding::{GatewayEvent, ResumeAnswer};

/// A decision the driver cannot make on its own. Serializable: a driver
/// that runs out of process sends it to its host as is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostPrompt {
    ToolCall { server: String, tool: String },
    Command,
    FileChange,
    Permissions,
    UrlElicitation { server: String },
    FormElicitation { server: String },
}

impl HostPrompt {
    /// In words, for reports.
    pub fn describe(&self) -> String {
        match self {
            HostPrompt::ToolCall { server, tool } => format!("a tool-call approval for {server}.{tool}"),
            HostPrompt::Command => "a command approval".into(),
            HostPrompt::FileChange => "a file-change approval".into(),
            HostPrompt::Permissions => "a permissions request".into(),
            HostPrompt::UrlElicitation { server } => format!("a URL elicitation from {server}"),
            HostPrompt::FormElicitation { server } => format!("a form elicitation from {server}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostDecision {
    Accept,
    Decline,
    Cancel,
}

impl HostDecision {
    /// The MCP ElicitResult both providers pass back to the server. Never
    /// with `_meta.persist`: an approval lasts for this call only, so a
    /// later policy change is not undone by a remembered grant.
    pub fn elicit_result(self) -> serde_json::Value {
        match self {
            HostDecision::Accept => serde_json::json!({"action": "accept", "content": {}}),
            HostDecision::Decline => serde_json::json!({"action": "decline"}),
            HostDecision::Cancel => serde_json::json!({"action": "cancel"}),
        }
    }
}

pub trait Host {
    fn decide(&mut self, prompt: &HostPrompt) -> HostDecision;
    /// Asked after `decide` accepted `prompt`: the arguments the host puts
    /// in place of the model's, if it edited them.
    fn edited_input(&mut self, _prompt: &HostPrompt) -> Option<serde_json::Value> {
        None
    }
    /// Runs one of the host's own tools exposed through the bridge; returns
    /// an MCP CallToolResult.
    fn call_tool(&mut self, tool: &str, arguments: &serde_json::Value) -> serde_json::Value;
    /// A gateway pause (approval interrupt, OAuth consent) and its answer.
    fn interrupt(&mut self, event: &GatewayEvent) -> ResumeAnswer;
}

/// The host as a fail-closed driver sees it: every prompt is refused
/// without asking; the host's own tools and gateway pauses still reach it
/// (they are the driver's own calls, not provider prompts).
pub struct FailClosed<'a>(pub &'a mut dyn Host);

impl Host for FailClosed<'_> {
    fn decide(&mut self, _prompt: &HostPrompt) -> HostDecision {
        HostDecision::Decline
    }

    fn call_tool(&mut self, tool: &str, arguments: &serde_json::Value) -> serde_json::Value {
        self.0.call_tool(tool, arguments)
    }

    fn interrupt(&mut self, event: &GatewayEvent) -> ResumeAnswer {
        self.0.interrupt(event)
    }
}
