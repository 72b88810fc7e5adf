//! A fake's conversations against a real recording's, message by message.
//! Each conversation is split into its two directions (what the client sent,
//! what the server sent), each direction aligned by message kind (method,
//! answered method, stream message type), and aligned messages compared
//! field by field. Every difference names the conversation, the message's
//! place, its kind, a JSON pointer and both values.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde_json::Value;
use similar::{capture_diff_slices, Algorithm, DiffOp};

use super::conversation::{message, C2S, S2C};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The real CLI sent it, the fake did not.
    Missing,
    /// The fake sent it, the real CLI did not.
    Extra,
    /// Both sent it, at different places.
    Order,
    /// Both sent it; a field differs.
    Value,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Missing => "missing",
            Kind::Extra => "extra",
            Kind::Order => "order",
            Kind::Value => "value",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Difference {
    /// `provider` or `mcp/<server>`.
    pub conversation: String,
    pub kind: Kind,
    /// `tools/call`, `thread/start result`, `item/started mcpToolCall`,
    /// `system/init`, `launch`, `http GET /mcp`, `event eof` ...
    pub message: String,
    /// Places in the real and the fake conversation (0-based).
    pub real_at: Option<usize>,
    pub fake_at: Option<usize>,
    /// Into the message; empty for whole messages. HTTP facts of a message
    /// are under `/@http`.
    pub pointer: String,
    /// None: absent.
    pub real: Option<Value>,
    pub fake: Option<Value>,
}

/// Every message compared, how many agreed (same place, same fields), and
/// each difference.
#[derive(Debug, Default)]
pub struct Comparison {
    pub messages: usize,
    pub agreeing: usize,
    pub differences: Vec<Difference>,
}

/// Compares every conversation of a fake run with the real recording's.
pub fn compare(real: &BTreeMap<String, Vec<Value>>, fake: &BTreeMap<String, Vec<Value>>) -> Comparison {
    let mut out = Comparison::default();
    let empty = Vec::new();
    for name in real.keys().chain(fake.keys().filter(|k| !real.contains_key(*k))) {
        let (r, f) = (real.get(name).unwrap_or(&empty), fake.get(name).unwrap_or(&empty));
        let (r, f) = (without_output_deltas(&without_eof(name, r)), without_output_deltas(&without_eof(name, f)));
        conversation(name, &r, &f, &mut out);
    }
    out
}

/// A stdio MCP server's `eof` is not compared. Whether a server records
/// that its input ended before it is killed is a race: a real run's cleanup
/// may kill the last instances first (seen 1 in 3 on Codex 0.147.0 and
/// 0.153.4), and a relaunched provider's killed instance sometimes records
/// it and sometimes not (seed 21 case 277 on 0.162.0). That an instance
/// ended is still compared: the next one's `start` says so.
fn without_eof(name: &str, entries: &[Value]) -> Vec<Value> {
    let eof = |e: &Value| name.starts_with("mcp/") && e.get("event").and_then(Value::as_str) == Some("eof");
    entries.iter().filter(|e| !eof(e)).cloned().collect()
}

/// Codex's `item/commandExecution/outputDelta` is not compared: whether the
/// CLI streams a short command's output before the process has ended is a
/// race (missing in 1 of 4 runs on 0.150.0, and for one of two commands in
/// a run on 0.171.0); the output itself is compared in the item's
/// `aggregatedOutput` and in what the model saw.
fn without_output_deltas(entries: &[Value]) -> Vec<Value> {
    let delta = |e: &Value| e.get(S2C).and_then(|m| m.get("method")).and_then(Value::as_str) == Some("item/commandExecution/outputDelta");
    entries.iter().filter(|e| !delta(e)).cloned().collect()
}

