//! Newline-delimited JSON-RPC over a byte stream (the MCP stdio transport).
//!
//! Reading happens on the calling thread; answers held back by a tool's
//! `delay_ms` are written from worker threads, so a `notifications/cancelled`
//! sent during the delay is recorded when it arrives, not after the answer.
//! A tool that elicits holds its answer until the client replies to its
//! `elicitation/create` (or [`ELICIT_WAIT`] passes).

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use super::{error_reply, garbage, record_out, respond, with_elicited, Catalog, Stopper, INVALID_REQUEST};
use crate::wire::{read_line, write_message, Line, Recorder, MAX_LINE};

/// Serves until `input` ends. Returns 0 at EOF, 1 if reading failed.
///
/// At EOF, answers still held back by a delay are sent at once (the sleep is
/// cut short) so the process exits promptly when its client hangs up.
pub fn serve_stdio(
    catalog: &Catalog,
    rec: &Recorder,
    mut input: impl BufRead,
    output: impl Write + Send,
) -> i32 {
    // The pid lets the harness wait for this server to end before reading.
    rec.record(&json!({"event": "start", "transport": "stdio", "server": catalog.server, "pid": std::process::id()}));
    let out = Mutex::new(output);
    let stopper = Stopper::default();
    // Tool answers waiting for their elicitation's reply, by its request id.
    let pending: Mutex<BTreeMap<String, Value>> = Mutex::new(BTreeMap::new());
    let mut asked = 0;
    let code = std::thread::scope(|scope| {
        let code = loop {
            let msg = match read_line(&mut input, MAX_LINE) {
                Ok(Line::Json(msg)) => msg,
                Ok(Line::Garbage { text, error }) => {
                    send(&out, rec, garbage(rec, &error, Some(&text)));
                    continue;
                }
                Ok(Line::TooLong { len }) => {
                    rec.record(&json!({"event": "too_long", "len": len}));
                    send(&out, rec, error_reply(&Value::Null, INVALID_REQUEST, "line too long"));
                    continue;
                }
                Ok(Line::Eof) => break 0,
                Err(e) => {
                    rec.record(&json!({"event": "read_error", "error": e.to_string()}));
                    break 1;
                }
            };
            rec.record(&json!({"dir": "in", "msg": msg}));
            if let Some(answer) = elicited(&pending, &msg) {
                send(&out, rec, answer);
                continue;
            }
            let reply = respond(catalog, &msg, rec);
            let Some(answer) = reply.msg else { continue };
            if let Some(params) = reply.ask {
                asked += 1;
                let id = format!("elicit-{asked}");
                if let Ok(mut p) = pending.lock() {
                    p.insert(id.clone(), answer);
                }
                send(&out, rec, json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params}));
                // A client that never replies must not hold the call forever.
                let (out, stopper, pending) = (&out, stopper.clone(), &pending);
                scope.spawn(move || {
                    stopper.sleep(ELICIT_WAIT);
                    if let Some(answer) = pending.lock().ok().and_then(|mut p| p.remove(&id)) {
                        send(out, rec, with_elicited(answer, "no answer"));
                    }
                });
            } else if reply.delay.is_zero() {
                send(&out, rec, answer);
            } else {
                let (out, stopper) = (&out, stopper.clone());
                scope.spawn(move || {
                    stopper.sleep(reply.delay);
                    send(out, rec, answer);
                });
            }
        };
        // The client is gone: calls waiting on an elicitation get no answer.
        if let Ok(mut p) = pending.lock() {
            p.clear();
        }
        // Wake delayed answers; the scope then joins their threads.
        stopper.stop();
        code
    });
    if code == 0 {
        rec.record(&json!({"event": "eof"}));
    }
    code
}

/// How long a call waits for the reply to its elicitation.
pub const ELICIT_WAIT: Duration = Duration::from_secs(20);

/// When `msg` is the client's reply to a pending elicitation: that call's
/// answer, with what the elicitation got.
fn elicited(pending: &Mutex<BTreeMap<String, Value>>, msg: &Value) -> Option<Value> {
    if msg.get("method").is_some() {
        return None;
    }
    let id = msg.get("id")?.as_str()?;
    let answer = pending.lock().ok()?.remove(id)?;
    let got = match (msg.get("result"), msg.get("error")) {
        (Some(r), _) => r.to_string(),
        (None, Some(e)) => format!("error {e}"),
        (None, None) => "nothing".to_string(),
    };
    Some(with_elicited(answer, &got))
}

