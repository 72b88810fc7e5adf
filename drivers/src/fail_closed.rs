//! Providers without an exact per-tool approval primitive. A request for a
//! per-tool policy there is refused before launch: a silent downgrade would
//! run tools the host meant to gate, or gate tools it meant to approve.

use crate::error::DriverError;
use crate::spec::ServerSet;

/// Whether `provider` can express `approve` / `prompt` for one exact tool.
pub fn has_per_tool_primitive(provider: &str) -> bool {
    matches!(provider, "codex" | "claude")
}

pub fn check(provider: &str, set: &ServerSet) -> Result<(), DriverError> {
    if has_per_tool_primitive(provider) {
        return Ok(());
    }
    match set.servers().find(|s| !s.tools.is_empty()) {
        Some(s) => Err(DriverError::new(
            "unsupported-policy",
            format!("{provider} has no exact per-tool approval primitive; refusing to launch with per-tool policies on server `{}`", s.name),
        )),
        None => Ok(()),
    }
}
