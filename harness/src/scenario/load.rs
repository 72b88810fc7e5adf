//! Parsing a scenario: TOML with unknown keys rejected, the checks serde
//! cannot make ([`check`]), and every error located as `file:line:col`.

use std::path::Path;

use fakes::version::VersionRange;

use super::check;
use super::error::ScenarioError;
use super::read;
use super::spans::{describe, line_col, Spans};
use super::*;

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = read::read(path)?;
        Scenario::parse(path, &text)
    }

    /// Parses and checks one scenario. Every error names the line, column
    /// and field it is about, from the parser's spans: syntax, types, unknown
    /// keys and the checks in [`check`] alike.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let (spans, syntax) = Spans::parse(text);
        let at = |span: Option<std::ops::Range<usize>>, message: String| {
            let (line, column) = span.map_or((1, 1), |s| line_col(text, s.start));
            ScenarioError { path: path.to_path_buf(), line, column, message }
        };
        // Syntax (and values the parser cannot hold, e.g. a too large integer).
        let syntax = syntax.map(Err).unwrap_or_else(|| toml::from_str::<toml::Table>(text));
        let mut table = syntax.map_err(|e| {
            let span = e.span().or_else(|| spans.first_unindexed_key(text));
            let field = span.clone().and_then(|s| spans.path_at(s.start)).map(|p| format!("{}: ", describe(p))).unwrap_or_default();
            at(span, format!("{field}{}", plain(e.message().trim())))
        })?;
        // Steps are tagged by `kind`; a tagged value loses positions inside it,
        // so each `{kind = K, ...}` becomes `{K = {...}}` for serde.
        if let Some(toml::Value::Array(steps)) = table.get_mut("steps") {
            for (i, step) in steps.iter_mut().enumerate() {
                let here = format!("steps[{i}]");
                let toml::Value::Table(fields) = step else {
                    return Err(at(spans.value_of(&here), format!("{}: a step is a table", describe(&here))));
                };
                let kind = match fields.remove("kind") {
                    Some(toml::Value::String(k)) => k,
                    Some(_) => return Err(at(spans.value_of(&format!("{here}.kind")), format!("{}: is a string", describe(&format!("{here}.kind"))))),
                    None => return Err(at(spans.key_of(&here), format!("{}: missing field `kind`", describe(&here)))),
                };
                *step = toml::Value::Table(toml::Table::from_iter([(kind, toml::Value::Table(std::mem::take(fields)))]));
            }
        }
        let mut scenario: Scenario = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let message = e.inner().message().trim().to_string();
            let (field, span) = serde_error_at(&spans, serde_path(e.path()), &message);
            let field = if field.is_empty() { String::new() } else { format!("{}: ", describe(&field)) };
            at(span, format!("{field}{message}"))
        })?;
        scenario.path = path.to_path_buf();
        check::check(&scenario).map_err(|(field, message)| at(spans.value_of(&field), format!("{}: {message}", describe(&field))))?;
        let position = |field: &str| spans.value_of(field).map_or((1, 1), |s| line_col(text, s.start));
        scenario.id_at = position("id");
        scenario.caught_by_at = (0..scenario.caught_by.len()).map(|i| position(&format!("caught_by[{i}]"))).collect();
        Ok(scenario)
    }

    pub fn version_range(&self) -> VersionRange {
        self.versions.parse().unwrap_or_else(|_| VersionRange::any())
    }

    pub fn server(&self, name: &str) -> Option<&ServerDecl> {
        self.servers.iter().find(|s| s.name.trim() == name.trim())
    }
}

/// The TOML parser's terse messages, said plainly: every rewording in one list.
fn plain(message: &str) -> String {
    const REWORDED: &[(&str, &str)] = &[
        ("recursion limit", "keys or values nest deeper than the TOML parser allows (recursion limit)"),
        ("as i128, expected any valid TOML value", "is larger than a TOML integer can be"),
    ];
    for (quirk, plainly) in REWORDED {
        if let Some(cut) = message.find(quirk) {
            let head = message[..cut].trim_end().trim_start_matches("invalid type: ");
            return if head.is_empty() { plainly.to_string() } else { format!("{head} {plainly}") };
        }
    }
    message.to_string()
}

