//! The app-server's JSON-RPC channel to its client on stdio: every message in
//! and out recorded, and server requests that wait for the client's reply.

use std::collections::VecDeque;
use std::io::{self, BufReader};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::shapes::now_ms;
use crate::codex::profile;
use crate::wire::{self, Line, Recorder};

/// How long the fake waits for the client to answer one of its requests. The
/// real CLI waits forever; a bound keeps an abandoned fake from lingering.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Channel {
    rec: Recorder,
    out: io::Stdout,
    inbox: Receiver<Line>,
    /// Client messages read while waiting for a reply, handled afterwards.
    deferred: VecDeque<Value>,
    next_request_id: i64,
    closed: bool,
}

/// The client's reply to one server request.
pub struct Reply {
    pub result: Option<Value>,
    pub error: Option<Value>,
}

/// A reply as an outcome record keeps it: its result and error, or null
/// when none came.
pub fn recorded(reply: &Option<Reply>) -> Value {
    reply.as_ref().map_or(Value::Null, |r| json!({"result": r.result, "error": r.error}))
}

impl Channel {
    /// Reads stdin on a thread of its own; writes stdout.
    pub fn stdio(rec: Recorder) -> Channel {
        let (tx, inbox) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stdin = BufReader::new(io::stdin());
            loop {
                let line = wire::read_line(&mut stdin, wire::MAX_LINE).unwrap_or(Line::Eof);
                let eof = line == Line::Eof;
                if tx.send(line).is_err() || eof {
                    break;
                }
            }
        });
        Channel { rec, out: io::stdout(), inbox, deferred: VecDeque::new(), next_request_id: 0, closed: false }
    }

    /// The client closed stdin, or stdout failed.
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// The id the next server request will carry.
    pub fn next_request_id(&self) -> i64 {
        self.next_request_id
    }

    /// Next client message, deferred ones first. None at EOF or deadline.
    pub fn next_message(&mut self, deadline: Option<Instant>) -> Option<Value> {
        if let Some(m) = self.deferred.pop_front() {
            return Some(m);
        }
        loop {
            if self.closed {
                return None;
            }
            let line = match deadline {
                None => self.inbox.recv().unwrap_or(Line::Eof),
                Some(d) => match self.inbox.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(l) => l,
                    Err(RecvTimeoutError::Timeout) => return None,
                    Err(RecvTimeoutError::Disconnected) => Line::Eof,
                },
            };
            match line {
                Line::Json(v) => {
                    self.rec.record(&json!({"dir": "c2s", "msg": v}));
                    return Some(v);
                }
                Line::Garbage { text, error } => {
                    self.rec.record(&json!({"event": "bad_client_line", "text": text, "error": error}));
                    self.send(json!({"id": null, "error": {"code": -32700, "message": profile::parse_error(&error)}}));
                }
                Line::TooLong { len } => {
                    self.rec.record(&json!({"event": "bad_client_line", "error": format!("line of {len} bytes")}));
                }
                Line::Eof => {
                    self.closed = true;
                    return None;
                }
            }
        }
    }

    pub fn send(&mut self, msg: Value) {
        self.send_marked(msg, false);
    }

    /// `raw`: a request written by the scenario (`raw_request`), marked in the
    /// transcript so the harness does not hold it to the real schema.
    fn send_marked(&mut self, msg: Value, raw: bool) {
        let mut line = json!({"dir": "s2c", "msg": msg});
        if raw {
            line["raw"] = json!(true);
        }
        self.rec.record(&line);
        if wire::write_message(&mut self.out, &line["msg"]).is_err() {
            self.closed = true;
        }
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"method": method, "params": params, "emittedAtMs": now_ms()}));
    }

    pub fn respond(&mut self, id: &Value, result: Result<Value, (i64, String)>) {
        match result {
            Ok(r) => self.send(json!({"id": id, "result": r})),
            Err((code, message)) => self.send(json!({"id": id, "error": {"code": code, "message": message}})),
        }
    }

    /// Sends a server request of thread `thread_id` and waits for its reply,
    /// deferring any other client message until after. None when the client
    /// never answers.
    pub fn ask(&mut self, thread_id: &str, method: &str, params: Value) -> Option<Reply> {
        self.ask_marked(thread_id, method, params, false)
    }

    /// [`Channel::ask`]; `raw` as in [`Channel::send_marked`].
    pub fn ask_marked(&mut self, thread_id: &str, method: &str, params: Value, raw: bool) -> Option<Reply> {
        let id = self.next_request_id;
        self.next_request_id += 1;
        self.send_marked(json!({"method": method, "id": id, "params": params}), raw);
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        let mut held = Vec::new();
        let reply = loop {
            let Some(msg) = self.next_message(Some(deadline)) else { break None };
            let is_reply = msg.get("method").is_none() && msg.get("id") == Some(&json!(id));
            if is_reply {
                break Some(Reply { result: msg.get("result").cloned(), error: msg.get("error").cloned() });
            }
            held.push(msg);
        };
        self.deferred.extend(held);
        if reply.is_some() {
            self.notify("serverRequest/resolved", json!({"threadId": thread_id, "requestId": id}));
        }
        reply
    }
}

