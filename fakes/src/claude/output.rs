//! What a process prints on stdout, in its output format.

use std::io::Write;

use serde_json::{json, Value};

use super::uuid::new_uuid;
use crate::wire::Recorder;

/// stdout in the chosen format, every printed thing recorded.
pub struct Output {
    rec: Recorder,
    pub format: String,
    stdout: std::io::Stdout,
}

impl Output {
    pub fn new(rec: Recorder, format: String) -> Output {
        Output { rec, format, stdout: std::io::stdout() }
    }

    /// One stream-json event; other formats print only the result.
    pub fn event(&mut self, msg: Value) {
        if self.format == "stream-json" {
            self.line(&msg);
        }
    }

    pub fn result(&mut self, msg: Value) {
        match self.format.as_str() {
            "stream-json" | "json" => self.line(&msg),
            _ => self.text(msg.get("result").and_then(Value::as_str).unwrap_or("")),
        }
    }

    pub(super) fn line(&mut self, msg: &Value) {
        self.rec.record(&json!({"dir": "out", "msg": msg}));
        let mut lock = self.stdout.lock();
        let _ = writeln!(lock, "{msg}");
        let _ = lock.flush();
    }

    pub fn text(&mut self, text: &str) {
        self.rec.record(&json!({"dir": "out", "text": text}));
        let mut lock = self.stdout.lock();
        let _ = writeln!(lock, "{text}");
        let _ = lock.flush();
    }

    /// The result a failed resume prints besides its stderr line.
    pub fn error_result(&mut self, session_id: &str, message: &str, usage: Value) {
        if self.format == "text" {
            return;
        }
        self.line(&json!({
            "type": "result", "subtype": "error_during_execution", "duration_ms": 0, "duration_api_ms": 0,
            "is_error": true, "num_turns": 0, "stop_reason": null, "session_id": session_id, "total_cost_usd": 0,
            "usage": usage, "permission_denials": [], "errors": [message], "uuid": new_uuid(),
        }));
    }
}
