//! The canonical order of a conversation. A CLI sends some messages from
//! tasks of their own, so two runs of one trial interleave them differently;
//! each rule below moves such messages to a fixed place, or drops what only
//! a race decides, so that a recording is the same run after run and the
//! comparison sees facts, not timing.

use std::collections::BTreeMap;

use serde_json::Value;

use super::conversation::{message, method, renumber, Segment, C2S, S2C};

/// Where a floating notification is shown.
#[derive(Clone, Copy, PartialEq)]
enum Anchor {
    /// After the answer to `initialize`.
    Initialize,
    /// After the answer to the thread/start (resume, fork) of its thread.
    Thread,
    /// After the answer to the turn/start it followed.
    TurnStart,
}

/// Provider notifications sent at no fixed point relative to the messages
/// around them: (method, where they are shown, why).
const FLOATING: &[(&str, Anchor, &str)] = &[
    ("configWarning", Anchor::Initialize, "startup warnings race the driver's first requests"),
    ("remoteControl/status/changed", Anchor::Initialize, "sent at startup, racing the driver's first requests"),
    ("deprecationNotice", Anchor::Initialize, "sent while a thread is resumed, racing the answer; it names no thread, so it goes with the startup notices"),
    ("thread/started", Anchor::Thread, "sent after the thread/start answer, racing the driver's next request"),
    ("thread/goal/cleared", Anchor::Thread, "restored thread state on resume, racing the next turn"),
    ("mcpServer/startupStatus/updated", Anchor::Thread, "each MCP server's startup task reports on its own"),
    ("warning", Anchor::TurnStart, "the per-turn model warning races the turn/start answer"),
];

/// Neighbours that arrive in either order right after a message: (after,
/// first as recorded, second, why). They are shown second-first.
const SWAPPED: &[(&str, &str, &str, &str)] = &[(
    "serverRequest/resolved",
    "item/completed",
    "thread/status/changed",
    "after an approval resolves, the thread's status change races the item's completion",
)];

/// Claude Code's neighbours that arrive in either order: (first as
/// recorded, second, why), by [`claude_kind`]. They are shown second-first.
const CLAUDE_SWAPPED: &[(&str, &str, &str)] = &[(
    "system/session_state_changed",
    "mcp_message/notifications/initialized",
    "an SDK server's handshake goes on after the initialize answer, racing the host's first prompt (seen both ways on 2.1.332 and 2.1.334)",
)];

/// A Claude Code stream message as `type/subtype`, an `mcp_message` control
/// request as `mcp_message/<method>`.
fn claude_kind(entry: &Value) -> Option<String> {
    let (S2C, m) = message(entry)? else { return None };
    let request = m.get("request");
    match (m.get("type")?.as_str()?, request.and_then(|r| r.get("subtype")).and_then(Value::as_str)) {
        ("control_request", Some("mcp_message")) => Some(format!("mcp_message/{}", request?.pointer("/message/method")?.as_str()?)),
        ("system", _) => Some(format!("system/{}", m.get("subtype")?.as_str()?)),
        _ => None,
    }
}

/// Messages a driver waits for before sending its next one. A driver's
/// message is shown right after the last of these before it: what else
/// arrived in between raced it.
fn lets_driver_send(entry: &Value) -> bool {
    let Some((S2C, m)) = message(entry) else { return false };
    m.get("id").is_some() || m["method"] == "turn/completed"
}

/// A provider process the driver ended before any turn (to fingerprint or
/// relaunch) was stopped at an arbitrary point of its startup: only the
/// driver's requests and the answers are kept, and the trial's MCP sessions
/// that called no tool are left out, as are requests refused for their
/// bearer (which servers the process reached before it was stopped, and
/// whether with a secret a rotation had just replaced, is a race).
fn idle(seg: &Segment) -> bool {
    let driver: Vec<&str> = seg.iter().filter(|e| message(e).is_some_and(|(l, _)| l == C2S)).filter_map(method).collect();
    !driver.is_empty() && !driver.contains(&"turn/start")
}

