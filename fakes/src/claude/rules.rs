//! Permission rules for MCP tools and the per-call decision, as measured on
//! the real CLI:
//!
//! * deny and ask rules match the full name `mcp__S__T` with `*` wildcards
//!   anywhere (`mcp__*`, `*`, `mcp__S__ech*`), or a whole server `mcp__S`;
//! * allow rules name one server literally: `mcp__S` or `mcp__S__*` for the
//!   whole server, `mcp__S__T` (wildcards only inside `T`); `mcp__*`,
//!   `mcp__*__T`, `*` and a bare `T` allow nothing;
//! * a `(*)` suffix is the same rule as without it;
//! * every rule is matched against the renamed name the model sees
//!   ([`profile::model_tool_name`]): `mcp__notes__notes.append` matches
//!   nothing, `mcp__notes__notes_append` the tool `notes.append`.

use serde_json::{json, Value};

use super::profile;

/// Where a rule came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSource {
    /// `--allowedTools` / `--disallowedTools`.
    Cli,
    /// `--settings`.
    Flag,
    /// CLAUDE_CONFIG_DIR/settings.json.
    User,
    Project,
    Local,
}

impl RuleSource {
    /// `permission_decision.source` in 2.1.332's tool_result_meta.
    pub fn decision_source(self) -> &'static str {
        match self {
            RuleSource::User => "user_permanent",
            _ => "config",
        }
    }

    /// `decision_reason_rule_source` of a can_use_tool request an ask rule
    /// caused (measured on 2.1.334: flag, user, project and local settings;
    /// ask rules do not come from the command line).
    pub fn settings_name(self) -> &'static str {
        match self {
            RuleSource::Cli => "cliArg",
            RuleSource::Flag => "flagSettings",
            RuleSource::User => "userSettings",
            RuleSource::Project => "projectSettings",
            RuleSource::Local => "localSettings",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub text: String,
    pub source: RuleSource,
}

impl Rule {
    pub fn new(text: impl Into<String>, source: RuleSource) -> Rule {
        Rule { text: text.into(), source }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub allow: Vec<Rule>,
    pub deny: Vec<Rule>,
    pub ask: Vec<Rule>,
}

impl Rules {
    /// A deny rule removes the tool: the model never has it.
    pub fn denies(&self, name: &str) -> bool {
        self.deny.iter().any(|r| loose_match(&r.text, name))
    }

    pub fn asks(&self, server: &str, tool: &str) -> bool {
        self.asking(server, tool).is_some()
    }

    /// The first ask rule that covers the tool.
    pub fn asking(&self, server: &str, tool: &str) -> Option<&Rule> {
        let name = tool_name(server, tool);
        self.ask.iter().find(|r| loose_match(&r.text, &name))
    }

    /// The first allow rule that covers the tool.
    pub fn allowing(&self, server: &str, tool: &str) -> Option<&Rule> {
        let (server, tool) = (profile::sanitize_name(server), profile::sanitize_name(tool));
        self.allow.iter().find(|r| allow_match(&r.text, &server, &tool))
    }
}

/// The name the model, the rules and the prompt tool know the tool by.
pub fn tool_name(server: &str, tool: &str) -> String {
    profile::model_tool_name(server, tool)
}

/// `Tool(*)` and `Tool()` are the whole tool.
fn base(rule: &str) -> &str {
    let rule = rule.trim();
    rule.strip_suffix("(*)").or_else(|| rule.strip_suffix("()")).unwrap_or(rule)
}

/// Deny and ask matching: a glob over the full name, or a whole server.
fn loose_match(rule: &str, name: &str) -> bool {
    let rule = base(rule);
    if glob(rule, name) {
        return true;
    }
    // `mcp__S` covers every `mcp__S__T`.
    rule.starts_with("mcp__") && !rule["mcp__".len()..].contains("__") && name.starts_with(&format!("{rule}__"))
}

fn allow_match(rule: &str, server: &str, tool: &str) -> bool {
    let Some(rest) = base(rule).strip_prefix("mcp__") else { return false };
    match rest.split_once("__") {
        None => rest == server,
        Some((s, t)) => s == server && !s.contains('*') && glob(t, tool),
    }
}

/// `*` matches any run of characters; everything else is literal.
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] != '*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// How a call is settled before anything runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Runs without asking: by an allow rule, or by bypassPermissions.
    Allowed { reason: &'static str, source: &'static str },
    /// Needs permission: the prompt tool if any, else refused.
    Gated,
    /// Refused by the permission mode before anyone is asked.
    ModeDenied(ModeDenial),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeDenial {
    Plan,
    DontAsk,
    Auto,
}

