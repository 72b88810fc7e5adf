//! The `_meta` Codex sends with each tools/call: the thread, session and call
//! ids its version knows, and `x-codex-turn-metadata` describing the turn.
//! The progressToken is the MCP session's (see `McpConnection::call`).

use serde_json::{json, Map, Value};

use crate::codex::profile::Profile;
use crate::uuid::new_uuid;

/// The model of every fake thread, as the real runs configure it.
const MODEL: &str = "mock-model";
/// The sandbox Codex applies on Linux: seccomp, or none at all under
/// `danger-full-access` (measured with codex exec on 0.146.0 to 0.171.0).
fn sandbox(mode: &str) -> &'static str {
    if mode == "danger-full-access" { "none" } else { "seccomp" }
}

/// What one turn contributes to its calls' `_meta`.
#[derive(Debug, Default, Clone)]
pub struct CallMeta {
    thread_id: String,
    turn_id: String,
    started_at_ms: u64,
    sandbox_mode: String,
    /// An approval or a question went to the client earlier in the turn.
    asked_user: bool,
    /// The turn is `codex exec`'s.
    exec: bool,
}

impl CallMeta {
    pub fn new(thread_id: &str, turn_id: &str, sandbox_mode: &str, started_at_ms: u64) -> CallMeta {
        CallMeta {
            thread_id: thread_id.to_string(),
            turn_id: turn_id.to_string(),
            started_at_ms,
            sandbox_mode: sandbox_mode.to_string(),
            asked_user: false,
            exec: false,
        }
    }

    /// A `codex exec` turn's: its turn metadata also names where the thread
    /// and the turn came from.
    pub fn in_exec(self) -> CallMeta {
        CallMeta { exec: true, ..self }
    }

    /// The client was asked something (approval, question, elicitation);
    /// later calls of the turn say so.
    pub fn asked_user(&mut self) {
        self.asked_user = true;
    }

    /// The `_meta` of the call `call_id`, without its progressToken.
    pub fn for_call(&self, profile: &Profile, call_id: &str) -> Value {
        let mut meta = Map::new();
        meta.insert("threadId".into(), json!(self.thread_id));
        if profile.call_meta_has_call_id() {
            meta.insert("callId".into(), json!(call_id));
        }
        if profile.call_meta_has_item_id() {
            // Codex's id for the model's function-call item, not the call id.
            meta.insert("itemId".into(), json!(format!("fc_{}", new_uuid())));
        }
        if profile.call_meta_has_session_id() {
            meta.insert("sessionId".into(), json!(self.thread_id));
            // The thread's context window; a fake turn never compacts, so
            // it stays the first.
            meta.insert("windowId".into(), json!(format!("{}:0", self.thread_id)));
        }
        meta.insert("x-codex-turn-metadata".into(), self.turn_metadata(profile));
        Value::Object(meta)
    }

    fn turn_metadata(&self, profile: &Profile) -> Value {
        let mut t = json!({
            "model": MODEL,
            "sandbox": sandbox(&self.sandbox_mode),
            "session_id": self.thread_id,
            "thread_id": self.thread_id,
            "turn_id": self.turn_id,
            "turn_started_at_unix_ms": self.started_at_ms,
        });
        if self.asked_user {
            // Sent only once true.
            t["user_input_requested_during_turn"] = json!(true);
        }
        if profile.turn_metadata_has_review_flags() {
            t["sandbox_mode"] = json!(self.sandbox_mode);
            t["auto_review_enabled"] = json!(false);
            t["node_repl_auto_review_required"] = json!(false);
            t["node_repl_disabled"] = json!(false);
        }
        if profile.turn_metadata_has_codex_version() {
            t["codex_version"] = json!(profile.version.to_string());
        }
        if self.exec {
            t["thread_source"] = json!("user");
            if profile.exec_turn_metadata_has_trigger() {
                t["turn_trigger"] = json!("exec");
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn keys_follow_the_measured_versions() {
        let mut meta = CallMeta::new("th", "tu", "read-only", 17);
        let at = |minor, patch| Profile { version: Version::new(0, minor, patch) };
        let old = meta.for_call(&at(147, 0), "call_0");
        assert_eq!(keys(&old), ["threadId", "x-codex-turn-metadata"]);
        let turn = &old["x-codex-turn-metadata"];
        assert_eq!(keys(turn), ["model", "sandbox", "session_id", "thread_id", "turn_id", "turn_started_at_unix_ms"]);
        assert_eq!(keys(&meta.for_call(&at(148, 0), "call_0")), ["callId", "threadId", "x-codex-turn-metadata"]);
        assert_eq!(keys(&meta.for_call(&at(153, 4), "call_0")), ["callId", "itemId", "threadId", "x-codex-turn-metadata"]);
        meta.asked_user();
        let new = meta.for_call(&at(171, 0), "call_2");
        assert_eq!(keys(&new), ["callId", "itemId", "sessionId", "threadId", "windowId", "x-codex-turn-metadata"]);
        assert_eq!((&new["callId"], &new["sessionId"], &new["windowId"]), (&json!("call_2"), &json!("th"), &json!("th:0")));
        assert!(new["itemId"].as_str().unwrap().starts_with("fc_"));
        let turn = &new["x-codex-turn-metadata"];
        assert_eq!((&turn["codex_version"], &turn["sandbox_mode"]), (&json!("0.171.0"), &json!("read-only")));
        assert_eq!((&turn["user_input_requested_during_turn"], &turn["turn_started_at_unix_ms"]), (&json!(true), &json!(17)));
        assert!(meta.for_call(&at(153, 4), "call_0")["x-codex-turn-metadata"].get("codex_version").is_none());
        assert!(new["x-codex-turn-metadata"].get("thread_source").is_none());
        let exec = meta.clone().in_exec();
        assert_eq!(exec.for_call(&at(146, 0), "call_0")["x-codex-turn-metadata"]["thread_source"], "user");
        assert!(exec.for_call(&at(153, 4), "call_0")["x-codex-turn-metadata"].get("turn_trigger").is_none());
        assert_eq!(exec.for_call(&at(171, 0), "call_0")["x-codex-turn-metadata"]["turn_trigger"], "exec");
        assert_eq!(turn["sandbox"], "seccomp");
        let open = CallMeta::new("th", "tu", "danger-full-access", 17).for_call(&at(146, 0), "call_0");
        assert_eq!(open["x-codex-turn-metadata"]["sandbox"], "none");
    }
}
