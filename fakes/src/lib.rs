//! Scriptable fakes of the provider CLIs and MCP servers. Each fake is a
//! library entry point; the executables in `harness/src/bin` are thin shims.

pub mod wire;
pub mod codex;
pub mod claude;
pub mod version;
pub mod mcp;
pub mod mcp_client;
pub mod model;
pub mod proxy;
pub mod relay;
pub mod script;
mod uuid;
