//! What `codex exec` does with one MCP tool call. exec has no client to ask,
//! and runs every turn under approval policy `never` whatever
//! `-c approval_policy` says (measured on 0.146.0, 0.148.0, 0.163.0 and
//! 0.171.0: the system prompt says "Approval policy is currently never").

use serde_json::{json, Value};

use crate::codex::approval::{self, Decision};
use crate::codex::config::ApprovalMode;
use crate::codex::profile::{self, Profile};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecDecision {
    /// The call reaches the server.
    Run,
    /// The item fails in the CLI with this message; no tools/call is sent.
    Fail(&'static str),
}

/// Only a per-tool `approve`, a tool that needs no approval (`readOnlyHint:
/// true` under `auto`) or `danger-full-access` let a call run.
pub fn decide(profile: &Profile, sandbox: &str, mode: ApprovalMode, annotations: Option<&Value>) -> ExecDecision {
    match approval::decide(profile, &json!("never"), sandbox, mode, annotations, false) {
        Decision::Run => ExecDecision::Run,
        Decision::DenyNever => ExecDecision::Fail(profile::NEVER_DENIAL),
        // Before 0.148.0 `never` still asks; exec cannot show the question
        // and the call fails as cancelled.
        Decision::Prompt => ExecDecision::Fail(profile::CANCELLED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;

    #[test]
    fn the_measured_table() {
        let v = |minor, patch| Profile { version: Version::new(0, minor, patch) };
        let ro = json!({"readOnlyHint": true});
        for p in [v(146, 0), v(147, 0)] {
            assert_eq!(decide(&p, "read-only", ApprovalMode::Auto, None), ExecDecision::Fail(profile::CANCELLED));
        }
        for p in [v(148, 0), v(153, 4), v(171, 0)] {
            assert_eq!(decide(&p, "read-only", ApprovalMode::Auto, None), ExecDecision::Fail(profile::NEVER_DENIAL));
        }
        for p in [v(146, 0), v(171, 0)] {
            assert_eq!(decide(&p, "read-only", ApprovalMode::Approve, None), ExecDecision::Run);
            assert_eq!(decide(&p, "read-only", ApprovalMode::Auto, Some(&ro)), ExecDecision::Run);
            assert_eq!(decide(&p, "danger-full-access", ApprovalMode::Auto, None), ExecDecision::Run);
            assert_eq!(decide(&p, "danger-full-access", ApprovalMode::Prompt, None), ExecDecision::Run);
            assert_ne!(decide(&p, "workspace-write", ApprovalMode::Auto, None), ExecDecision::Run);
        }
    }
}
