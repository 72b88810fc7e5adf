//! The Claude Code projection of a [`ServerSet`]: each per-tool policy as an
//! exact rule on the name Claude Code gives the tool.
//!
//! Claude Code renames every character outside `[A-Za-z0-9_-]` in server
//! and tool names to `_` (measured on 2.1.266 and 2.1.332): the model, the
//! permission rules and the permission prompt tool all see
//! `mcp__notes__notes_append` for tool `notes.append`, and a rule naming
//! `mcp__notes__notes.append` matches nothing.

use crate::spec::{ApprovalPolicy, ServerSet};

/// Claude Code permission rules projected from a server set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaudeRules {
    /// Exact `mcp__S__T` names for `--allowedTools`.
    pub allow: Vec<String>,
    /// Exact names for `permissions.ask`: asked even if allowed elsewhere.
    pub ask: Vec<String>,
}

/// A server or tool name as Claude Code renames it (one `_` per UTF-16 unit).
pub fn claude_part(name: &str) -> String {
    name.chars()
        .flat_map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { vec![c] } else { vec!['_'; c.len_utf16()] })
        .collect()
}

/// `mcp__<server>__<tool>` as Claude Code names the tool.
pub fn claude_tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", claude_part(server), claude_part(tool))
}

/// The declared policy for a Claude Code tool name. Two declared tools of a
/// server can rename alike (`a.b`, `a_b`); then `prompt` wins, since which
/// of them the name reaches is up to the server's listing order.
pub fn policy_for(set: &ServerSet, claude_name: &str) -> Option<(String, String, ApprovalPolicy)> {
    let mut found: Option<(String, String, ApprovalPolicy)> = None;
    for s in set.servers() {
        for (tool, policy) in &s.tools {
            if claude_tool_name(&s.name, tool) == claude_name && found.as_ref().is_none_or(|f| f.2 == ApprovalPolicy::Approve) {
                found = Some((s.name.clone(), tool.clone(), *policy));
            }
        }
    }
    found
}

/// The declared tool behind a Claude Code tool name: (server, tool, its
/// policy) when the tool is declared with one, else the tool part of the
/// name on a known server (`servers`, and `also`) with no policy.
pub fn declared_tool<'a>(set: &'a ServerSet, also: impl IntoIterator<Item = &'a str>, claude_name: &str) -> Option<(String, String, Option<ApprovalPolicy>)> {
    if let Some((server, tool, policy)) = policy_for(set, claude_name) {
        return Some((server, tool, Some(policy)));
    }
    set.servers()
        .map(|s| s.name.as_str())
        .chain(also)
        .find_map(|s| claude_name.strip_prefix(&format!("mcp__{}__", claude_part(s))).map(|t| (s.to_string(), t.to_string(), None)))
}

/// `approve` becomes an exact allow, `prompt` an exact ask rule, both on the
/// renamed name; a name some `prompt` tool shares is never allowed.
pub fn claude_rules(set: &ServerSet) -> ClaudeRules {
    let mut rules = ClaudeRules::default();
    for s in set.servers() {
        for (tool, policy) in &s.tools {
            let name = claude_tool_name(&s.name, tool);
            let list = match policy {
                ApprovalPolicy::Approve if policy_for(set, &name).is_some_and(|p| p.2 == ApprovalPolicy::Approve) => &mut rules.allow,
                ApprovalPolicy::Approve => continue,
                ApprovalPolicy::Prompt => &mut rules.ask,
            };
            if !list.contains(&name) {
                list.push(name);
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{McpServerSpec, Transport};

    fn set(tools: &[(&str, ApprovalPolicy)]) -> ServerSet {
        let spec = McpServerSpec {
            name: "notes".into(),
            transport: Transport::Stdio { command: "x".into(), args: vec![], env: Default::default() },
            reason: "r".into(),
            tools: tools.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
        };
        ServerSet::build(vec![spec]).unwrap()
    }

    #[test]
    fn rules_name_the_renamed_tool() {
        let rules = claude_rules(&set(&[("notes.append", ApprovalPolicy::Approve), ("notes.drop", ApprovalPolicy::Prompt)]));
        assert_eq!(rules.allow, ["mcp__notes__notes_append"]);
        assert_eq!(rules.ask, ["mcp__notes__notes_drop"]);
        assert_eq!(claude_tool_name("my.srv", "a-b"), "mcp__my_srv__a-b");
    }

    #[test]
    fn a_shared_renamed_name_is_prompt_only() {
        let s = set(&[("a.b", ApprovalPolicy::Approve), ("a_b", ApprovalPolicy::Prompt)]);
        let rules = claude_rules(&s);
        assert!(rules.allow.is_empty());
        assert_eq!(rules.ask, ["mcp__notes__a_b"]);
        assert_eq!(policy_for(&s, "mcp__notes__a_b").map(|p| p.2), Some(ApprovalPolicy::Prompt));
        assert_eq!(policy_for(&s, "mcp__notes__a.b"), None);
    }
}
