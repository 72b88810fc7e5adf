//! A thread's rollout file, as real Codex keeps one under
//! CODEX_HOME/sessions: written from the thread's first turn on, found by
//! thread id on thread/resume, and read back as the resumed thread's history.
//! The lines follow the real file's kinds and order closely enough that
//! their ordinals, which the resume cursors name, come out as the real ones.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::codex::profile::Profile;

pub struct Rollout {
    pub path: PathBuf,
}

/// What thread/resume reports of a thread's past turns.
pub struct History {
    /// The first user message's text.
    pub preview: String,
    /// Completed turns with all their items.
    pub turns: Vec<Value>,
    /// 0-based line of the last turn start and of the last completed item.
    pub turns_ordinal: Option<usize>,
    pub items_ordinal: Option<usize>,
}

impl History {
    pub fn last_turn_id(&self) -> Option<&str> {
        self.turns.last().and_then(|t| t["id"].as_str())
    }
}

impl Rollout {
    /// The rollout a thread created now will write:
    /// `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl`.
    pub fn for_new_thread(home: &Path, thread_id: &str) -> Rollout {
        let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let (y, mo, d) = civil_date(secs / 86_400);
        let (h, mi, s) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
        let dir = home.join(format!("sessions/{y:04}/{mo:02}/{d:02}"));
        Rollout { path: dir.join(format!("rollout-{y:04}-{mo:02}-{d:02}T{h:02}-{mi:02}-{s:02}-{thread_id}.jsonl")) }
    }

    /// The rollout of `thread_id` under `home`, if one was written.
    pub fn find(home: &Path, thread_id: &str) -> Option<Rollout> {
        let suffix = format!("-{thread_id}.jsonl");
        let mut dirs = vec![home.join("sessions")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix)) {
                    return Some(Rollout { path });
                }
            }
        }
        None
    }

    pub fn exists(&self) -> bool {
        self.path.is_file()
    }

    pub fn path_text(&self) -> String {
        self.path.display().to_string()
    }

    /// Appends one line; a rollout that cannot be written only loses history.
    pub fn write(&self, kind: &str, payload: Value) {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(&self.path) {
            let _ = writeln!(f, "{}", json!({"type": kind, "payload": payload}));
        }
    }

    /// An event line (`event_msg` of `event`).
    pub fn event(&self, event: &str, mut payload: Value) {
        payload["type"] = json!(event);
        self.write("event_msg", payload);
    }

    /// The turn's items as a resumed thread reports them. Before paginated
    /// history (legacy), messages are renumbered `item-N` across the thread.
    pub fn history(&self, profile: &Profile) -> History {
        let text = std::fs::read_to_string(&self.path).unwrap_or_default();
        let mut h = History { preview: String::new(), turns: Vec::new(), turns_ordinal: None, items_ordinal: None };
        let mut legacy_n = 0;
        for (ordinal, line) in text.lines().enumerate() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            let p = &v["payload"];
            match (v["type"].as_str(), p["type"].as_str()) {
                (Some("event_msg"), Some("task_started")) => {
                    h.turns_ordinal = Some(ordinal);
                    h.turns.push(p["turn"].clone());
                }
                (Some("event_msg"), Some("item_completed")) => {
                    h.items_ordinal = Some(ordinal);
                    let mut item = p["item"].clone();
                    // Commands (the rollout keeps those that ran) are history
                    // only when it is paginated (recordings/codex/<V>/
                    // requests-go-to-host-after-resume.json).
                    if item["type"] == "commandExecution" && !profile.thread_history_paginated() {
                        continue;
                    }
                    if h.preview.is_empty() && item["type"] == "userMessage" {
                        h.preview = item.pointer("/content/0/text").and_then(Value::as_str).unwrap_or("").to_string();
                    }
                    // Legacy history numbers its messages; tool items keep their call ids.
                    if !profile.thread_history_paginated() && matches!(item["type"].as_str(), Some("userMessage" | "agentMessage")) {
                        legacy_n += 1;
                        item["id"] = json!(format!("item-{legacy_n}"));
                    }
                    if let Some(items) = h.turns.last_mut().and_then(|t| t["items"].as_array_mut()) {
                        items.push(item);
                    }
                }
                // An interrupted turn is history too, with the items it got to
                // (recordings/codex/0.146.1/gen-21-21-min.json).
                (Some("event_msg"), Some("task_complete" | "turn_aborted")) => {
                    if let Some(t) = h.turns.last_mut() {
                        let items = t["items"].take();
                        *t = p["turn"].clone();
                        t["items"] = items;
                    }
                }
                _ => {}
            }
        }
        for t in &mut h.turns {
            t["itemsView"] = json!("full");
        }
        h
    }
}

