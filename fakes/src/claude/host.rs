//! The SDK host on the other end of `--input-format stream-json`: its lines
//! on stdin (control requests, control responses, user messages), read on a
//! thread of their own so that the CLI can wait for one answer while the
//! host keeps writing, and the control requests the CLI sends it.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{BufRead, Read};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value};

use super::output::Output;
use super::uuid::new_uuid;
use crate::wire::{Recorder, MAX_LINE};

/// One line from the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// `control_request`: its id, subtype and the whole request object.
    Control { id: String, subtype: String, request: Value },
    /// `control_response` to a request of ours: its id and the response.
    Response { id: String, response: Value },
    /// `user`: a prompt for the next turn.
    User(Value),
    /// Any other type (keep_alive, update_environment_variables ...):
    /// read and ignored, as the real CLI does with an unknown type.
    Other(Value),
    /// Not JSON: the real CLI's stderr line for it (it then exits 1).
    Malformed(String),
    Eof,
}

/// The host's lines, parsed, as they arrive.
pub struct Host {
    rx: Receiver<Incoming>,
    rec: Recorder,
    /// What stopped a wait for an answer (stdin ended, a bad line).
    ended: RefCell<Option<Incoming>>,
    /// Lines that came while the CLI was connecting its SDK servers,
    /// handled once it is done.
    deferred: RefCell<VecDeque<Incoming>>,
}