/// The decision for a tool the model has (deny rules were applied when the
/// tool list was made). Measured order: plan mode refuses everything; an
/// ask rule gates even under bypassPermissions or an allow rule;
/// bypassPermissions runs the rest; then allow rules; the rest is gated,
/// which dontAsk and auto turn into refusals (but auto asks about a tool an
/// ask rule names: measured on 2.1.285..2.1.301, where it is the default).
pub fn decide(rules: &Rules, mode: &str, server: &str, tool: &str) -> Verdict {
    if mode == "plan" {
        return Verdict::ModeDenied(ModeDenial::Plan);
    }
    if mode == "auto" && rules.asks(server, tool) {
        return Verdict::Gated;
    }
    if !rules.asks(server, tool) {
        if mode == "bypassPermissions" {
            return Verdict::Allowed { reason: "mode", source: "config" };
        }
        if let Some(rule) = rules.allowing(server, tool) {
            return Verdict::Allowed { reason: "rule", source: rule.source.decision_source() };
        }
    }
    match mode {
        "dontAsk" => Verdict::ModeDenied(ModeDenial::DontAsk),
        "auto" => Verdict::ModeDenied(ModeDenial::Auto),
        _ => Verdict::Gated,
    }
}

/// An answer to a permission prompt, from the permission prompt tool or an
/// SDK host's `can_use_tool`: both carry the same `behavior` object.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptAnswer {
    Allow { updated_input: Option<Value> },
    /// `interrupt` (SDK hosts only) also ends the turn.
    Deny { message: String, interrupt: bool },
    /// Anything else the CLI refuses to take.
    Invalid,
}

impl PromptAnswer {
    /// `allow`, `deny` or `invalid`, as outcomes record it.
    pub fn word(&self) -> &'static str {
        match self {
            PromptAnswer::Allow { .. } => "allow",
            PromptAnswer::Deny { .. } => "deny",
            PromptAnswer::Invalid => "invalid",
        }
    }
}

/// `{"behavior":"allow","updatedInput"?:{...}}` or
/// `{"behavior":"deny","message":"...","interrupt"?:true}`.
pub fn read_behavior(answer: &Value) -> PromptAnswer {
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => match answer.get("updatedInput") {
            None | Some(Value::Null) => PromptAnswer::Allow { updated_input: None },
            Some(v @ Value::Object(_)) => PromptAnswer::Allow { updated_input: Some(v.clone()) },
            Some(_) => PromptAnswer::Invalid,
        },
        Some("deny") => match answer.get("message").and_then(Value::as_str) {
            Some(m) => PromptAnswer::Deny { message: m.to_string(), interrupt: answer.get("interrupt") == Some(&json!(true)) },
            None => PromptAnswer::Invalid,
        },
        _ => PromptAnswer::Invalid,
    }
}

