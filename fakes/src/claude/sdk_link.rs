//! What the server list and the session keep of the SDK host's in-process
//! MCP servers (`sdk_servers` connects them and plays their calls): kept
//! apart so that neither depends on the module that drives them.

use serde_json::Value;

use super::config::ServerConfig;
use crate::mcp_client::Greeting;

/// The ids the CLI gives its requests to one SDK server.
pub struct HostLink {
    pub(super) next_id: u64,
}

/// An SDK server to connect, and what became of its manifest if the host
/// sent one.
pub struct Declared {
    pub(super) config: ServerConfig,
    pub(super) manifest: Option<Result<Greeting, &'static str>>,
}

/// A server that answered `initialize`; the rest of its handshake follows
/// the CLI's answer to the host's initialize.
pub struct Opened {
    pub(super) config: ServerConfig,
    pub(super) initialize: Value,
}