impl Host {
    /// Starts reading stdin; every line is recorded as it comes in.
    pub fn start(rec: Recorder) -> Host {
        let (tx, rx) = channel();
        let reader_rec = rec.clone();
        std::thread::spawn(move || {
            let rec = reader_rec;
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut buf = Vec::new();
                let incoming = match (&mut stdin).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => Incoming::Eof,
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&buf);
                        let text = text.trim_end_matches(['\n', '\r']);
                        if text.trim().is_empty() {
                            continue;
                        }
                        match serde_json::from_str::<Value>(text) {
                            Ok(msg) => {
                                rec.record(&json!({"dir": "in", "msg": msg}));
                                classify(msg)
                            }
                            Err(_) => {
                                rec.record(&json!({"dir": "in", "text": text.chars().take(512).collect::<String>()}));
                                Incoming::Malformed(parse_error(text))
                            }
                        }
                    }
                };
                let end = matches!(incoming, Incoming::Eof | Incoming::Malformed(_));
                if tx.send(incoming).is_err() || end {
                    return;
                }
            }
        });
        Host { rx, rec, ended: RefCell::new(None), deferred: RefCell::new(VecDeque::new()) }
    }

    pub fn next(&self) -> Incoming {
        if let Some(line) = self.deferred.borrow_mut().pop_front() {
            return line;
        }
        if let Some(stop) = self.ended.borrow().clone() {
            return stop;
        }
        self.rx.recv().unwrap_or(Incoming::Eof)
    }

    /// Like `next`, but None once `wait` passes without a line.
    fn next_within(&self, wait: Duration) -> Option<Incoming> {
        if let Some(line) = self.deferred.borrow_mut().pop_front() {
            return Some(line);
        }
        if let Some(stop) = self.ended.borrow().clone() {
            return Some(stop);
        }
        match self.rx.recv_timeout(wait) {
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Incoming::Eof),
        }
    }

    /// Sends one control request while the session is being set up (an
    /// SDK server's handshake) and waits for its answer; the host's other
    /// lines meanwhile are kept for `next`, in order. Stdin ending or a
    /// line that is not JSON stops the wait.
    pub fn ask_deferring(&self, out: &mut Output, request: Value, flush: bool) -> Result<Value, Stop> {
        let id = new_uuid();
        out.line(&request_line(&id, request, flush));
        loop {
            // Lines deferred earlier are not answers to this request.
            if let Some(stop) = self.ended.borrow().clone() {
                return Err(Stop::Ended(stop));
            }
            let line = self.rx.recv().unwrap_or(Incoming::Eof);
            match line {
                Incoming::Response { id: rid, response } if rid == id => return Ok(response),
                Incoming::Response { .. } => {}
                stop @ (Incoming::Eof | Incoming::Malformed(_)) => {
                    *self.ended.borrow_mut() = Some(stop.clone());
                    return Err(Stop::Ended(stop));
                }
                other => self.deferred.borrow_mut().push_back(other),
            }
        }
    }

    /// Waits, after an answer the CLI cannot use, for what ends the wait:
    /// the real CLI waits for ever and says so every 30 s (`heartbeat`
    /// gets the count of 30 s passed; measured on 2.1.334). An interrupt
    /// ends it (answered `{"still_queued": []}`; unmeasured here), as do
    /// stdin ending or a line that is not JSON. Other control requests are
    /// answered unsupported; user messages join the turn.
    pub fn wait_out(&self, out: &mut Output, every: Duration, heartbeat: &mut dyn FnMut(&mut Output, u64)) -> Stop {
        let mut beats = 0;
        loop {
            let Some(line) = self.next_within(every) else {
                beats += 1;
                heartbeat(out, beats);
                continue;
            };
            match line {
                Incoming::Control { id, subtype, .. } if subtype == "interrupt" => {
                    out.line(&success(&id, json!({"still_queued": []})));
                    return Stop::Interrupted;
                }
                Incoming::Control { id, subtype, .. } => out.line(&unsupported(&id, &subtype)),
                Incoming::User(msg) => {
                    let prompt = msg.pointer("/message/content").cloned().unwrap_or(Value::Null);
                    self.rec.record(&json!({"event": "user_joined_turn", "prompt": prompt}));
                }
                Incoming::Response { .. } | Incoming::Other(_) => {}
                stop @ (Incoming::Eof | Incoming::Malformed(_)) => {
                    *self.ended.borrow_mut() = Some(stop.clone());
                    return Stop::Ended(stop);
                }
            }
        }
    }

    /// What ended a wait for an answer, if something did.
    pub fn ended(&self) -> Option<Incoming> {
        self.ended.borrow().clone()
    }

    /// Sends a control request to the host and waits for its answer.
    pub fn ask(&self, out: &mut Output, request: Value, flush: bool) -> Result<Value, Stop> {
        let mut answers = self.ask_all(out, vec![request], flush)?;
        Ok(answers.pop().map(|(_, r)| r).unwrap_or(Value::Null))
    }

    /// Sends control requests all at once (as the CLI sends a call's hook
    /// callbacks) and waits for every answer: (index, response) in the
    /// order they arrive. `flush`: the request line carries `"flush": true`
    /// (2.1.334 on hook_callback and mcp_message). Meanwhile the host's
    /// other lines are handled as the real CLI does (measured on 2.1.332
    /// and 2.1.334): an `interrupt` cancels every pending request
    /// (`control_cancel_request` each, never answered after), is answered
    /// `{"still_queued": []}` and stops the wait; another control request
    /// is answered unsupported; a user message joins the running turn (the
    /// model sees it beside the next tool result; no turn of its own).
    /// Stdin ending or a line that is not JSON stops the wait, and every
    /// later `next` returns what stopped it.
    pub fn ask_all(&self, out: &mut Output, requests: Vec<Value>, flush: bool) -> Result<Vec<(usize, Value)>, Stop> {
        let mut pending: Vec<(usize, String)> = Vec::new();
        for (i, request) in requests.into_iter().enumerate() {
            // CLI -> host request ids are UUIDs (measured).
            let id = new_uuid();
            out.line(&request_line(&id, request, flush));
            pending.push((i, id));
        }
        let mut answers = Vec::new();
        while !pending.is_empty() {
            match self.next() {
                Incoming::Response { id, response } => {
                    if let Some(at) = pending.iter().position(|(_, p)| *p == id) {
                        answers.push((pending.remove(at).0, response));
                    }
                }
                Incoming::Control { id, subtype, .. } if subtype == "interrupt" => {
                    for (_, p) in &pending {
                        out.line(&json!({"type": "control_cancel_request", "request_id": p}));
                    }
                    out.line(&success(&id, json!({"still_queued": []})));
                    return Err(Stop::Interrupted);
                }
                Incoming::Control { id, subtype, .. } => out.line(&unsupported(&id, &subtype)),
                Incoming::User(msg) => {
                    let prompt = msg.pointer("/message/content").cloned().unwrap_or(Value::Null);
                    self.rec.record(&json!({"event": "user_joined_turn", "prompt": prompt}));
                }
                Incoming::Other(_) => {}
                stop @ (Incoming::Eof | Incoming::Malformed(_)) => {
                    *self.ended.borrow_mut() = Some(stop.clone());
                    return Err(Stop::Ended(stop));
                }
            }
        }
        Ok(answers)
    }
}

