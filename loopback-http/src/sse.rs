//! Server-sent events (the `text/event-stream` format): writing one event,
//! and reading events out of a body that arrives in arbitrary pieces.

/// One event as written by [`event`] or read by [`Parser`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `event:` field; empty when the server gave none ("message").
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    pub id: Option<String>,
}

/// One event named `name` carrying `data` (several `data:` lines if `data`
/// has line breaks), with its closing blank line.
pub fn event(name: &str, data: &str) -> String {
    let mut out = format!("event: {name}\n");
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    out.push('\n');
    out
}

/// Cuts a stream into events. Lines may end in CRLF, LF or CR; comments
/// (`:`) and unknown fields are skipped; an event without `data:` is not
/// dispatched, as the spec says.
#[derive(Debug, Default)]
pub struct Parser {
    pending: Vec<u8>,
    current: Event,
    has_data: bool,
}

impl Parser {
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The next complete event in what was pushed so far.
    pub fn next_event(&mut self) -> Option<Event> {
        loop {
            let end = self.pending.iter().position(|&b| b == b'\n' || b == b'\r')?;
            // A CR at the end of what we have may be the first half of CRLF.
            if self.pending[end] == b'\r' && end + 1 == self.pending.len() {
                return None;
            }
            let skip = if self.pending[end] == b'\r' && self.pending[end + 1] == b'\n' { 2 } else { 1 };
            let line: Vec<u8> = self.pending.drain(..end + skip).take(end).collect();
            if let Some(ev) = self.line(&String::from_utf8_lossy(&line)) {
                return Some(ev);
            }
        }
    }

    /// The stream ended: a trailing CR was a line end. (An event missing its
    /// blank line is dropped.)
    pub fn finish(&mut self) -> Option<Event> {
        if self.pending.last() == Some(&b'\r') {
            self.pending.push(b'\n');
            return self.next_event();
        }
        None
    }

    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            let ev = std::mem::take(&mut self.current);
            let dispatch = std::mem::take(&mut self.has_data);
            return dispatch.then_some(ev);
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.current.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            "id" => self.current.id = Some(value.to_string()),
            _ => {} // comments (empty field), retry, unknown fields
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(pieces: &[&[u8]]) -> Vec<Event> {
        let mut p = Parser::default();
        let mut out = Vec::new();
        for piece in pieces {
            p.push(piece);
            while let Some(e) = p.next_event() {
                out.push(e);
            }
        }
        out.extend(p.finish());
        out
    }

    #[test]
    fn events_survive_any_split_and_line_ending() {
        let text = b": comment\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\nid: 7\ndata:two\ndata: lines\n\nevent: no-data\n\ndata: cr\r\r";
        let want = vec![
            Event { event: "a".into(), data: "{\"x\":1}".into(), id: None },
            Event { event: String::new(), data: "two\nlines".into(), id: Some("7".into()) },
            Event { event: String::new(), data: "cr".into(), id: None },
        ];
        assert_eq!(all(&[text]), want);
        for cut in 1..text.len() {
            assert_eq!(all(&[&text[..cut], &text[cut..]]), want, "cut at {cut}");
        }
        let bytewise: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(all(&bytewise), want);
    }

    #[test]
    fn written_events_read_back() {
        let text = event("response.created", "{\"a\":1}\nsecond");
        assert_eq!(text, "event: response.created\ndata: {\"a\":1}\ndata: second\n\n");
        assert_eq!(
            all(&[text.as_bytes()]),
            vec![Event { event: "response.created".into(), data: "{\"a\":1}\nsecond".into(), id: None }]
        );
        // Unterminated: dropped.
        assert!(all(&[b"data: x\n"]).is_empty());
    }
}