/// Sorts a client reply: no reply, a JSON-RPC error, a result `judge` can
/// read, or something else (malformed).
fn classify(reply: &Option<Reply>, judge: impl Fn(&Value) -> Option<&'static str>) -> &'static str {
    match reply {
        None => "none",
        Some(Reply { error: Some(_), .. }) => "error",
        Some(Reply { result: Some(r), .. }) => judge(r).unwrap_or("malformed"),
        Some(_) => "malformed",
    }
}

pub fn classify_elicitation(reply: &Option<Reply>) -> &'static str {
    classify(reply, elicitation_answer)
}

/// The answer an elicitation's result gives, None when it is none of the
/// actions Codex knows.
pub fn elicitation_answer(result: &Value) -> Option<&'static str> {
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => Some("accept"),
        Some("decline") => Some("decline"),
        Some("cancel") => Some("cancel"),
        _ => None,
    }
}

pub fn classify_decision(reply: &Option<Reply>) -> &'static str {
    classify(reply, decision_answer)
}

/// The answer a command or file-change approval's result gives, None when
/// it is none of the decisions Codex knows.
pub fn decision_answer(result: &Value) -> Option<&'static str> {
    match result.get("decision") {
        Some(Value::String(s)) => match s.as_str() {
            "accept" => Some("accept"),
            "acceptForSession" => Some("accept-for-session"),
            "decline" => Some("decline"),
            "cancel" => Some("cancel"),
            _ => None,
        },
        Some(Value::Object(_)) => Some("accept-with-amendment"),
        _ => None,
    }
}

pub fn classify_permissions(reply: &Option<Reply>) -> &'static str {
    classify(reply, permissions_answer)
}

/// The answer a permissions request's result gives: a grant of some
/// permission (accept), of none (decline), or None when it grants nothing
/// Codex can read.
pub fn permissions_answer(result: &Value) -> Option<&'static str> {
    match result.get("permissions") {
        Some(Value::Object(p)) if p.values().all(Value::is_null) => Some("decline"),
        Some(Value::Object(_)) => Some("accept"),
        _ => None,
    }
}

pub fn classify_user_input(reply: &Option<Reply>) -> &'static str {
    classify(reply, user_input_answer)
}

/// The answer a user-input request's result gives: empty answers, answers,
/// or None when it has no answers object.
pub fn user_input_answer(result: &Value) -> Option<&'static str> {
    match result.get("answers") {
        Some(Value::Object(a)) if a.is_empty() => Some("empty-answers"),
        Some(Value::Object(_)) => Some("answered"),
        _ => None,
    }
}

pub fn classify_raw(reply: &Option<Reply>) -> &'static str {
    classify(reply, |_| Some("result"))
}