/// The permission prompt tool's answer, checked as the real CLI does: one
/// text block holding the behavior object. The tool has no interrupt.
pub fn parse_prompt_answer(result: &Value) -> PromptAnswer {
    if result.get("isError") == Some(&json!(true)) {
        return PromptAnswer::Invalid;
    }
    let Some([block]) = result.get("content").and_then(Value::as_array).map(Vec::as_slice) else {
        return PromptAnswer::Invalid;
    };
    let Some(text) = block.get("text").and_then(Value::as_str).filter(|_| block.get("type") == Some(&json!("text"))) else {
        return PromptAnswer::Invalid;
    };
    let Ok(answer @ Value::Object(_)) = serde_json::from_str::<Value>(text) else {
        return PromptAnswer::Invalid;
    };
    match read_behavior(&answer) {
        PromptAnswer::Deny { message, .. } => PromptAnswer::Deny { message, interrupt: false },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow: &[&str], deny: &[&str], ask: &[&str]) -> Rules {
        let v = |l: &[&str]| l.iter().map(|r| Rule::new(*r, RuleSource::Cli)).collect();
        Rules { allow: v(allow), deny: v(deny), ask: v(ask) }
    }

    #[test]
    fn allow_rules_name_one_server_literally() {
        for (rule, srv_echo, other_echo) in [
            ("mcp__srv__echo", true, false),
            ("mcp__srv", true, false),
            ("mcp__srv__*", true, false),
            ("mcp__srv__ech*", true, false),
            ("mcp__srv__e*o", true, false),
            ("mcp__srv__echo(*)", true, false),
            ("mcp__*", false, false),
            ("mcp__**", false, false),
            ("mcp__s*", false, false),
            ("mcp__*__echo", false, false),
            ("*", false, false),
            ("echo", false, false),
        ] {
            let r = rules(&[rule], &[], &[]);
            assert_eq!(r.allowing("srv", "echo").is_some(), srv_echo, "{rule}");
            assert_eq!(r.allowing("other", "echo").is_some(), other_echo, "{rule}");
        }
    }

    #[test]
    fn rules_match_only_the_renamed_name() {
        let dotted = rules(&["mcp__notes__notes.append"], &["mcp__notes__notes.append"], &["mcp__notes__notes.append"]);
        assert!(dotted.allowing("notes", "notes.append").is_none());
        assert!(!dotted.asks("notes", "notes.append"));
        assert!(!dotted.denies(&tool_name("notes", "notes.append")));
        let renamed = rules(&["mcp__notes__notes_append"], &["mcp__notes__notes_append"], &["mcp__notes__notes_append"]);
        assert!(renamed.allowing("notes", "notes.append").is_some());
        assert!(renamed.asks("notes", "notes.append"));
        assert!(renamed.denies(&tool_name("notes", "notes.append")));
        assert!(rules(&["mcp__my_srv"], &[], &[]).allowing("my.srv", "echo").is_some());
        assert!(rules(&["mcp__my.srv"], &[], &[]).allowing("my.srv", "echo").is_none());
    }

    #[test]
    fn deny_rules_are_globs() {
        for (rule, srv_echo, other_echo) in [
            ("mcp__srv__echo", true, false),
            ("mcp__srv", true, false),
            ("mcp__srv__*", true, false),
            ("mcp__srv__*o", true, false),
            ("mcp__s*", true, false),
            ("mcp__*", true, true),
            ("mcp__*__echo", true, true),
            ("*", true, true),
            ("echo", false, false),
            ("mcp__sr", false, false),
        ] {
            let r = rules(&[], &[rule], &[]);
            assert_eq!(r.denies("mcp__srv__echo"), srv_echo, "{rule}");
            assert_eq!(r.denies("mcp__other__echo"), other_echo, "{rule}");
        }
    }

    #[test]
    fn decision_order() {
        let allow = rules(&["mcp__srv__echo"], &[], &[]);
        assert_eq!(decide(&allow, "default", "srv", "echo"), Verdict::Allowed { reason: "rule", source: "config" });
        assert_eq!(decide(&allow, "default", "other", "echo"), Verdict::Gated);
        assert_eq!(decide(&allow, "plan", "srv", "echo"), Verdict::ModeDenied(ModeDenial::Plan));
        assert_eq!(decide(&allow, "dontAsk", "other", "echo"), Verdict::ModeDenied(ModeDenial::DontAsk));
        assert_eq!(decide(&allow, "dontAsk", "srv", "echo"), Verdict::Allowed { reason: "rule", source: "config" });
        let ask = rules(&["mcp__srv__echo"], &[], &["mcp__*"]);
        assert_eq!(decide(&ask, "default", "srv", "echo"), Verdict::Gated);
        assert_eq!(decide(&ask, "bypassPermissions", "srv", "echo"), Verdict::Gated);
        assert_eq!(decide(&rules(&[], &[], &[]), "bypassPermissions", "x", "y"), Verdict::Allowed { reason: "mode", source: "config" });
    }

    #[test]
    fn prompt_answers() {
        let r = |t: &str| json!({"content": [{"type": "text", "text": t}]});
        assert_eq!(parse_prompt_answer(&r(r#"{"behavior":"allow"}"#)), PromptAnswer::Allow { updated_input: None });
        assert_eq!(
            parse_prompt_answer(&r(r#"{"behavior":"allow","updatedInput":{"a":1}}"#)),
            PromptAnswer::Allow { updated_input: Some(json!({"a": 1})) }
        );
        assert_eq!(parse_prompt_answer(&r(r#"{"behavior":"deny","message":"no"}"#)), PromptAnswer::Deny { message: "no".into(), interrupt: false });
        for bad in ["yes please", r#"{"behavior":"deny"}"#, r#"{"behavior":"maybe"}"#, r#"{"behavior":"allow","updatedInput":5}"#] {
            assert_eq!(parse_prompt_answer(&r(bad)), PromptAnswer::Invalid, "{bad}");
        }
        let two = json!({"content": [{"type": "text", "text": "{\"behavior\":\"allow\"}"}, {"type": "text", "text": "x"}]});
        assert_eq!(parse_prompt_answer(&two), PromptAnswer::Invalid);
    }
}
