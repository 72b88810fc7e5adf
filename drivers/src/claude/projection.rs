//! The Claude Code projection of a [`ServerSet`]: each per-tool policy as an
//! exact `mcp__S__T` rule.

use crate::spec::{ApprovalPolicy, ServerSet};

/// Claude Code permission rules projected from a server set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaudeRules {
    /// Exact `mcp__S__T` names for `--allowedTools`.
    pub allow: Vec<String>,
    /// Exact names for `permissions.ask`: asked even if allowed elsewhere.
    pub ask: Vec<String>,
}

/// `approve` becomes an exact allow, `prompt` an exact ask rule.
pub fn claude_rules(set: &ServerSet) -> ClaudeRules {
    let mut rules = ClaudeRules::default();
    for s in set.servers() {
        for (tool, policy) in &s.tools {
            let name = format!("mcp__{}__{}", s.name, tool);
            match policy {
                ApprovalPolicy::Approve => rules.allow.push(name),
                ApprovalPolicy::Prompt => rules.ask.push(name),
            }
        }
    }
    rules
}