/// serde's path of the rewritten document, as the file's field path: the
/// step's kind segment (`steps[2].tool_call.expect`) is dropped.
fn serde_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    let mut skip_next = false;
    for seg in path.iter() {
        if skip_next {
            skip_next = false;
            continue;
        }
        match seg {
            Segment::Seq { index } => {
                out.push_str(&format!("[{index}]"));
                skip_next = out == format!("steps[{index}]");
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// The field a serde error is about and where it is: for an unknown key,
/// its table (the message names the key) and the key itself; for an unknown
/// step kind, the step and its `kind`; else the value at the error's path.
fn serde_error_at(spans: &Spans, path: String, message: &str) -> (String, Option<std::ops::Range<usize>>) {
    if let Some(key) = message.strip_prefix("unknown field `").and_then(|m| m.split('`').next()) {
        // The path may or may not end with the unknown key itself.
        let table = match path.strip_suffix(key) {
            Some(t) if t.is_empty() || t.ends_with('.') => t.trim_end_matches('.').to_string(),
            _ => path,
        };
        let span = spans.key_of(&if table.is_empty() { key.to_string() } else { format!("{table}.{key}") });
        return (table, span);
    }
    let span = if message.starts_with("unknown variant") && path.starts_with("steps[") && !path.contains('.') {
        spans.value_of(&format!("{path}.kind"))
    } else if message.starts_with("missing field") {
        spans.key_of(&path)
    } else {
        spans.value_of(&path)
    };
    (path, span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> String {
        super::super::sample("read_file", "approve", "{ server_calls = 1 }", "")
    }

    fn err(text: &str) -> String {
        Scenario::parse(Path::new("s.toml"), text).unwrap_err().to_string()
    }

    #[test]
    fn good_scenario_parses() {
        let s = Scenario::parse(Path::new("s.toml"), &good()).unwrap();
        assert_eq!(s.steps.len(), 1);
        assert_eq!(catalog(&s.servers[0]).len(), 1);
    }

    #[test]
    fn errors_name_file_line_column_and_field() {
        let e = err(&good().replace("reason = \"r\"", "reason = \"r\"\ncolour = \"blue\""));
        assert!(e.starts_with("s.toml:14:1: field `servers[1]`: unknown field `colour`"), "{e}");
        let e = err(&good().replace("transport = \"stdio\"", "transport = \"pigeon\""));
        assert!(e.starts_with("s.toml:12:13: field `servers[1].transport`: unknown variant `pigeon`"), "{e}");
        let e = err(&good().replace("kind = \"tool_call\"", "kind = \"teleport\""));
        assert!(e.starts_with("s.toml:17:8: step 1: unknown variant `teleport`"), "{e}");
        // Inside a step, the position is the field's own.
        let e = err(&good().replace("expect = { server_calls = 1 }", "expect = { server_calls = 1, vibes = true }"));
        assert!(e.starts_with("s.toml:20:30: step 1: field `expect`: unknown field `vibes`"), "{e}");
        let e = err(&good().replace("server = \"files\"", "server = \"nope\""));
        assert!(e.starts_with("s.toml:18:10: step 1: field `server`: no server `nope`"), "{e}");
        let e = err(&good().replace("covers = [\"AC-1\"]", "covers = [\"AC-99\"]"));
        assert!(e.starts_with("s.toml:3:11: field `covers[1]`: unknown criterion `AC-99`"), "{e}");
        let e = err(&good().replace("caught_by = [\"drop-policy\"]", "caught_by = []"));
        assert!(e.starts_with("s.toml:5:13: field `caught_by`"), "{e}");
        let e = err(&good().replace("approval_mode = \"approve\"", "approval_mode = \"sometimes\""));
        assert!(e.starts_with("s.toml:14:33:") && e.contains("sometimes"), "{e}");
        let e = err(&good().replace("expect = { server_calls = 1 }", "expect = {}"));
        assert!(e.starts_with("s.toml:20:10: step 1: field `expect`: checks nothing"), "{e}");
        let e = err("id = [");
        assert!(e.starts_with("s.toml:1:"), "{e}");
    }
}

