//! Reference driver: the provider-neutral per-tool approval contract
//! ([`spec`], [`fingerprint`]) and its implementations for `codex app-server`
//! ([`codex`]) and Claude Code (print mode: [`claude`]; SDK host mode:
//! [`claude_sdk`]); providers without a per-tool
//! primitive fail closed ([`fail_closed`]). The parts a buggy driver typically
//! gets wrong are plain functions collected in [`parts::Parts`], so tests can
//! swap exactly one.

pub mod bridge;
pub mod child;
pub mod claude;
pub mod claude_sdk;
pub mod codex;
pub mod error;
pub mod events;
pub mod fail_closed;
pub mod fingerprint;
pub mod gateway;
pub mod host;
pub mod launch;
pub mod parts;
pub mod spec;

pub use error::DriverError;
pub use host::{HostDecision, HostPrompt, Host};
pub use parts::Parts;
pub use launch::{BridgeSpec, BridgedResult, Launch, Process, ToolCallRecord, TurnReport};
pub use spec::{ApprovalPolicy, GlobalPolicy, McpServerSpec, ServerSet, SpecError, Transport};
