//! What a driver asks its host, and the errors it reports.

use std::fmt;

/// A decision the driver cannot make on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPrompt {
    ToolCall { server: String, tool: String },
    Command,
    FileChange,
    Permissions,
    UrlElicitation { server: String },
    FormElicitation { server: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostDecision {
    Accept,
    Decline,
    Cancel,
}

pub trait Host {
    fn decide(&mut self, prompt: &HostPrompt) -> HostDecision;
    /// Runs one of the host's own tools exposed through the bridge; returns
    /// an MCP CallToolResult.
    fn call_tool(&mut self, tool: &str, arguments: &serde_json::Value) -> serde_json::Value;
    /// A gateway pause (approval interrupt, OAuth consent) and its answer.
    fn interrupt(&mut self, event: &crate::gateway::GatewayEvent) -> crate::gateway::ResumeAnswer;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    /// Stable machine-readable kind (`invalid-policy`, `provider-rejected` ...).
    pub kind: String,
    pub message: String,
}

impl DriverError {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> DriverError {
        DriverError { kind: kind.into(), message: message.into() }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for DriverError {}

impl From<crate::spec::SpecError> for DriverError {
    fn from(e: crate::spec::SpecError) -> DriverError {
        DriverError::new(e.kind, e.message)
    }
}
