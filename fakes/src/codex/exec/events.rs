//! The JSONL events `codex exec --json` prints, as measured on 0.146.0,
//! 0.147.0, 0.148.0, 0.163.0 and 0.171.0 (the same shapes in all), each
//! also recorded to the run's transcript as an `s2c` message.

use std::io::Write;

use serde_json::{json, Value};

use crate::wire::Recorder;

/// Writes events to stdout and the transcript, numbering items per process
/// (`item_0`, `item_1`, ...; a resumed run starts again at `item_0`).
pub struct Events<'a> {
    rec: &'a Recorder,
    next_item: usize,
}

impl<'a> Events<'a> {
    pub fn new(rec: &'a Recorder) -> Events<'a> {
        Events { rec, next_item: 0 }
    }

    pub fn emit(&mut self, event: Value) {
        self.rec.record(&json!({"dir": "s2c", "msg": event}));
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{event}");
        let _ = out.flush();
    }

    pub fn next_id(&mut self) -> String {
        self.next_item += 1;
        format!("item_{}", self.next_item - 1)
    }

    pub fn thread_started(&mut self, thread_id: &str) {
        self.emit(json!({"type": "thread.started", "thread_id": thread_id}));
    }

    pub fn turn_started(&mut self) {
        self.emit(json!({"type": "turn.started"}));
    }

    /// An `error` item: exec reports warnings (such as a model without
    /// metadata) this way, before `turn.started`.
    pub fn error_item(&mut self, message: &str) {
        let id = self.next_id();
        self.emit(json!({"type": "item.completed", "item": {"id": id, "type": "error", "message": message}}));
    }

    pub fn agent_message(&mut self, text: &str) {
        let id = self.next_id();
        self.emit(json!({"type": "item.completed", "item": {"id": id, "type": "agent_message", "text": text}}));
    }

    /// The mock model reports no usage, so every count is 0 (measured).
    pub fn turn_completed(&mut self) {
        let usage = json!({"input_tokens": 0, "cached_input_tokens": 0, "cache_write_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0});
        self.emit(json!({"type": "turn.completed", "usage": usage}));
    }
}

/// An `mcp_tool_call` item; `status` is in_progress, completed or failed.
pub fn tool_item(id: &str, server: &str, tool: &str, arguments: &Value, result: Value, error: Value, status: &str) -> Value {
    json!({"id": id, "type": "mcp_tool_call", "server": server, "tool": tool, "arguments": arguments,
           "result": result, "error": error, "status": status})
}

/// A server's tools/call result as the item carries it.
pub fn item_result(r: &Value) -> Value {
    json!({"content": r.get("content").cloned().unwrap_or(json!([])), "structured_content": r.get("structuredContent").cloned().unwrap_or(Value::Null)})
}
