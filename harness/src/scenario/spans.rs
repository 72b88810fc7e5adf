//! Where each key and value of a scenario file is: field paths such as
//! `steps[2].expect.server_calls` (indices from 0) mapped to byte spans,
//! from the TOML parser's own spans, so every error can name its line,
//! column and field however deep or far down the file it is.

use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

#[derive(Debug, Default)]
pub struct Spans {
    /// (path, key span, value span), in document order.
    entries: Vec<(String, Range<usize>, Range<usize>)>,
}

impl Spans {
    /// Indexes what the parser could read; `Err` carries the first syntax
    /// error (its span and message) and whatever was indexed before it.
    pub fn parse(text: &str) -> (Spans, Option<toml::de::Error>) {
        let (table, errors) = DeTable::parse_recoverable(text);
        let mut spans = Spans::default();
        spans.table("", table.get_ref());
        (spans, errors.into_iter().next())
    }

    fn table(&mut self, prefix: &str, table: &DeTable<'_>) {
        for (key, value) in table {
            let path = if prefix.is_empty() { key.get_ref().to_string() } else { format!("{prefix}.{}", key.get_ref()) };
            self.entries.push((path.clone(), key.span(), value.span()));
            self.value(&path, value);
        }
    }

    fn value(&mut self, path: &str, value: &Spanned<DeValue<'_>>) {
        match value.get_ref() {
            DeValue::Table(t) => self.table(path, t),
            DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{path}[{i}]");
                    self.entries.push((at.clone(), item.span(), item.span()));
                    self.value(&at, item);
                }
            }
            _ => {}
        }
    }

    /// The span of `path`'s value, else of its key, else of the nearest
    /// enclosing field's.
    pub fn value_of(&self, path: &str) -> Option<Range<usize>> {
        self.find(path, |(_, _, v)| v.clone())
    }

    /// The span of `path`'s key (an array element's own span), else the
    /// nearest enclosing field's.
    pub fn key_of(&self, path: &str) -> Option<Range<usize>> {
        self.find(path, |(_, k, _)| k.clone())
    }

    fn find(&self, path: &str, pick: impl Fn(&(String, Range<usize>, Range<usize>)) -> Range<usize>) -> Option<Range<usize>> {
        let mut p = path;
        loop {
            if let Some(e) = self.entries.iter().find(|e| e.0 == p) {
                return Some(pick(e));
            }
            p = parent(p)?;
        }
    }

    /// Where a key line no entry starts on is: for a parser error with no
    /// span (a key nested past the parser's recursion limit), the line the
    /// parser gave up on.
    pub fn first_unindexed_key(&self, text: &str) -> Option<Range<usize>> {
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            let end = start + line.len();
            let t = line.trim_start();
            let is_key = !t.starts_with('#') && !t.starts_with('[') && t.contains('=');
            if is_key && !self.entries.iter().any(|(_, k, _)| k.start >= start && k.start < end) {
                return Some(start..end);
            }
            start = end;
        }
        None
    }

    /// The innermost field whose value holds byte `offset`.
    pub fn path_at(&self, offset: usize) -> Option<&str> {
        self.entries
            .iter()
            .filter(|(_, k, v)| v.contains(&offset) || k.contains(&offset))
            .max_by_key(|(p, _, _)| p.len())
            .map(|(p, _, _)| p.as_str())
    }
}

/// `a.b[2].c` -> `a.b[2]` -> `a.b` -> `a` -> none.
pub fn parent(path: &str) -> Option<&str> {
    let cut = path.rfind(['.', '['])?;
    Some(&path[..cut])
}

/// A field path as a person reads it: `step 3: field `expect.answer``
/// (steps and array entries counted from 1).
pub fn describe(path: &str) -> String {
    if let Some(rest) = path.strip_prefix("steps[") {
        if let Some((n, field)) = rest.split_once(']') {
            let n = n.parse::<usize>().map_or(0, |n| n + 1);
            let field = field.trim_start_matches('.');
            return if field.is_empty() { format!("step {n}") } else { format!("step {n}: field `{}`", one_based(field)) };
        }
    }
    format!("field `{}`", one_based(path))
}

/// `servers[0].name` -> `servers[1].name`.
fn one_based(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..=open]);
        let close = rest[open..].find(']').map_or(rest.len(), |c| open + c);
        match rest[open + 1..close].parse::<usize>() {
            Ok(n) => out.push_str(&(n + 1).to_string()),
            Err(_) => out.push_str(&rest[open + 1..close]),
        }
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "id = \"x\"\n[[servers]]\nname = \"a\"\ntools.t.approval_mode = \"approve\"\n\n[[steps]]\nkind = \"k\"\n\n[[steps]]\nkind = \"tool_call\"\nexpect = { server_calls = \"one\" }\n";

    #[test]
    fn every_field_has_its_own_position() {
        let (s, err) = Spans::parse(TEXT);
        assert!(err.is_none());
        let at = |r: Range<usize>| line_col(TEXT, r.start);
        assert_eq!(at(s.value_of("steps[1].expect.server_calls").unwrap()), (11, 27));
        assert_eq!(at(s.key_of("servers[0].tools.t.approval_mode").unwrap()), (4, 9));
        assert_eq!(at(s.value_of("steps[1].expect.nope").unwrap()), (11, 10), "falls back to the enclosing field");
        assert_eq!(s.path_at(s.value_of("steps[1].expect.server_calls").unwrap().start), Some("steps[1].expect.server_calls"));
    }

    #[test]
    fn paths_read_as_people_count() {
        assert_eq!(describe("steps[2].expect.answer"), "step 3: field `expect.answer`");
        assert_eq!(describe("steps[0]"), "step 1");
        assert_eq!(describe("servers[0].tools.t"), "field `servers[1].tools.t`");
        assert_eq!(parent("a.b[2].c"), Some("a.b[2]"));
    }
}