fn conversation(name: &str, real: &[Value], fake: &[Value], out: &mut Comparison) {
    let (real_labels, fake_labels) = (labels(real), labels(fake));
    for lane in [C2S, S2C] {
        let ri: Vec<usize> = (0..real.len()).filter(|&i| lane_of(&real[i]) == lane).collect();
        let fi: Vec<usize> = (0..fake.len()).filter(|&i| lane_of(&fake[i]) == lane).collect();
        let a: Vec<&str> = ri.iter().map(|&i| real_labels[i].as_str()).collect();
        let b: Vec<&str> = fi.iter().map(|&i| fake_labels[i].as_str()).collect();
        let (mut missing, mut extra) = (Vec::new(), Vec::new());
        for op in capture_diff_slices(Algorithm::Myers, &a, &b) {
            match op {
                DiffOp::Equal { old_index, new_index, len } => {
                    for k in 0..len {
                        let (r, f) = (ri[old_index + k], fi[new_index + k]);
                        out.messages += 1;
                        let before = out.differences.len();
                        fields(name, &real_labels[r], r, f, &body(&real[r]), &body(&fake[f]), &mut out.differences);
                        if out.differences.len() == before {
                            out.agreeing += 1;
                        }
                    }
                }
                DiffOp::Delete { old_index, old_len, .. } => missing.extend(old_index..old_index + old_len),
                DiffOp::Insert { new_index, new_len, .. } => extra.extend(new_index..new_index + new_len),
                DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                    missing.extend(old_index..old_index + old_len);
                    extra.extend(new_index..new_index + new_len);
                }
            }
        }
        // A message both sent, at different places, is one difference of
        // order (and whatever its fields add), not a missing and an extra.
        for m in missing {
            out.messages += 1;
            let r = ri[m];
            let label = &real_labels[r];
            let whole = |kind, real_at, fake_at| Difference {
                conversation: name.to_string(),
                kind,
                message: label.clone(),
                real_at,
                fake_at,
                pointer: String::new(),
                real: None,
                fake: None,
            };
            match extra.iter().position(|&e| b[e] == label.as_str()) {
                Some(p) => {
                    let f = fi[extra.remove(p)];
                    out.differences.push(whole(Kind::Order, Some(r), Some(f)));
                    fields(name, label, r, f, &body(&real[r]), &body(&fake[f]), &mut out.differences);
                }
                None => out.differences.push(Difference { real: Some(body(&real[r])), ..whole(Kind::Missing, Some(r), None) }),
            }
        }
        for e in extra {
            out.messages += 1;
            let f = fi[e];
            out.differences.push(Difference {
                conversation: name.to_string(),
                kind: Kind::Extra,
                message: fake_labels[f].clone(),
                real_at: None,
                fake_at: Some(f),
                pointer: String::new(),
                real: None,
                fake: Some(body(&fake[f])),
            });
        }
    }
    out.differences.sort_by_key(|d| (d.conversation.clone(), d.real_at.or(d.fake_at), d.kind, d.pointer.clone()));
}

/// The client's side holds its messages and transport events; the server's
/// side its messages.
fn lane_of(entry: &Value) -> &'static str {
    match message(entry) {
        Some((lane, _)) => lane,
        None => C2S,
    }
}

/// What is compared of an entry: its message (with its HTTP facts under
/// `@http`), else the entry itself.
fn body(entry: &Value) -> Value {
    match message(entry) {
        Some((_, m)) => {
            let mut m = m.clone();
            if let (Some(http), Some(obj)) = (entry.get("http"), m.as_object_mut()) {
                obj.insert("@http".into(), http.clone());
            }
            m
        }
        None => entry.clone(),
    }
}

/// Each entry's kind, answers named after their request.
fn labels(entries: &[Value]) -> Vec<String> {
    let mut requests: HashMap<String, String> = HashMap::new();
    for e in entries {
        if let Some((lane, m)) = message(e) {
            if let (Some(id), Some(_)) = (m.get("id"), m.get("method")) {
                requests.insert(format!("{lane}{id}"), own_label(m));
            }
        }
    }
    entries
        .iter()
        .map(|e| match message(e) {
            Some((lane, m)) if m.get("method").is_none() && m.get("id").is_some() => {
                let asker = if lane == C2S { S2C } else { C2S };
                let asked = requests.get(&format!("{asker}{}", m["id"])).cloned().unwrap_or_else(|| "?".into());
                format!("{asked} {}", if m.get("error").is_some() { "error" } else { "result" })
            }
            Some((_, m)) => own_label(m),
            None if e.get("launch").is_some() => "launch".into(),
            None if e.get("http").is_some() => format!("http {} {}", str(&e["http"]["method"]), str(&e["http"]["path"])),
            None => format!("event {}", str(&e["event"])),
        })
        .collect()
}

fn own_label(m: &Value) -> String {
    if let Some(method) = m["method"].as_str() {
        return match m.pointer("/params/item/type").and_then(Value::as_str) {
            Some(t) => format!("{method} {t}"),
            None => method.to_string(),
        };
    }
    match (m["type"].as_str(), m["subtype"].as_str()) {
        (Some(t), Some(s)) => format!("{t}/{s}"),
        (Some(t), None) => t.to_string(),
        _ if m.get("_text").is_some() => "text".into(),
        _ => "?".into(),
    }
}

fn str(v: &Value) -> &str {
    v.as_str().unwrap_or("?")
}

/// Field differences of two aligned messages: objects key by key, arrays of
/// one length element by element, anything else as a whole.
fn fields(conv: &str, label: &str, r: usize, f: usize, real: &Value, fake: &Value, out: &mut Vec<Difference>) {
    let mut found = Vec::new();
    walk(real, fake, String::new(), &mut found);
    out.extend(found.into_iter().map(|(pointer, real, fake)| Difference {
        conversation: conv.to_string(),
        kind: Kind::Value,
        message: label.to_string(),
        real_at: Some(r),
        fake_at: Some(f),
        pointer,
        real,
        fake,
    }));
}

type Found = Vec<(String, Option<Value>, Option<Value>)>;

