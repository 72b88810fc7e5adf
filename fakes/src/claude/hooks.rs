//! PreToolUse hooks an SDK host registers in `initialize`
//! (`hooks: {"PreToolUse": [{"matcher", "hookCallbackIds"}]}`): which
//! callbacks a tool call wakes, the `hook_callback` request, and what the
//! host's answers decide together. Measured on 2.1.332 and 2.1.334 by
//! writing the stream-json lines to the real binaries (2026-12-03); the two
//! agree except where `profile` says otherwise.

use regex::Regex;
use serde_json::{json, Value};

/// One `{"matcher", "hookCallbackIds"}` entry of `hooks.PreToolUse`.
#[derive(Debug, Clone, PartialEq)]
pub struct HookMatcher {
    pub matcher: Option<String>,
    pub callback_ids: Vec<String>,
}

/// The PreToolUse hooks of one initialize request, in the order sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hooks {
    pub pre_tool_use: Vec<HookMatcher>,
}

impl Hooks {
    /// Reads `request.hooks`; entries that are not of the documented shape
    /// are skipped (not measured: the SDKs only send well-formed ones).
    pub fn from_initialize(hooks: Option<&Value>) -> Hooks {
        let entries = hooks.and_then(|h| h.get("PreToolUse")).and_then(Value::as_array).cloned().unwrap_or_default();
        let pre_tool_use = entries
            .iter()
            .filter_map(|e| {
                let ids = e.get("hookCallbackIds")?.as_array()?.iter().filter_map(Value::as_str).map(String::from).collect();
                Some(HookMatcher { matcher: e.get("matcher").and_then(Value::as_str).map(String::from), callback_ids: ids })
            })
            .collect();
        Hooks { pre_tool_use }
    }

    /// The callback ids a call of `tool_name` wakes, in matcher order (all
    /// of them are sent at once, before any answer: measured).
    pub fn callbacks_for(&self, tool_name: &str) -> Vec<String> {
        self.pre_tool_use
            .iter()
            .filter(|m| matches(m.matcher.as_deref(), tool_name))
            .flat_map(|m| m.callback_ids.iter().cloned())
            .collect()
    }
}

/// Whether a PreToolUse matcher covers a tool name (measured on 2.1.334,
/// and read in its source): no matcher, "" or "*" cover everything; a
/// matcher of only letters, digits, `_`, `|`, `,`, space and `-` is a list
/// of exact names split on `|` and `,` (each trimmed, empty ones dropped);
/// anything else is a JavaScript regex tested anywhere in the name (an
/// invalid one covers nothing). Case-sensitive. The fake uses Rust's regex
/// syntax, which lacks look-around and backreferences: such a matcher
/// covers nothing here (not measured how far the two differ).
pub fn matches(matcher: Option<&str>, tool_name: &str) -> bool {
    let Some(m) = matcher.filter(|m| !m.is_empty() && *m != "*") else { return true };
    if m.chars().all(|c| c.is_ascii_alphanumeric() || "_|, -".contains(c)) {
        return m.split(['|', ',']).map(str::trim).any(|name| !name.is_empty() && name == tool_name);
    }
    Regex::new(m).is_ok_and(|re| re.is_match(tool_name))
}

/// What one host answer to `hook_callback` says.
#[derive(Debug, Clone, PartialEq)]
pub enum HookAnswer {
    /// `{}` or no decision: the normal rules go on.
    NoOpinion,
    Allow { reason: Option<String>, updated_input: Option<Value> },
    Deny { reason: Option<String> },
    Ask { reason: Option<String> },
    /// An error reply or an answer the CLI cannot read: a warning event,
    /// then treated as empty.
    Failed,
    /// `hookSpecificOutput.hookEventName` is not PreToolUse: the call is
    /// refused with the "unexpected error" text.
    WrongEvent,
}

/// Reads one `control_response.response`: `subtype` "error" is a failed
/// callback; `hookSpecificOutput` (permissionDecision allow / deny / ask,
/// permissionDecisionReason, updatedInput) or the legacy `decision`
/// ("approve" / "block") with `reason`. `continue: false` is read by
/// [`stops_turn`]. Measured on 2.1.332 and 2.1.334.
pub fn parse_answer(reply: &Value) -> HookAnswer {
    if reply.get("subtype").and_then(Value::as_str) != Some("success") {
        return HookAnswer::Failed;
    }
    let Some(answer) = reply.get("response").and_then(Value::as_object) else { return HookAnswer::Failed };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(String::from);
    if let Some(out) = answer.get("hookSpecificOutput") {
        let Some(out) = out.as_object() else { return HookAnswer::Failed };
        if out.get("hookEventName").and_then(Value::as_str) != Some("PreToolUse") {
            return HookAnswer::WrongEvent;
        }
        let reason = text(out.get("permissionDecisionReason"));
        return match out.get("permissionDecision") {
            None | Some(Value::Null) => HookAnswer::NoOpinion,
            Some(d) => match d.as_str() {
                Some("allow") => HookAnswer::Allow { reason, updated_input: out.get("updatedInput").filter(|v| v.is_object()).cloned() },
                Some("deny") => HookAnswer::Deny { reason },
                Some("ask") => HookAnswer::Ask { reason },
                _ => HookAnswer::Failed,
            },
        };
    }
    let reason = text(answer.get("reason"));
    match answer.get("decision").and_then(Value::as_str) {
        Some("approve") => HookAnswer::Allow { reason, updated_input: None },
        Some("block") => HookAnswer::Deny { reason },
        _ => HookAnswer::NoOpinion,
    }
}

