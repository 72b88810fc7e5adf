//! The two kinds of conversation in a run directory, read into entries:
//! driver <-> CLI from the provider transcript (one segment per provider
//! process) and CLI <-> each MCP server from its recording (one segment per
//! server process or session). [`renumber`] names request ids per segment,
//! so a request and its answer keep matching after a relaunch restarts the
//! numbering; `order` calls it once it has left out the segments that only
//! a race put in the recording.
//!
//! Entries: `{"launch": argv}`, `{"c2s": msg}` (client to server: driver to
//! CLI, CLI to MCP server), `{"s2c": msg}`, `{"c2s": msg, "http": {method,
//! path, bearer}}` for a POST, `{"http": {..., "status"}}` for other HTTP
//! requests, `{"event": "start" | "eof" | "auth_rejected" ...}` for what an
//! MCP server saw of its transport.

use std::collections::HashMap;
use std::path::Path;

use fakes::wire::read_jsonl;
use serde_json::{json, Map, Value};

use crate::trial::CODEX_WRAPPER_KEYS;

/// One provider process or MCP session, in recorded order.
pub type Segment = Vec<Value>;


/// MCP server records that restate a message already in the conversation.
const SERVER_NOTES: &[&str] = &["tools/call", "unknown_tool", "blocked", "token_file_error"];

pub const C2S: &str = "c2s";
pub const S2C: &str = "s2c";

/// The JSON-RPC (or stream-json) message of an entry and its direction.
pub fn message(entry: &Value) -> Option<(&'static str, &Value)> {
    [C2S, S2C].into_iter().find_map(|lane| entry.get(lane).map(|m| (lane, m)))
}

pub fn method(entry: &Value) -> Option<&str> {
    message(entry).and_then(|(_, m)| m.get("method")).and_then(Value::as_str)
}

/// The provider transcript: one segment per provider process. A record's
/// process is its `pid` field when the recorder stamped one, else that of
/// the latest launch record (processes of one trial run one after another).
pub fn provider(transcript: &[Value]) -> Vec<Segment> {
    let mut segments: Vec<(Value, Segment)> = Vec::new();
    let mut current = Value::Null;
    for r in transcript {
        if r["event"] == "launch" {
            current = r["pid"].clone();
            segments.push((current.clone(), vec![json!({"launch": driver_argv(&r["argv"])})]));
            continue;
        }
        // The relay's proxy records the driver's own bridge server (for the
        // judge): the driver's, not the CLI's, so not compared.
        if r["event"] == "proxied" {
            continue;
        }
        let lane = match r["dir"].as_str() {
            // The fake Claude Code records its SDK host's stdin lines as `in`.
            Some("c2s") | Some("in") => C2S,
            // The fake Claude Code writes its stdout as `out`.
            Some("s2c") | Some("out") => S2C,
            _ => continue,
        };
        let msg = r.get("msg").cloned().or_else(|| r.get("text").map(|t| json!({"_text": t}))).unwrap_or(Value::Null);
        let process = r.get("pid").cloned().unwrap_or_else(|| current.clone());
        let at = match segments.iter().rposition(|(p, _)| *p == process) {
            Some(i) => i,
            None => {
                segments.push((process, Vec::new()));
                segments.len() - 1
            }
        };
        segments[at].1.push(json!({lane: msg}));
    }
    segments.into_iter().map(|(_, s)| s).collect()
}

/// The driver's arguments; one holding a JSON object (Claude Code's
/// `--mcp-config`) is shown as that object, so it is compared field by field.
fn driver_argv(argv: &Value) -> Value {
    let args: Vec<&Value> = argv.as_array().map(|a| a.iter().collect()).unwrap_or_default();
    // The wrapper's pairs (the driver never sees them) come first, or right
    // after `exec` (whose own `-c` would drop root-level ones).
    let wrapper_key = |o: &str| o.split_once('=').is_some_and(|(key, _)| CODEX_WRAPPER_KEYS.contains(&key));
    let ours = |i: usize| args[i] == "-c" && args.get(i + 1).and_then(|a| a.as_str()).is_some_and(wrapper_key);
    let mut kept = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if ours(i) && kept.iter().all(|a: &&Value| *a == "exec") {
            i += 2;
        } else {
            kept.push(args[i]);
            i += 1;
        }
    }
    let parsed = |a: &Value| a.as_str().filter(|s| s.starts_with('{')).and_then(|s| serde_json::from_str::<Value>(s).ok()).filter(Value::is_object);
    Value::Array(kept.iter().map(|a| parsed(a).unwrap_or_else(|| (*a).clone())).collect())
}

