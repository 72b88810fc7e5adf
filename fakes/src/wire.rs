//! Newline-delimited JSON-RPC framing shared by every fake: a bounded line
//! reader (a hostile peer must not make us buffer without limit) and an
//! append-only JSONL recorder.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// Longest line a fake accepts. Real peers send a few KiB; 16 MiB leaves room
/// for large tool results while keeping a runaway peer from exhausting memory.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One framed input line.
#[derive(Debug, PartialEq)]
pub enum Line {
    Json(Value),
    /// Not JSON: kept verbatim (truncated) so transcripts show what was sent.
    Garbage { text: String, error: String },
    TooLong { len: usize },
    Eof,
}

/// Reads the next non-blank line, never buffering more than `max` bytes of it.
pub fn read_line(reader: &mut impl BufRead, max: usize) -> io::Result<Line> {
    loop {
        let mut buf = Vec::new();
        let mut too_long = 0usize;
        loop {
            let chunk = reader.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if too_long > 0 || buf.len() + take > max + 1 {
                too_long += take + buf.len();
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
            reader.consume(take);
            if done {
                break;
            }
        }
        if too_long > 0 {
            return Ok(Line::TooLong { len: too_long });
        }
        if buf.is_empty() {
            return Ok(Line::Eof);
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        return Ok(match serde_json::from_str::<Value>(text) {
            Ok(v) => Line::Json(v),
            Err(e) => Line::Garbage { text: text.chars().take(512).collect(), error: e.to_string() },
        });
    }
}

/// The field of a transcript record naming the provider process it belongs
/// to (its pid). Every provider process of a trial appends to the same
/// transcript, and a driver may start the next one before the last exits,
/// so ids (JSON-RPC request ids restart at 0 in every process) are only
/// unique together with this.
pub const PROCESS: &str = "pid";

/// Append-only JSONL transcript, shareable across threads. Every record is
/// flushed at once so a crash or kill loses nothing already said.
#[derive(Clone)]
pub struct Recorder {
    file: Option<Arc<Mutex<File>>>,
    /// Stamped as [`PROCESS`] on every record.
    process: Option<u32>,
}

impl Recorder {
    pub fn open(path: &Path) -> io::Result<Recorder> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Recorder { file: Some(Arc::new(Mutex::new(file))), process: None })
    }

    /// A recorder that drops everything (for fakes run without a transcript).
    pub fn none() -> Recorder {
        Recorder { file: None, process: None }
    }

    /// The recorder of provider process `pid`: each record it writes names
    /// that process in [`PROCESS`].
    pub fn for_process(self, pid: u32) -> Recorder {
        Recorder { process: Some(pid), ..self }
    }

    pub fn record(&self, entry: &Value) {
        if let Some(file) = &self.file {
            let mut line = match (self.process, entry) {
                (Some(pid), Value::Object(map)) if !map.contains_key(PROCESS) => {
                    let mut map = map.clone();
                    map.insert(PROCESS.into(), Value::from(pid));
                    Value::Object(map).to_string()
                }
                _ => entry.to_string(),
            };
            line.push('\n');
            if let Ok(mut f) = file.lock() {
                let _ = f.write_all(line.as_bytes());
            }
        }
    }
}

/// Writes one JSON message as a line and flushes it.
pub fn write_message(out: &mut impl Write, msg: &Value) -> io::Result<()> {
    let mut line = msg.to_string();
    line.push('\n');
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// The JSON type name of a value, as schema validators and zod spell it.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The provider process a transcript record belongs to ([`PROCESS`]), as a
/// key: null for records no process claimed.
pub fn process_of(entry: &Value) -> Value {
    entry.get(PROCESS).cloned().unwrap_or(Value::Null)
}

/// Reads a JSONL file written by [`Recorder`]s. A process killed in the
/// middle of a record leaves it torn: the kernel stops a write to a file
/// at a page boundary once SIGKILL is pending, so the next record, often
/// another process's, is appended to the same line. The torn part is lost;
/// the record after it is kept (seen as a lost `launch` of a relaunched
/// fake Codex whose predecessor the driver had just killed).
pub fn read_jsonl(path: &Path) -> io::Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text.lines().filter_map(record).collect())
}

/// The record on a line: the whole line, or the first record starting after
/// a torn one (at an object opening `{"` from which the rest parses).
fn record(line: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str(line) {
        return Some(v);
    }
    line.match_indices("{\"").skip(1).find_map(|(at, _)| serde_json::from_str::<Value>(&line[at..]).ok().filter(Value::is_object))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use serde_json::json;

    #[test]
    fn reads_lines_and_flags_garbage_and_overlong() {
        let input = b"{\"a\":1}\n\nnot json\n0123456789012345\n{\"b\":2}";
        let mut r = Cursor::new(&input[..]);
        assert_eq!(read_line(&mut r, 12).unwrap(), Line::Json(serde_json::json!({"a":1})));
        assert!(matches!(read_line(&mut r, 12).unwrap(), Line::Garbage { .. }));
        assert!(matches!(read_line(&mut r, 12).unwrap(), Line::TooLong { len: 17 }));
        assert_eq!(read_line(&mut r, 12).unwrap(), Line::Json(serde_json::json!({"b":2})));
        assert_eq!(read_line(&mut r, 12).unwrap(), Line::Eof);
    }

    #[test]
    fn a_record_after_a_torn_one_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let torn = r#"{"dir":"s2c","msg":{"method":"thread/started","params":{"path":"/tmp/x/home/sess"#;
        let next = r#"{"event":"launch","pid":8,"argv":["app-server"]}"#;
        std::fs::write(&path, format!("{{\"pid\":7}}\n{torn}{next}\n{{\"pid\":8}}\n{torn}\n")).unwrap();
        let records = read_jsonl(&path).unwrap();
        assert_eq!(records, vec![json!({"pid": 7}), serde_json::from_str::<Value>(next).unwrap(), json!({"pid": 8})]);
    }

    #[test]
    fn a_process_recorder_names_its_process_on_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let first = Recorder::open(&path).unwrap().for_process(41);
        let second = Recorder::open(&path).unwrap().for_process(42);
        first.record(&serde_json::json!({"dir": "s2c", "msg": {"id": 0, "method": "m"}}));
        second.record(&serde_json::json!({"dir": "s2c", "msg": {"id": 0, "method": "m"}}));
        first.record(&serde_json::json!({"event": "launch", "pid": 7}));
        Recorder::open(&path).unwrap().record(&serde_json::json!({"event": "outcome"}));
        let lines = read_jsonl(&path).unwrap();
        let procs: Vec<Value> = lines.iter().map(process_of).collect();
        assert_eq!(procs, [serde_json::json!(41), serde_json::json!(42), serde_json::json!(7), Value::Null]);
    }
}
