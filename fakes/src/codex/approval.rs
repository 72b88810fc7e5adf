//! Codex's decision for one MCP tool call: run it, ask the client, or deny it
//! in the CLI. Mirrors the measured matrix in ../shared/PROVIDERS.md.

use serde_json::Value;

use super::config::ApprovalMode;
use super::profile::Profile;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Run,
    Prompt,
    /// `never` on 0.148+: the item fails without asking anyone.
    DenyNever,
}

pub use super::profile::{CANCELLED, NEVER_DENIAL, REJECTED};

/// `approval_policy` is the thread's policy as sent (a string or `{granular}`);
/// `sandbox` its sandbox mode string.
pub fn decide(
    profile: &Profile,
    approval_policy: &Value,
    sandbox: &str,
    mode: ApprovalMode,
    annotations: Option<&Value>,
    approved_for_session: bool,
) -> Decision {
    let needs_approval = match mode {
        ApprovalMode::Approve => false,
        ApprovalMode::Prompt => true,
        ApprovalMode::Writes => !hint(annotations, "readOnlyHint").unwrap_or(false),
        ApprovalMode::Auto => needs_approval_by_annotations(profile, annotations),
    };
    // A `prompt` tool is offered no persistence, and a reply persisting its
    // approval anyway does not stop it asking (measured 2026-12-03: session
    // on 0.146.0 and 0.171.0, always on 0.171.0, which wrote no config).
    let remembered = approved_for_session && mode != ApprovalMode::Prompt;
    if !needs_approval || remembered {
        return Decision::Run;
    }
    if approval_policy.as_str() == Some("never") {
        if sandbox == "danger-full-access" {
            return Decision::Run;
        }
        if profile.never_denies_in_cli() {
            return Decision::DenyNever;
        }
    }
    Decision::Prompt
}

fn hint(annotations: Option<&Value>, key: &str) -> Option<bool> {
    annotations?.get(key)?.as_bool()
}

/// `auto`: read-only tools run; so do tools that declare themselves
/// non-read-only but also non-destructive and closed-world; the rest prompt.
fn needs_approval_by_annotations(profile: &Profile, annotations: Option<&Value>) -> bool {
    let read_only = hint(annotations, "readOnlyHint");
    let destructive = hint(annotations, "destructiveHint");
    let open_world = hint(annotations, "openWorldHint");
    if read_only == Some(true) {
        return destructive == Some(true) && !profile.read_only_wins_over_destructive();
    }
    !(read_only == Some(false) && destructive == Some(false) && open_world == Some(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;
    use serde_json::json;

    fn p(minor: u32) -> Profile {
        Profile { version: Version::new(0, minor, 0) }
    }

    #[test]
    fn measured_matrix() {
        let on_req = json!("on-request");
        let never = json!("never");
        let auto = ApprovalMode::Auto;
        let d = |pr: &Profile, pol: &Value, sb: &str, m, a: Value| decide(pr, pol, sb, m, Some(&a), false);
        assert_eq!(d(&p(171), &on_req, "read-only", auto, json!({})), Decision::Prompt);
        assert_eq!(d(&p(171), &on_req, "read-only", auto, json!({"readOnlyHint": true})), Decision::Run);
        assert_eq!(d(&p(171), &on_req, "read-only", auto, json!({"readOnlyHint": false})), Decision::Prompt);
        assert_eq!(
            d(&p(146), &on_req, "read-only", auto, json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false})),
            Decision::Run
        );
        let rod = json!({"readOnlyHint": true, "destructiveHint": true});
        assert_eq!(d(&p(153), &on_req, "read-only", auto, rod.clone()), Decision::Prompt);
        assert_eq!(d(&p(171), &on_req, "read-only", auto, rod), Decision::Run);
        assert_eq!(d(&p(147), &never, "read-only", auto, json!({})), Decision::Prompt);
        assert_eq!(d(&p(148), &never, "read-only", auto, json!({})), Decision::DenyNever);
        assert_eq!(d(&p(148), &never, "danger-full-access", auto, json!({})), Decision::Run);
        assert_eq!(d(&p(148), &never, "read-only", ApprovalMode::Approve, json!({})), Decision::Run);
        assert_eq!(d(&p(171), &on_req, "read-only", ApprovalMode::Prompt, json!({"readOnlyHint": true})), Decision::Prompt);
        assert_eq!(d(&p(171), &on_req, "read-only", ApprovalMode::Writes, json!({"readOnlyHint": true})), Decision::Run);
        assert_eq!(d(&p(171), &on_req, "read-only", ApprovalMode::Writes, json!({})), Decision::Prompt);
        assert_eq!(decide(&p(171), &on_req, "read-only", auto, None, true), Decision::Run);
        assert_eq!(decide(&p(146), &on_req, "read-only", ApprovalMode::Prompt, None, true), Decision::Prompt);
    }
}