/// The whole run: provider conversation and MCP conversations, each in its
/// canonical order.
pub fn canonical(mut provider: Vec<Segment>, mcp: BTreeMap<String, Vec<Segment>>) -> BTreeMap<String, Vec<Value>> {
    renumber(&mut provider);
    let any_idle = provider.iter().any(idle);
    let mut out = BTreeMap::new();
    out.insert("provider".to_string(), provider.into_iter().flat_map(provider_segment).collect());
    for (name, sessions) in mcp {
        let raced = |e: &Value| any_idle && e["event"] == "auth_rejected";
        let called = |s: &Segment| s.iter().any(|e| method(e) == Some("tools/call"));
        // An HTTP server is started once by the harness, before any client,
        // so its start tells nothing of the CLI; kept, it would follow the
        // session that connected first, a stopped process's or not.
        let harness_started = |e: &Value| e["event"] == "start" && e["transport"] == "http";
        let mut kept: Vec<Segment> = sessions
            .into_iter()
            .filter(|s| !any_idle || called(s))
            .map(|s| s.into_iter().filter(|e| !raced(e) && !harness_started(e)).collect())
            .collect();
        // Numbered after the drop, so the sessions a stopped process reached
        // do not shift the ids of the rest.
        renumber(&mut kept);
        let entries: Vec<Value> = kept.into_iter().flat_map(mcp_session).collect();
        // A stdio server a process never got to start leaves no file at all.
        if !entries.is_empty() {
            out.insert(format!("mcp/{name}"), entries);
        }
    }
    out
}

fn floating(entry: &Value) -> Option<(usize, Anchor)> {
    let (S2C, m) = message(entry)? else { return None };
    if m.get("id").is_some() {
        return None;
    }
    let name = m["method"].as_str()?;
    FLOATING.iter().position(|(f, ..)| *f == name).map(|i| (i, FLOATING[i].1))
}

fn thread_of(m: &Value) -> Value {
    m.pointer("/params/threadId").or_else(|| m.pointer("/params/thread/id")).cloned().unwrap_or(Value::Null)
}

/// Sorts floating notifications that share an anchor: by rule, then server
/// name and startup status (so `starting` precedes `ready`), then text.
fn float_key(entry: &Value, rule: usize) -> (usize, String, usize, String) {
    let m = message(entry).map(|(_, m)| m).unwrap_or(&Value::Null);
    let status = ["starting", "ready", "failed"].iter().position(|s| m.pointer("/params/status") == Some(&Value::from(*s))).unwrap_or(3);
    (rule, m.pointer("/params/name").and_then(Value::as_str).unwrap_or("").to_string(), status, m.to_string())
}