/// A control request of the CLI's; `flush`: it carries `"flush": true`
/// (2.1.334 on hook_callback and mcp_message).
fn request_line(id: &str, request: Value, flush: bool) -> Value {
    if flush {
        json!({"type": "control_request", "request_id": id, "flush": true, "request": request})
    } else {
        json!({"type": "control_request", "request_id": id, "request": request})
    }
}

/// Why a wait for the host's answers ended without them.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// The host sent `interrupt`: the turn ends as after a deny with interrupt.
    Interrupted,
    /// Stdin ended or brought a line that is not JSON.
    Ended(Incoming),
}

/// A JSON stdin line by its `type`, as the real CLI reads it.
fn classify(msg: Value) -> Incoming {
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    match msg.get("type").and_then(Value::as_str) {
        Some("control_request") => {
            let request = msg.get("request").cloned().unwrap_or(Value::Null);
            Incoming::Control { id: str_of(&msg, "request_id"), subtype: str_of(&request, "subtype"), request }
        }
        Some("control_response") => {
            let response = msg.get("response").cloned().unwrap_or(Value::Null);
            Incoming::Response { id: str_of(&response, "request_id"), response }
        }
        Some("user") => Incoming::User(msg),
        _ => Incoming::Other(msg),
    }
}

/// `Error parsing streaming input line (type=T, N chars): SyntaxError`, T
/// being the first `"type": "..."` the text holds and N its length in
/// UTF-16 units (2.1.332, measured with lines that are not JSON).
pub fn parse_error(text: &str) -> String {
    format!("Error parsing streaming input line (type={}, {} chars): SyntaxError", sniff_type(text), text.encode_utf16().count())
}

/// The value of the first `"type"\s*:\s*"([\w-]{1,40})"` in the text.
fn sniff_type(text: &str) -> String {
    let mut rest = text;
    while let Some(at) = rest.find("\"type\"") {
        rest = &rest[at + 6..];
        let after = rest.trim_start();
        let Some(after) = after.strip_prefix(':') else { continue };
        let Some(after) = after.trim_start().strip_prefix('"') else { continue };
        let word: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-').collect();
        if (1..=40).contains(&word.chars().count()) && after[word.len()..].starts_with('"') {
            return word;
        }
    }
    "unknown".into()
}

/// The error answer to a control request the CLI does not handle.
pub fn unsupported(id: &str, subtype: &str) -> Value {
    json!({"type": "control_response", "response": {
        "subtype": "error", "request_id": id,
        "error": format!("Unsupported control request subtype: {subtype}"), "error_code": "unsupported_request",
    }})
}

pub fn success(id: &str, response: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_parse_errors() {
        assert_eq!(parse_error("not json at all"), "Error parsing streaming input line (type=unknown, 15 chars): SyntaxError");
        assert_eq!(parse_error("{\"type\": \"user\", oops"), "Error parsing streaming input line (type=user, 21 chars): SyntaxError");
        assert_eq!(sniff_type("{\"type\":5, \"x\":{\"type\":\"control_request\"}"), "control_request");
    }

    #[test]
    fn lines_by_type() {
        let c = classify(serde_json::from_str(r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize","hooks":{}}}"#).unwrap());
        assert!(matches!(c, Incoming::Control { ref id, ref subtype, .. } if id == "r1" && subtype == "initialize"));
        let r = classify(serde_json::from_str(r#"{"type":"control_response","response":{"subtype":"success","request_id":"u1","response":{"behavior":"allow"}}}"#).unwrap());
        assert!(matches!(r, Incoming::Response { ref id, .. } if id == "u1"));
        assert!(matches!(classify(serde_json::from_str(r#"{"type":"keep_alive"}"#).unwrap()), Incoming::Other(_)));
        assert_eq!(unsupported("r", "bogus")["response"]["error"], "Unsupported control request subtype: bogus");
    }
}