/// `continue: false` in an answer: the turn ends after this call, which
/// still goes through the normal rules (measured: can_use_tool was asked,
/// the tool ran, then the result with terminal_reason "hook_stopped").
pub fn stops_turn(reply: &Value) -> bool {
    reply.pointer("/response/continue") == Some(&json!(false))
}

/// What the callbacks of one call decide together, from their answers in
/// the order they arrived (measured with two callbacks on 2.1.334, answers
/// sent in both orders): deny over ask over allow; a deny's reason is that
/// of the last deny to arrive, an ask's that of the first ask.
#[derive(Debug, Clone, PartialEq)]
pub enum Combined {
    NoOpinion,
    Allow { updated_input: Option<Value> },
    Deny { reason: Option<String> },
    /// `asks`: how many callbacks said ask (with two, can_use_tool lacked
    /// `decision_reason_hook_source`: measured once, on 2.1.334).
    Ask { reason: Option<String>, asks: usize },
    WrongEvent,
}

pub fn combine(answers: &[HookAnswer]) -> Combined {
    let last = |pick: &dyn Fn(&HookAnswer) -> Option<Option<String>>| answers.iter().rev().find_map(pick);
    if answers.contains(&HookAnswer::WrongEvent) {
        return Combined::WrongEvent;
    }
    if let Some(reason) = last(&|a| if let HookAnswer::Deny { reason } = a { Some(reason.clone()) } else { None }) {
        return Combined::Deny { reason };
    }
    if let Some(reason) = answers.iter().find_map(|a| if let HookAnswer::Ask { reason } = a { Some(reason.clone()) } else { None }) {
        let asks = answers.iter().filter(|a| matches!(a, HookAnswer::Ask { .. })).count();
        return Combined::Ask { reason, asks };
    }
    // Not measured with two allows carrying different updatedInput: the last one is taken.
    let allow = answers.iter().rev().find_map(|a| if let HookAnswer::Allow { updated_input, .. } = a { Some(updated_input.clone()) } else { None });
    match allow {
        Some(updated_input) => Combined::Allow { updated_input },
        None => Combined::NoOpinion,
    }
}

/// Where a call happens, for the hook's `input`.
pub struct CallPlace<'a> {
    pub session_id: &'a str,
    pub transcript_path: &'a str,
    pub cwd: &'a str,
    pub prompt_id: &'a str,
    pub permission_mode: &'a str,
}