/// A paging cursor of thread/resume, as the real one spells it (field order
/// included): the rollout line it starts from and what it pages.
pub fn cursor(thread_id: &str, ordinal: Option<usize>, scope: &str) -> Value {
    match ordinal {
        Some(n) => json!(format!(
            "{{\"requestedThreadId\":\"{thread_id}\",\"rolloutOrdinal\":{n},\"includeAnchor\":true,\"scope\":{{\"kind\":\"{scope}\"}}}}"
        )),
        None => Value::Null,
    }
}

/// (year, month, day) of a day count since 1970-01-01 (proleptic Gregorian).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + u64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(19_782), (2024, 2, 29));
        assert_eq!(civil_date(20_790), (2026, 12, 3));
    }

    #[test]
    fn history_reads_turns_items_and_ordinals() {
        let dir = std::env::temp_dir().join(format!("fake-rollout-{}", std::process::id()));
        let r = Rollout::for_new_thread(&dir, "t-1");
        r.write("session_meta", json!({"id": "t-1"}));
        r.event("task_started", json!({"turn": {"id": "turn-0", "items": []}}));
        r.event("item_completed", json!({"item": {"type": "userMessage", "id": "u", "content": [{"type": "text", "text": "hi"}]}}));
        r.event("item_completed", json!({"item": {"type": "mcpToolCall", "id": "call_0"}}));
        r.event("item_completed", json!({"item": {"type": "agentMessage", "id": "m"}}));
        r.event("task_complete", json!({"turn": {"id": "turn-0", "status": "completed"}}));
        r.event("task_started", json!({"turn": {"id": "turn-1", "items": []}}));
        r.event("item_completed", json!({"item": {"type": "mcpToolCall", "id": "call_1"}}));
        r.event("turn_aborted", json!({"turn": {"id": "turn-1", "status": "interrupted", "itemsView": "notLoaded"}}));
        let found = Rollout::find(&dir, "t-1").expect("found by thread id");
        assert!(Rollout::find(&dir, "t-2").is_none());
        let legacy = found.history(&Profile { version: Version::new(0, 146, 0) });
        let ids: Vec<&Value> = legacy.turns[0]["items"].as_array().unwrap().iter().map(|i| &i["id"]).collect();
        assert_eq!(ids, [&json!("item-1"), &json!("call_0"), &json!("item-2")]);
        let paged = found.history(&Profile { version: Version::new(0, 153, 4) });
        assert_eq!((paged.turns_ordinal, paged.items_ordinal), (Some(6), Some(7)));
        assert_eq!((paged.preview.as_str(), paged.last_turn_id()), ("hi", Some("turn-1")));
        assert_eq!(paged.turns[0]["items"][2]["id"], "m");
        assert_eq!(paged.turns[0]["itemsView"], "full");
        assert_eq!(paged.turns[0]["status"], "completed");
        assert_eq!((&paged.turns[1]["status"], &paged.turns[1]["itemsView"]), (&json!("interrupted"), &json!("full")));
        assert_eq!(paged.turns[1]["items"][0]["id"], "call_1");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