fn walk(real: &Value, fake: &Value, at: String, out: &mut Found) {
    match (real, fake) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => walk(x, y, p, out),
                    (x, y) => out.push((p, x.cloned(), y.cloned())),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                walk(x, y, format!("{at}/{i}"), out);
            }
        }
        _ if real != fake => out.push((at, Some(real.clone()), Some(fake.clone()))),
        _ => {}
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = match (self.real_at, self.fake_at) {
            (Some(r), Some(k)) if r == k => format!("#{r}"),
            (Some(r), Some(k)) => format!("#{r} (fake #{k})"),
            (Some(r), None) => format!("#{r}"),
            (None, Some(k)) => format!("fake #{k}"),
            (None, None) => String::new(),
        };
        write!(f, "{} {at} {}", self.conversation, self.message)?;
        match self.kind {
            Kind::Missing => write!(f, ": the fake does not send it: {}", short(self.real.as_ref())),
            Kind::Extra => write!(f, ": only the fake sends it: {}", short(self.fake.as_ref())),
            Kind::Order => write!(f, ": at another place in the fake"),
            Kind::Value => write!(f, " {}: real {}, fake {}", self.pointer, short(self.real.as_ref()), short(self.fake.as_ref())),
        }
    }
}

impl Difference {
    /// The difference between two recordings named `a` (the "real" side)
    /// and `b`, e.g. two releases in a bisect.
    pub fn between(&self, a: &str, b: &str) -> String {
        let at = self.real_at.or(self.fake_at).map(|i| format!("#{i}")).unwrap_or_default();
        let head = format!("{} {at} {}", self.conversation, self.message);
        match self.kind {
            Kind::Missing => format!("{head}: only {a} sends it: {}", short(self.real.as_ref())),
            Kind::Extra => format!("{head}: only {b} sends it: {}", short(self.fake.as_ref())),
            Kind::Order => format!("{head}: at another place in {b}"),
            Kind::Value => format!("{head} {}: {a} {}, {b} {}", self.pointer, short(self.real.as_ref()), short(self.fake.as_ref())),
        }
    }
}

/// A value in at most 100 characters; `<absent>` for none.
pub fn short(v: Option<&Value>) -> String {
    let Some(v) = v else { return "<absent>".into() };
    let text = v.to_string();
    if text.chars().count() <= 100 {
        return text;
    }
    text.chars().take(97).collect::<String>() + "..."
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conv(entries: Vec<Value>) -> BTreeMap<String, Vec<Value>> {
        BTreeMap::from([("provider".to_string(), entries)])
    }

    #[test]
    fn an_mcp_servers_eof_is_not_compared_but_its_restart_is() {
        let eof = json!({"event": "eof"});
        let start = json!({"event": "start", "transport": "stdio"});
        let call = json!({"c2s": {"method": "tools/call"}});
        let answer = json!({"s2c": {"method": "elicitation/create"}});
        let mcp = |v: Vec<&Value>| BTreeMap::from([("mcp/files".to_string(), v.into_iter().cloned().collect::<Vec<_>>())]);
        let fake = mcp(vec![&start, &call, &answer]);
        assert!(compare(&mcp(vec![&start, &call, &eof, &answer]), &fake).differences.is_empty());
        let relaunched = mcp(vec![&start, &call, &eof, &start, &call]);
        assert!(compare(&relaunched, &mcp(vec![&start, &call, &start, &call])).differences.is_empty());
        // A server the fake kept where the real CLI started it again differs.
        assert!(!compare(&relaunched, &mcp(vec![&start, &call, &eof, &call])).differences.is_empty());
    }

    #[test]
    fn missing_extra_moved_and_changed_messages() {
        let real = conv(vec![
            json!({"c2s": {"id": "<c0>", "method": "initialize"}}),
            json!({"s2c": {"id": "<c0>", "result": {"a": 1, "b": [1, 2]}}}),
            json!({"s2c": {"method": "configWarning"}}),
            json!({"s2c": {"method": "thread/started", "params": {"x": 1}}}),
            json!({"s2c": {"method": "item/started"}}),
            json!({"s2c": {"method": "turn/completed"}}),
        ]);
        let fake = conv(vec![
            json!({"c2s": {"id": "<c0>", "method": "initialize"}}),
            json!({"s2c": {"id": "<c0>", "result": {"a": 2, "b": [1, 2, 3]}}}),
            json!({"s2c": {"method": "item/started"}}),
            json!({"s2c": {"method": "turn/completed"}}),
            json!({"s2c": {"method": "thread/started", "params": {"x": 1}}}),
            json!({"s2c": {"method": "extra/notice"}}),
        ]);
        let c = compare(&real, &fake);
        let seen: Vec<(Kind, &str, &str)> = c.differences.iter().map(|d| (d.kind, d.message.as_str(), d.pointer.as_str())).collect();
        assert_eq!(
            seen,
            [
                (Kind::Value, "initialize result", "/result/a"),
                (Kind::Value, "initialize result", "/result/b"),
                (Kind::Missing, "configWarning", ""),
                (Kind::Order, "thread/started", ""),
                (Kind::Extra, "extra/notice", ""),
            ]
        );
        assert_eq!((c.messages, c.agreeing), (7, 3));
        assert_eq!(c.differences[0].to_string(), "provider #1 initialize result /result/a: real 1, fake 2");
    }
}
