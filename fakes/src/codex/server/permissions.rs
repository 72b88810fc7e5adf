//! A `permissions` request step as real Codex plays it: the model calls
//! request_permissions (the mock model does, with
//! [`permissions_call_arguments`]), which Codex offers only with config's
//! `[features] request_permissions_tool` (the real-run wrapper turns it
//! on); Codex asks the client to grant the permissions and gives the model
//! what was granted. No item stands for the call (measured 2026-12-07 on
//! 0.146.1, 0.147.0, 0.149.1, 0.150.0 and 0.171.0:
//! recordings/labs/codex/<V>/request-kinds.json permissions_feature).

use serde_json::{json, Value};

use super::channel::{classify_permissions, recorded};
use super::shapes::now_ms;
use super::turn::Turn;
use crate::model::{permissions_call_arguments, PERMISSIONS_REASON};

impl Turn<'_> {
    /// Plays request step `step` as the model's request_permissions call `call_<step>`.
    pub(crate) fn permissions_request(&mut self, ctx: &Value, step: usize) {
        let call_id = format!("call_{step}");
        self.model_item(json!({"type": "function_call", "call_id": call_id, "name": "request_permissions"}));
        let thread_id = self.thread.id.clone();
        if nobody_asked(&self.thread.approval_policy) {
            let nothing = granted(&json!({"permissions": {}, "scope": "turn"}));
            self.refused_unasked(ctx, step, "item/permissions/requestApproval", &call_id, &nothing);
            return;
        }
        let flags = |f: Value| json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": f}});
        self.channel.notify("thread/status/changed", flags(json!(["waitingOnApproval"])));
        let mut requested = permissions_call_arguments()["permissions"].take();
        requested["fileSystem"] = Value::Null;
        let params = json!({"threadId": thread_id, "turnId": ctx["turnId"], "itemId": call_id, "environmentId": "local", "startedAtMs": now_ms(),
                            "cwd": self.thread.info["cwd"], "reason": PERMISSIONS_REASON, "permissions": requested});
        let reply = self.channel.ask(&thread_id, "item/permissions/requestApproval", params);
        self.channel.notify("thread/status/changed", flags(json!([])));
        let answer = classify_permissions(&reply);
        // An error or a result Codex cannot read grants nothing
        // (request-kinds.json permissions_error, permissions_malformed).
        let model_saw = reply.as_ref().map_or(Value::Null, |r| json!(granted(r.result.as_ref().unwrap_or(&Value::Null))));
        self.rec.record(&json!({"event": "outcome", "step": step, "method": "item/permissions/requestApproval", "prompted": true,
                                "answer": answer, "reply": recorded(&reply), "model_saw": model_saw}));
        self.call_answered(ctx, &call_id);
    }
}

/// Under approval policy `never`, or granular with `request_permissions`
/// false (absent, it reads false like the other granular fields), Codex
/// grants nothing without asking
/// (request-kinds.json permissions_never, permissions_granular_off;
/// granular with it true asks: permissions_granular_on).
fn nobody_asked(policy: &Value) -> bool {
    match policy.get("granular") {
        Some(g) => g.get("request_permissions").and_then(Value::as_bool) != Some(true),
        None => policy.as_str() == Some("never"),
    }
}

/// What the model is told was granted, as JSON text: the client's grant in
/// Codex's own (snake_case) field names and order, each permission null
/// unless granted. Unlike asking the user a question, it leaves later
/// tools/call `_meta` as it was.
fn granted(result: &Value) -> String {
    let p = &result["permissions"];
    let pick = |v: &Value| if v.is_object() { v.to_string() } else { "null".into() };
    let scope = result.get("scope").cloned().unwrap_or(json!("turn"));
    format!("{{\"permissions\":{{\"network\":{},\"file_system\":{}}},\"scope\":{scope}}}", pick(&p["network"]), pick(&p["fileSystem"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_told_the_grant_in_codex_field_order() {
        let nothing = r#"{"permissions":{"network":null,"file_system":null},"scope":"turn"}"#;
        assert_eq!(granted(&json!({"permissions": {"network": {"enabled": true}}, "scope": "turn"})),
                   r#"{"permissions":{"network":{"enabled":true},"file_system":null},"scope":"turn"}"#);
        for nothing_granted in [json!({"permissions": {}, "scope": "turn"}), json!({"bogus": 1}), Value::Null] {
            assert_eq!(granted(&nothing_granted), nothing, "{nothing_granted}");
        }
    }

    #[test]
    fn never_and_granular_without_request_permissions_ask_nobody() {
        assert!(nobody_asked(&json!("never")));
        assert!(nobody_asked(&json!({"granular": {"request_permissions": false}})));
        assert!(!nobody_asked(&json!({"granular": {"request_permissions": true}})));
        assert!(!nobody_asked(&json!("on-request")));
    }
}