/// The `hook_callback` request for one callback (shape measured on both
/// versions; `effort` is the default level, as the real CLI reports it
/// without `--effort`).
pub fn hook_callback(callback_id: &str, place: &CallPlace, tool_name: &str, tool_input: &Value, tool_use_id: &str, server: &str, source: &str) -> Value {
    json!({
        "subtype": "hook_callback", "callback_id": callback_id,
        "input": {
            "session_id": place.session_id, "transcript_path": place.transcript_path, "cwd": place.cwd,
            "prompt_id": place.prompt_id, "permission_mode": place.permission_mode, "effort": {"level": "medium"},
            "hook_event_name": "PreToolUse", "tool_name": tool_name, "tool_input": tool_input, "tool_use_id": tool_use_id,
            "mcp_server": {"name": server, "source": source},
        },
        "tool_use_id": tool_use_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_matchers() {
        // Each (matcher, srv echo, srv structured, other echo) as 2.1.334 woke them.
        for (m, a, b, c) in [
            (Some("mcp__srv__echo"), true, false, false),
            (Some("mcp__srv"), false, false, false),
            (Some("echo"), false, false, false),
            (Some("ech"), false, false, false),
            (Some("*"), true, true, true),
            (Some(""), true, true, true),
            (None, true, true, true),
            (Some("mcp__srv__echo|mcp__other__echo"), true, false, true),
            (Some("mcp__srv__echo | mcp__other__echo"), true, false, true),
            (Some("mcp__srv__echo,  mcp__other__echo"), true, false, true),
            (Some("mcp__srv__echo|"), true, false, false),
            (Some("mcp__srv__echo "), true, false, false),
            (Some(" mcp__other__echo"), false, false, true),
            (Some("mcp__srv__echo mcp__other__echo"), false, false, false),
            (Some("MCP__SRV__ECHO"), false, false, false),
            (Some("mcp__.*__echo"), true, false, true),
            (Some("mcp__srv__.*"), true, true, false),
            (Some("mcp__srv__ech."), true, false, false),
            (Some("mcp__srv__e*"), true, true, false),
            (Some("srv__ec.o"), true, false, false),
            (Some("^mcp__other"), false, false, true),
            (Some("mcp__srv__echo$"), true, false, false),
            (Some("["), false, false, false),
        ] {
            assert_eq!(
                (matches(m, "mcp__srv__echo"), matches(m, "mcp__srv__structured"), matches(m, "mcp__other__echo")),
                (a, b, c),
                "{m:?}"
            );
        }
    }

    #[test]
    fn callbacks_in_matcher_order() {
        let hooks = Hooks::from_initialize(Some(&json!({"PreToolUse": [
            {"matcher": "mcp__other__.*", "hookCallbackIds": ["x"]},
            {"matcher": "mcp__.*", "hookCallbackIds": ["a", "b"]},
            {"hookCallbackIds": ["c"]},
            {"matcher": "mcp__x"},
        ]})));
        assert_eq!(hooks.callbacks_for("mcp__srv__echo"), ["a", "b", "c"]);
        assert_eq!(hooks.callbacks_for("mcp__other__echo"), ["x", "a", "b", "c"]);
        assert!(Hooks::from_initialize(Some(&json!({}))).callbacks_for("mcp__a__b").is_empty());
        assert!(Hooks::from_initialize(None).pre_tool_use.is_empty());
    }

    fn ok(response: Value) -> Value {
        json!({"subtype": "success", "request_id": "r", "response": response})
    }

    fn decision(d: &str, reason: Option<&str>) -> Value {
        let mut o = json!({"hookEventName": "PreToolUse", "permissionDecision": d});
        if let Some(r) = reason {
            o["permissionDecisionReason"] = json!(r);
        }
        ok(json!({"hookSpecificOutput": o}))
    }

    #[test]
    fn answers() {
        assert_eq!(parse_answer(&ok(json!({}))), HookAnswer::NoOpinion);
        assert_eq!(parse_answer(&decision("deny", Some("R"))), HookAnswer::Deny { reason: Some("R".into()) });
        assert_eq!(parse_answer(&decision("deny", None)), HookAnswer::Deny { reason: None });
        assert_eq!(parse_answer(&decision("ask", Some("Q"))), HookAnswer::Ask { reason: Some("Q".into()) });
        assert_eq!(parse_answer(&decision("allow", None)), HookAnswer::Allow { reason: None, updated_input: None });
        assert_eq!(parse_answer(&decision("bogus", None)), HookAnswer::Failed);
        assert_eq!(parse_answer(&ok(json!("text"))), HookAnswer::Failed);
        assert_eq!(parse_answer(&json!({"subtype": "error", "error": "x"})), HookAnswer::Failed);
        let wrong = ok(json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}));
        assert_eq!(parse_answer(&wrong), HookAnswer::WrongEvent);
        assert_eq!(parse_answer(&ok(json!({"decision": "block", "reason": "L"}))), HookAnswer::Deny { reason: Some("L".into()) });
        assert_eq!(parse_answer(&ok(json!({"decision": "approve"}))), HookAnswer::Allow { reason: None, updated_input: None });
        let updated = ok(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"x": 1}}}));
        assert_eq!(parse_answer(&updated), HookAnswer::Allow { reason: None, updated_input: Some(json!({"x": 1})) });
        assert!(stops_turn(&ok(json!({"continue": false}))) && !stops_turn(&ok(json!({}))));
    }

    #[test]
    fn deny_over_ask_over_allow_with_the_measured_reasons() {
        let allow = HookAnswer::Allow { reason: None, updated_input: None };
        let deny = |r: &str| HookAnswer::Deny { reason: Some(r.into()) };
        let ask = |r: &str| HookAnswer::Ask { reason: Some(r.into()) };
        assert_eq!(combine(&[allow.clone(), deny("B")]), Combined::Deny { reason: Some("B".into()) });
        assert_eq!(combine(&[deny("B"), deny("A")]), Combined::Deny { reason: Some("A".into()) });
        assert_eq!(combine(&[ask("A"), allow.clone()]), Combined::Ask { reason: Some("A".into()), asks: 1 });
        assert_eq!(combine(&[ask("B"), ask("A")]), Combined::Ask { reason: Some("B".into()), asks: 2 });
        assert_eq!(combine(&[allow, HookAnswer::NoOpinion]), Combined::Allow { updated_input: None });
        assert_eq!(combine(&[HookAnswer::Failed, HookAnswer::NoOpinion]), Combined::NoOpinion);
        assert_eq!(combine(&[]), Combined::NoOpinion);
    }
}