/// An MCP server's recording: a new segment at each server start and each
/// `initialize` (a new session on a server that outlives a client). A record
/// naming its process (a stdio server's `pid`) goes to that process's latest
/// segment: a provider relaunched by its driver starts the next instance
/// while the last one may still be recording its EOF.
pub fn mcp(path: &Path) -> Vec<Segment> {
    let mut segments: Vec<(Value, Segment)> = Vec::new();
    for r in read_jsonl(path).unwrap_or_default() {
        let process = r.get("pid").cloned().unwrap_or(Value::Null);
        let own = |segments: &Vec<(Value, Segment)>| segments.iter().rposition(|(p, _)| *p == process);
        let entry = match (r["event"].as_str(), r["dir"].as_str()) {
            (Some("start"), _) => {
                segments.push((process.clone(), Vec::new()));
                json!({"event": "start", "transport": r["transport"]})
            }
            (Some("http"), _) => json!({"http": without(&r, &["event", "pid"])}),
            (Some(e), _) if SERVER_NOTES.contains(&e) => continue,
            (Some(_), _) => without(&r, &["pid"]),
            (None, Some("in")) => {
                let mut e = json!({C2S: r["msg"]});
                if let Some(http) = r.get("http") {
                    e["http"] = http.clone();
                }
                let session_open = own(&segments).is_some_and(|i| segments[i].1.iter().any(|e| message(e).is_some()));
                if (r["msg"]["method"] == "initialize" && session_open) || own(&segments).is_none() {
                    segments.push((process.clone(), Vec::new()));
                }
                e
            }
            (None, Some("out")) => json!({S2C: r["msg"]}),
            _ => continue,
        };
        let at = match own(&segments) {
            Some(i) => i,
            None => {
                segments.push((process, Vec::new()));
                segments.len() - 1
            }
        };
        segments[at].1.push(entry);
    }
    segments.into_iter().map(|(_, s)| s).collect()
}

fn without(v: &Value, keys: &[&str]) -> Value {
    let map: Map<String, Value> = v.as_object().into_iter().flatten().filter(|(k, _)| !keys.contains(&k.as_str())).map(|(k, x)| (k.clone(), x.clone())).collect();
    Value::Object(map)
}

