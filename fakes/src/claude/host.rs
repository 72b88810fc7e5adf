//! The SDK host on the other end of `--input-format stream-json`: its lines
//! on stdin (control requests, control responses, user messages), read on a
//! thread of their own so that the CLI can wait for one answer while the
//! host keeps writing, and the control requests the CLI sends it.

use std::cell::RefCell;
use std::io::{BufRead, Read};
use std::sync::mpsc::{channel, Receiver};

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
    /// What stopped a wait for an answer (stdin ended, a bad line).
    ended: RefCell<Option<Incoming>>,
}

impl Host {
    /// Starts reading stdin; every line is recorded as it comes in.
    pub fn start(rec: Recorder) -> Host {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
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
        Host { rx, ended: RefCell::new(None) }
    }

    pub fn next(&self) -> Incoming {
        if let Some(stop) = self.ended.borrow().clone() {
            return stop;
        }
        self.rx.recv().unwrap_or(Incoming::Eof)
    }

    /// What ended a wait for an answer, if something did.
    pub fn ended(&self) -> Option<Incoming> {
        self.ended.borrow().clone()
    }

    /// Sends a control request to the host and waits for its answer,
    /// answering the host's own requests meanwhile with `answer_other`.
    /// Err: what stopped the wait (stdin ended, a line that is not JSON);
    /// it is kept, and every later `next` returns it.
    pub fn ask(&self, out: &mut Output, request: Value, answer_other: &mut dyn FnMut(&mut Output, Incoming) -> Option<Incoming>) -> Result<Value, Incoming> {
        // CLI -> host request ids are UUIDs (measured).
        let id = new_uuid();
        out.line(&json!({"type": "control_request", "request_id": id, "request": request}));
        loop {
            match self.next() {
                Incoming::Response { id: got, response } if got == id => return Ok(response),
                Incoming::Response { .. } => {}
                other => {
                    if let Some(stop) = answer_other(out, other) {
                        *self.ended.borrow_mut() = Some(stop.clone());
                        return Err(stop);
                    }
                }
            }
        }
    }
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