fn provider_segment(seg: Segment) -> Vec<Value> {
    let idle = idle(&seg);
    let requests: BTreeMap<String, &str> = seg
        .iter()
        .filter_map(|e| message(e).filter(|(l, _)| *l == C2S))
        .filter_map(|(_, m)| Some((m.get("id")?.to_string(), m.get("method")?.as_str()?)))
        .collect();
    let request_of = |entry: &Value| -> Option<&str> {
        let (S2C, m) = message(entry)? else { return None };
        if m.get("method").is_some() {
            return None;
        }
        requests.get(&m.get("id")?.to_string()).copied()
    };
    // The server's messages: fixed ones in order, floating ones by anchor.
    let mut fixed: Vec<usize> = Vec::new();
    let mut floats: Vec<(usize, usize, Anchor, Value)> = Vec::new();
    let mut last_turn_start = Value::Null;
    for (i, e) in seg.iter().enumerate() {
        match message(e) {
            Some((C2S, m)) if m["method"] == "turn/start" => last_turn_start = m["id"].clone(),
            Some((S2C, m)) if idle && m.get("id").is_none() => {}
            Some((S2C, m)) => match floating(e) {
                Some((rule, anchor)) => {
                    let key = if anchor == Anchor::TurnStart { last_turn_start.clone() } else { thread_of(m) };
                    floats.push((i, rule, anchor, key));
                }
                None => fixed.push(i),
            },
            _ => {}
        }
    }
    for k in 1..fixed.len() {
        let (a, b) = (claude_kind(&seg[fixed[k - 1]]), claude_kind(&seg[fixed[k]]));
        if CLAUDE_SWAPPED.iter().any(|(x, y, _)| a.as_deref() == Some(x) && b.as_deref() == Some(y)) {
            fixed.swap(k - 1, k);
        }
    }
    for k in 2..fixed.len() {
        let (before, a, b) = (method(&seg[fixed[k - 2]]), method(&seg[fixed[k - 1]]), method(&seg[fixed[k]]));
        if SWAPPED.iter().any(|(w, x, y, _)| before == Some(w) && a == Some(x) && b == Some(y)) {
            fixed.swap(k - 1, k);
        }
    }
    let mut server: Vec<usize> = Vec::new();
    let mut placed = vec![false; seg.len()];
    let mut threads_seen: Vec<Value> = Vec::new();
    for &i in &fixed {
        server.push(i);
        let e = &seg[i];
        let m = message(e).map(|(_, m)| m).unwrap_or(&Value::Null);
        let mut here: Vec<&(usize, usize, Anchor, Value)> = match request_of(e) {
            Some("initialize") => floats.iter().filter(|f| f.2 == Anchor::Initialize).collect(),
            Some("thread/start" | "thread/resume" | "thread/fork") => {
                let thread = m.pointer("/result/thread/id").cloned().unwrap_or(Value::Null);
                if threads_seen.contains(&thread) {
                    Vec::new()
                } else {
                    threads_seen.push(thread.clone());
                    floats.iter().filter(|f| f.2 == Anchor::Thread && f.3 == thread).collect()
                }
            }
            Some("turn/start") => floats.iter().filter(|f| f.2 == Anchor::TurnStart && f.3 == m["id"]).collect(),
            _ => Vec::new(),
        };
        here.retain(|f| !placed[f.0]);
        here.sort_by_key(|f| float_key(&seg[f.0], f.1));
        for f in here {
            placed[f.0] = true;
            server.push(f.0);
        }
    }
    let mut rest: Vec<&(usize, usize, Anchor, Value)> = floats.iter().filter(|f| !placed[f.0]).collect();
    rest.sort_by_key(|f| float_key(&seg[f.0], f.1));
    server.extend(rest.into_iter().map(|f| f.0));
    // The driver's messages, each after what let it send.
    let mut after: BTreeMap<Option<usize>, Vec<usize>> = BTreeMap::new();
    for (i, e) in seg.iter().enumerate() {
        let Some((C2S, m)) = message(e) else { continue };
        let anchor = if m.get("method").is_none() {
            server.iter().copied().find(|&s| message(&seg[s]).is_some_and(|(_, r)| r.get("method").is_some() && r.get("id") == m.get("id")))
        } else {
            fixed.iter().copied().filter(|&s| s < i && lets_driver_send(&seg[s])).max()
        };
        after.entry(anchor).or_default().push(i);
    }
    let mut order: Vec<usize> = seg.iter().enumerate().filter(|(_, e)| message(e).is_none()).map(|(i, _)| i).collect();
    order.extend(after.remove(&None).unwrap_or_default());
    for s in server {
        order.push(s);
        order.extend(after.remove(&Some(s)).unwrap_or_default());
    }
    order.extend(after.into_values().flatten());
    let mut seg: Vec<Option<Value>> = seg.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| seg[i].take()).collect()
}

/// HTTP requests besides POST, and what is done with them: (method, why).
/// GET opens the optional server-to-client stream, which the CLI does
/// alongside its first requests: shown after the session's
/// `notifications/initialized`. DELETE ends a session at exit, sent or not
/// depending on how fast the CLI is stopped: left out.
const HTTP_SIDE: &[(&str, &str)] = &[
    ("GET", "the optional SSE stream, opened alongside the first requests: shown after notifications/initialized"),
    ("DELETE", "ends the session at exit, sent only if the CLI gets to it before it is stopped: left out, refused or not"),
];

/// The HTTP method of a request that carried no message (a GET, a DELETE,
/// or one refused for its bearer).
fn http_method(entry: &Value) -> Option<&str> {
    if message(entry).is_some() {
        return None;
    }
    entry.get("http").unwrap_or(entry).get("method")?.as_str()
}

/// One MCP session: the client's side in order, each answer right after its
/// request (concurrent HTTP requests are answered in any order).
fn mcp_session(seg: Segment) -> Vec<Value> {
    let mut client: Vec<Value> = Vec::new();
    let mut answers: Vec<Value> = Vec::new();
    for e in seg {
        match (message(&e), http_method(&e)) {
            (Some((S2C, _)), _) => answers.push(e),
            (_, Some("DELETE")) => {}
            (_, Some("GET")) => {
                let at = client.iter().rposition(|c| method(c) == Some("notifications/initialized")).map_or(client.len(), |p| p + 1);
                client.insert(at, e);
            }
            _ => client.push(e),
        }
    }
    let mut out = Vec::new();
    for c in client {
        let id = message(&c).filter(|(_, m)| m.get("method").is_some()).and_then(|(_, m)| m.get("id")).cloned();
        out.push(c);
        if let Some(id) = id {
            if let Some(p) = answers.iter().position(|a| message(a).is_some_and(|(_, m)| m.get("id") == Some(&id))) {
                out.push(answers.remove(p));
            }
        }
    }
    out.extend(answers);
    out
}