/// Request ids become `<cN>` (sent by the client) or `<sN>` (by the
/// server), numbered through the conversation, so answers still name their
/// request while the raw numbering (which starts anew in each process and
/// differs between CLIs) does not count.
pub fn renumber(segments: &mut [Segment]) {
    let mut ids: HashMap<(usize, &'static str, String), String> = HashMap::new();
    let mut next: HashMap<&'static str, usize> = HashMap::new();
    let mut name = |seg: usize, origin: &'static str, raw: &Value| -> Value {
        if raw.is_null() {
            return Value::Null;
        }
        let key = (seg, origin, raw.to_string());
        let id = ids.entry(key).or_insert_with(|| {
            let n = next.entry(origin).or_insert(0);
            *n += 1;
            format!("<{}{}>", &origin[..1], *n - 1)
        });
        json!(id)
    };
    for (i, seg) in segments.iter_mut().enumerate() {
        for entry in seg.iter_mut() {
            let Some(lane) = [C2S, S2C].into_iter().find(|l| entry.get(*l).is_some()) else { continue };
            let other = if lane == C2S { S2C } else { C2S };
            let msg = &mut entry[lane];
            let is_request = msg.get("method").is_some();
            if let Some(raw) = msg.get("id").cloned() {
                msg["id"] = name(i, if is_request { lane } else { other }, &raw);
            }
            // Notifications that name a request: the server's own requests
            // (Codex) or the sender's (MCP cancellation).
            let refers = match msg["method"].as_str() {
                Some("serverRequest/resolved") => Some(S2C),
                Some("notifications/cancelled") => Some(lane),
                _ => None,
            };
            if let (Some(origin), Some(raw)) = (refers, msg.pointer("/params/requestId").cloned()) {
                msg["params"]["requestId"] = name(i, origin, &raw);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(lines: &[Value]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, lines.iter().map(|l| l.to_string() + "\n").collect::<String>()).unwrap();
        (dir, path)
    }

    #[test]
    fn processes_are_segments_and_ids_are_renumbered_per_process() {
        let (_d, path) = write(&[
            json!({"event": "launch", "pid": 7, "argv": ["-c", "model=\"mock-model\"", "app-server", "{\"a\":1}"]}),
            json!({"dir": "c2s", "msg": {"id": 1, "method": "initialize"}}),
            json!({"dir": "s2c", "msg": {"id": 0, "method": "mcpServer/elicitation/request"}}),
            json!({"dir": "c2s", "msg": {"id": 0, "result": {}}}),
            json!({"dir": "s2c", "msg": {"method": "serverRequest/resolved", "params": {"requestId": 0}}}),
            json!({"event": "outcome", "step": 0}),
            json!({"event": "launch", "pid": 8, "argv": ["app-server"]}),
            json!({"dir": "s2c", "msg": {"id": 0, "method": "mcpServer/elicitation/request"}}),
            json!({"dir": "out", "text": "not json"}),
        ]);
        let mut segs = provider(&read_jsonl(&path).unwrap());
        renumber(&mut segs);
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0][0], json!({"launch": ["app-server", {"a": 1}]}));
        assert_eq!(segs[0][1]["c2s"]["id"], "<c0>");
        assert_eq!(segs[0][2]["s2c"]["id"], "<s0>");
        assert_eq!(segs[0][3]["c2s"]["id"], "<s0>");
        assert_eq!(segs[0][4]["s2c"]["params"]["requestId"], "<s0>");
        assert_eq!(segs[1][1]["s2c"]["id"], "<s1>");
        assert_eq!(segs[1][2], json!({"s2c": {"_text": "not json"}}));
    }

    #[test]
    fn mcp_sessions_http_facts_and_server_notes() {
        let (_d, path) = write(&[
            json!({"event": "start", "transport": "http", "server": "t"}),
            json!({"dir": "in", "msg": {"id": 0, "method": "initialize"}, "http": {"method": "POST", "path": "/mcp", "bearer": true}}),
            json!({"dir": "out", "msg": {"id": 0, "result": {}}}),
            json!({"event": "http", "method": "GET", "path": "/mcp", "status": 405, "bearer": true}),
            json!({"event": "tools/call", "tool": "x"}),
            json!({"event": "auth_rejected", "had_header": false}),
            json!({"dir": "in", "msg": {"id": 0, "method": "initialize"}}),
        ]);
        let mut segs = mcp(&path);
        renumber(&mut segs);
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0][1]["http"]["bearer"], true);
        assert_eq!(segs[0][3], json!({"http": {"method": "GET", "path": "/mcp", "status": 405, "bearer": true}}));
        assert_eq!(segs[0][4], json!({"event": "auth_rejected", "had_header": false}));
        assert_eq!(segs[1][0]["c2s"]["id"], "<c1>");
    }

    #[test]
    fn a_stdio_server_eof_recorded_after_the_next_instance_started_stays_with_its_own() {
        let (_d, path) = write(&[
            json!({"event": "start", "transport": "stdio", "pid": 1}),
            json!({"dir": "in", "msg": {"id": 0, "method": "initialize"}, "pid": 1}),
            json!({"event": "start", "transport": "stdio", "pid": 2}),
            json!({"dir": "in", "msg": {"id": 0, "method": "initialize"}, "pid": 2}),
            json!({"event": "eof", "pid": 1}),
            json!({"dir": "out", "msg": {"id": 0, "result": {}}, "pid": 2}),
        ]);
        let segs = mcp(&path);
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].last(), Some(&json!({"event": "eof"})));
        assert_eq!(segs[1].len(), 3);
        assert_eq!(segs[1][2]["s2c"]["id"], 0);
    }
}