fn send(out: &Mutex<impl Write>, rec: &Recorder, msg: Value) {
    let Some(msg) = record_out(rec, Some(msg)) else { return };
    let result = match out.lock() {
        Ok(mut w) => write_message(&mut *w, &msg),
        Err(_) => return, // a writer panicked mid-write; nothing sane to add
    };
    if let Err(e) = result {
        rec.record(&json!({"event": "write_error", "error": e.to_string()}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::read_jsonl;
    use std::io::{Cursor, Read};
    use std::time::{Duration, Instant};

    fn catalog() -> Catalog {
        Catalog::from_json_str(
            r#"{"server":"files","tools":[{"name":"read_file"},{"name":"slow","delay_ms":150}]}"#,
        )
        .unwrap()
    }

    fn replies(out: &[u8]) -> Vec<Value> {
        String::from_utf8_lossy(out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn an_eliciting_tool_answers_after_the_clients_reply() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Recorder::open(&dir.path().join("rec.jsonl")).unwrap();
        let catalog = Catalog::from_json_str(r#"{"server":"ops","tools":[{"name":"deploy","elicits":"Which environment?"}]}"#).unwrap();
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"elicit-1","result":{"action":"decline"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"elicit-2","error":{"code":-1,"message":"no"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"deploy","arguments":{}}}"#,
            "\n",
        );
        let mut out = Vec::new();
        let started = Instant::now();
        assert_eq!(serve_stdio(&catalog, &rec, Cursor::new(input), &mut out), 0);
        assert!(started.elapsed() < ELICIT_WAIT, "EOF ends a call still waiting");
        let r = replies(&out);
        assert_eq!(r.len(), 5, "{r:?}");
        assert_eq!(r[0], json!({"jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create", "params": catalog.tools[0].elicitation().unwrap()}));
        assert_eq!(r[1]["id"], 2);
        assert_eq!(r[1]["result"]["content"][1]["text"], r#"elicitation: {"action":"decline"}"#);
        assert_eq!(r[3]["id"], 3);
        assert!(r[3]["result"]["content"][1]["text"].as_str().unwrap().starts_with("elicitation: error "), "{r:?}");
        assert_eq!(r[4]["method"], "elicitation/create", "the last call, its client gone, gets no answer");
    }

    #[test]
    fn serves_a_session_over_in_memory_streams() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let rec = Recorder::open(&path).unwrap();
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            "\n",
            "{not json\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"p":1}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"server/discover"}"#,
        );
        let mut out = Vec::new();
        assert_eq!(serve_stdio(&catalog(), &rec, Cursor::new(input), &mut out), 0);
        let r = replies(&out);
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!(r[0]["result"]["protocolVersion"], "2025-03-26");
        assert_eq!((r[1]["id"].clone(), r[1]["error"]["code"].clone()), (Value::Null, json!(-32700)));
        assert_eq!(r[2]["result"]["content"][0]["text"], "files/read_file ok: {\"p\":1}");
        assert_eq!(r[3]["error"]["code"], -32601);

        let log = read_jsonl(&path).unwrap();
        assert_eq!(log.first(), Some(&json!({"event":"start","transport":"stdio","server":"files","pid":std::process::id()})));
        assert_eq!(log.last(), Some(&json!({"event":"eof"})));
        let ins = log.iter().filter(|e| e["dir"] == "in").count();
        let outs = log.iter().filter(|e| e["dir"] == "out").count();
        assert_eq!((ins, outs), (4, 4));
        assert_eq!(log.iter().filter(|e| e["event"] == "garbage").count(), 1);
        assert_eq!(log.iter().filter(|e| e["event"] == "tools/call").count(), 1);
    }

    /// Gives out its lines one at a time, pausing before each, so a message
    /// can arrive while an earlier answer is still being held back.
    struct SlowLines {
        lines: Vec<(Duration, String)>,
        cur: Cursor<Vec<u8>>,
    }

    impl Read for SlowLines {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.fill_buf()?.read(buf)?;
            self.consume(n);
            Ok(n)
        }
    }

    impl BufRead for SlowLines {
        fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
            if self.cur.position() as usize >= self.cur.get_ref().len() && !self.lines.is_empty() {
                let (pause, line) = self.lines.remove(0);
                std::thread::sleep(pause);
                self.cur = Cursor::new(line.into_bytes());
            }
            self.cur.fill_buf()
        }
        fn consume(&mut self, n: usize) {
            self.cur.consume(n)
        }
    }

    #[test]
    fn cancellation_is_recorded_while_a_delayed_answer_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let rec = Recorder::open(&path).unwrap();
        let input = SlowLines {
            lines: vec![
                (
                    Duration::ZERO,
                    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}"#.to_string()
                        + "\n",
                ),
                (
                    Duration::from_millis(20),
                    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#
                        .to_string()
                        + "\n",
                ),
                (Duration::from_millis(20), r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#.to_string() + "\n"),
                // Keep the input open past the delay so the answer is not cut short.
                (Duration::from_millis(400), String::new()),
            ],
            cur: Cursor::new(Vec::new()),
        };
        let start = Instant::now();
        let mut out = Vec::new();
        assert_eq!(serve_stdio(&catalog(), &rec, input, &mut out), 0);
        assert!(start.elapsed() >= Duration::from_millis(150));
        let r = replies(&out);
        // The ping overtakes the delayed call.
        assert_eq!(r.iter().map(|m| m["id"].clone()).collect::<Vec<_>>(), vec![json!(8), json!(7)]);

        let log = read_jsonl(&path).unwrap();
        let pos = |pred: &dyn Fn(&Value) -> bool| log.iter().position(pred).unwrap();
        let cancelled = pos(&|e| e["msg"]["method"] == "notifications/cancelled");
        let answered = pos(&|e| e["dir"] == "out" && e["msg"]["id"] == 7);
        assert!(cancelled < answered, "{log:#?}");
    }

    #[test]
    fn eof_cuts_delays_short() {
        let input = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#;
        let c =
            Catalog::from_json_str(r#"{"server":"s","tools":[{"name":"slow","delay_ms":60000}]}"#).unwrap();
        let start = Instant::now();
        let mut out = Vec::new();
        assert_eq!(serve_stdio(&c, &Recorder::none(), Cursor::new(input), &mut out), 0);
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(replies(&out)[0]["id"], 1);
    }

    #[test]
    fn overlong_line_is_rejected_and_serving_continues() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let rec = Recorder::open(&path).unwrap();
        let mut input = vec![b' '; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
        let mut out = Vec::new();
        assert_eq!(serve_stdio(&catalog(), &rec, Cursor::new(input), &mut out), 0);
        let r = replies(&out);
        assert_eq!(r[0]["error"]["code"], INVALID_REQUEST);
        assert_eq!(r[1]["result"], json!({}));
        assert!(read_jsonl(&path).unwrap().iter().any(|e| e["event"] == "too_long"));
    }
}