/// The rules, for the recordings' README: one `what: why` line each.
pub fn describe() -> Vec<String> {
    let floats = FLOATING.iter().map(|(m, a, why)| {
        let at = match a {
            Anchor::Initialize => "after the initialize answer",
            Anchor::Thread => "after its thread's start/resume answer",
            Anchor::TurnStart => "after the turn/start answer",
        };
        format!("`{m}` shown {at}: {why}")
    });
    let swapped = SWAPPED.iter().map(|(w, a, b, why)| format!("after `{w}`, `{a}` then `{b}` shown as `{b}` then `{a}`: {why}"));
    let claude = CLAUDE_SWAPPED.iter().map(|(a, b, why)| format!("Claude Code `{a}` then `{b}` shown as `{b}` then `{a}`: {why}"));
    let http = HTTP_SIDE.iter().map(|(m, why)| format!("HTTP {m}: {why}"));
    let fixed = [
        "a driver's message is shown right after the answer, server request or turn/completed it followed: other messages raced it".to_string(),
        "a provider process ended before any turn keeps only requests and answers, and the trial's MCP sessions without a tool call and requests refused for their bearer are left out, before request ids are numbered: how far its startup got, and with which secret, is a race".to_string(),
        "an MCP answer is shown right after its request".to_string(),
        "an MCP conversation with nothing in it is left out: a stdio server never started leaves no recording".to_string(),
        "an MCP server's `eof` is not compared (compare.rs): whether a killed instance records its input's end first is a race; the next instance's `start` still says the last one ended".to_string(),
        "Codex's item/commandExecution/outputDelta is not compared (compare.rs): whether a short command's output is streamed before it ends is a race; the item's aggregatedOutput and what the model saw still carry it".to_string(),
    ];
    floats.chain(swapped).chain(claude).chain(http).chain(fixed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn c2s(m: Value) -> Value {
        json!({"c2s": m})
    }
    fn s2c(m: Value) -> Value {
        json!({"s2c": m})
    }

    #[test]
    fn claude_sdk_server_handshake_racing_the_first_prompt() {
        let state = s2c(json!({"type": "system", "subtype": "session_state_changed", "state": "running"}));
        let note = s2c(json!({"type": "control_request", "request": {"subtype": "mcp_message", "message": {"method": "notifications/initialized"}}}));
        let list = s2c(json!({"type": "control_request", "request": {"subtype": "mcp_message", "message": {"method": "tools/list"}}}));
        let a = provider_segment(vec![state.clone(), note.clone(), list.clone()]);
        assert_eq!(a, provider_segment(vec![note.clone(), state.clone(), list.clone()]));
        assert_eq!(a, [note, state.clone(), list.clone()]);
        // Only that pair: tools/list after the state change stays where it is.
        assert_eq!(provider_segment(vec![state.clone(), list.clone()]), [state, list]);
    }

    #[test]
    fn racing_notifications_and_driver_messages_take_fixed_places() {
        let run = |notes_first: bool| {
            let mut seg = vec![json!({"launch": []}), c2s(json!({"id": "<c0>", "method": "initialize"})), s2c(json!({"id": "<c0>", "result": {}}))];
            let notes = [s2c(json!({"method": "configWarning"})), s2c(json!({"method": "mcpServer/startupStatus/updated", "params": {"threadId": "T", "name": "f", "status": "ready"}}))];
            let start = [c2s(json!({"id": "<c1>", "method": "thread/start"})), s2c(json!({"id": "<c1>", "result": {"thread": {"id": "T"}}}))];
            if notes_first {
                seg.extend(notes.iter().cloned().chain(start.iter().cloned()));
            } else {
                seg.extend(start.iter().cloned().chain(notes.iter().rev().cloned()));
            }
            seg.push(c2s(json!({"id": "<c2>", "method": "turn/start"})));
            provider_segment(seg)
        };
        let a = run(true);
        assert_eq!(a, run(false));
        let methods: Vec<&str> = a.iter().map(|e| method(e).unwrap_or("-")).collect();
        assert_eq!(methods, ["-", "initialize", "-", "thread/start", "configWarning", "-", "turn/start", "mcpServer/startupStatus/updated"]);
    }

    #[test]
    fn what_a_stopped_process_reached_shifts_no_id() {
        let process = |turn: bool| {
            let mut seg = vec![json!({"launch": []}), c2s(json!({"id": 0, "method": "initialize"})), s2c(json!({"id": 0, "result": {}}))];
            if turn {
                seg.push(c2s(json!({"id": 1, "method": "turn/start"})));
            }
            seg
        };
        let session = |call: bool| {
            let mut seg = vec![c2s(json!({"id": 0, "method": "initialize"})), s2c(json!({"id": 0, "result": {}}))];
            if call {
                seg.extend([c2s(json!({"id": 1, "method": "tools/call"})), s2c(json!({"id": 1, "result": {}}))]);
            }
            seg.push(json!({"event": "auth_rejected", "had_header": true}));
            seg
        };
        let run = |reached: bool| {
            let sessions = if reached { vec![session(false), session(true)] } else { vec![session(true)] };
            canonical(vec![process(false), process(true)], BTreeMap::from([("s".to_string(), sessions)]))
        };
        let out = run(true);
        assert_eq!(out, run(false));
        let ids: Vec<&Value> = out["mcp/s"].iter().map(|e| &message(e).unwrap().1["id"]).collect();
        assert_eq!(ids, ["<c0>", "<c0>", "<c1>", "<c1>"]);
        // Without a stopped process, every session and refusal is kept.
        let all = canonical(vec![process(true)], BTreeMap::from([("s".to_string(), vec![session(false), session(true)])]));
        assert_eq!(all["mcp/s"].len(), 8);
        assert_eq!(all["mcp/s"][3]["c2s"]["id"], "<c1>");
    }

    #[test]
    fn an_http_server_start_is_the_harness_s_not_a_process_s() {
        let start = json!({"event": "start", "transport": "http"});
        let process = |turn: bool| {
            let mut seg = vec![json!({"launch": []}), c2s(json!({"id": 0, "method": "initialize"}))];
            if turn {
                seg.push(c2s(json!({"id": 1, "method": "turn/start"})));
            }
            seg
        };
        let session = |call: bool| {
            let mut seg = vec![c2s(json!({"id": 0, "method": "initialize"}))];
            if call {
                seg.push(c2s(json!({"id": 1, "method": "tools/call"})));
            }
            seg
        };
        let run = |sessions: Vec<Segment>| canonical(vec![process(false), process(true)], BTreeMap::from([("s".to_string(), sessions)]));
        let stopped_one_connected = run(vec![[vec![start.clone()], session(false)].concat(), session(true)]);
        let only_the_second = run(vec![[vec![start.clone()], session(true)].concat()]);
        assert_eq!(stopped_one_connected, only_the_second);
        assert!(!only_the_second["mcp/s"].contains(&start));
        // A stdio server's start belongs to the process that spawned it.
        let stdio = json!({"event": "start", "transport": "stdio"});
        let out = run(vec![[vec![stdio.clone()], session(false)].concat(), [vec![stdio.clone()], session(true)].concat()]);
        assert_eq!(out["mcp/s"].iter().filter(|e| **e == stdio).count(), 1);
    }

    #[test]
    fn mcp_answers_follow_requests_and_side_requests_settle() {
        let get = json!({"http": {"method": "GET", "path": "/mcp", "status": 405, "bearer": false}});
        let seg = vec![
            c2s(json!({"id": "<c0>", "method": "initialize"})),
            s2c(json!({"id": "<c0>", "result": {}})),
            c2s(json!({"method": "notifications/initialized"})),
            c2s(json!({"id": "<c1>", "method": "tools/list"})),
            get.clone(),
            s2c(json!({"id": "<c1>", "result": {}})),
            json!({"http": {"method": "DELETE", "path": "/mcp", "status": 200, "bearer": false}}),
            json!({"event": "auth_rejected", "had_header": true, "method": "DELETE", "path": "/mcp"}),
        ];
        let out = mcp_session(seg);
        assert_eq!(out.len(), 6);
        assert_eq!(out[3], get);
        assert_eq!(method(&out[4]), Some("tools/list"));
        assert_eq!(out[5]["s2c"]["id"], "<c1>");
    }
}
