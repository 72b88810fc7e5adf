//! Reference driver: the provider-neutral per-tool approval contract
//! ([`spec`], [`fingerprint`]) and its Codex app-server implementation
//! ([`codex`]). The parts a buggy driver typically gets wrong are plain
//! functions collected in [`codex::Parts`], so tests can swap exactly one.

pub mod codex;
pub mod fingerprint;
pub mod host;
pub mod spec;

pub use host::{DriverError, HostDecision, HostPrompt, Host};
pub use spec::{ApprovalPolicy, GlobalPolicy, McpServerSpec, ServerSet, SpecError, Transport};
