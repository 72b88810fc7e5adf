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

/// Append-only JSONL transcript, shareable across threads. Every record is
/// flushed at once so a crash or kill loses nothing already said.
#[derive(Clone)]
pub struct Recorder {
    file: Option<Arc<Mutex<File>>>,
}

impl Recorder {
    pub fn open(path: &Path) -> io::Result<Recorder> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Recorder { file: Some(Arc::new(Mutex::new(file))) })
    }

    /// A recorder that drops everything (for fakes run without a transcript).
    pub fn none() -> Recorder {
        Recorder { file: None }
    }

    pub fn record(&self, entry: &Value) {
        if let Some(file) = &self.file {
            let mut line = entry.to_string();
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

/// Reads a JSONL file written by a [`Recorder`], skipping a torn last line.
pub fn read_jsonl(path: &Path) -> io::Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

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
}
