//! Every value quirk normalized away before a fake and a real conversation
//! are compared, one rule per line with the reason it cannot be compared as
//! recorded. Two runs of one trial on one binary must normalize to the same
//! text. The structural rules (message ids, the order of racing messages)
//! are in `conversation` and `order`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{json, Map, Value};

/// Numbers that differ run to run, by field name: (name, placeholder, why).
/// A name ending in `*` matches every field ending in what precedes it.
const NUMBERS: &[(&str, &str, &str)] = &[
    ("emittedAtMs", "<time>", "wall-clock time a notification was sent"),
    ("startedAtMs", "<time>", "wall-clock time"),
    ("completedAtMs", "<time>", "wall-clock time"),
    ("startedAt", "<time>", "wall-clock time (seconds)"),
    ("completedAt", "<time>", "wall-clock time (seconds)"),
    ("createdAt", "<time>", "wall-clock time (seconds)"),
    ("updatedAt", "<time>", "wall-clock time (seconds)"),
    ("recencyAt", "<time>", "wall-clock time (seconds)"),
    ("turn_started_at_unix_ms", "<time>", "wall-clock time in Codex's turn metadata"),
    ("pid", "<pid>", "process id (Claude Code's SDK initialize answer)"),
    ("durationMs", "<ms>", "latency"),
    ("duration_ms", "<ms>", "latency"),
    ("duration_api_ms", "<ms>", "latency"),
    ("first_content_frame_ms", "<ms>", "latency"),
    ("time_to_request_ms", "<ms>", "latency"),
    ("ttft_ms", "<ms>", "latency"),
    ("ttft_stream_ms", "<ms>", "latency"),
    ("*Tokens", "<n>", "token counts come from the mock model and the CLI's own estimates"),
    ("*_tokens", "<n>", "token counts"),
    ("costUSD", "<n>", "priced from token counts"),
    ("total_cost_usd", "<n>", "priced from token counts"),
];

/// Strings that name an id chosen at run time, by field name: (name, kind,
/// why). Each distinct value becomes `<kind N>` in order of first
/// appearance, everywhere in the recording (so a thread id in an MCP
/// server's `_meta` still reads as the same thread).
const IDS: &[(&str, &str, &str)] = &[
    ("threadId", "thread", "generated per run"),
    ("thread_id", "thread", "generated per run"),
    ("/thread/id", "thread", "generated per run"),
    ("turnId", "turn", "generated per run"),
    ("turn_id", "turn", "generated per run"),
    ("rootTurnId", "turn", "generated per run"),
    ("/turn/id", "turn", "generated per run"),
    ("sessionId", "session", "generated per run"),
    ("session_id", "session", "generated per run"),
    ("processId", "process", "the process id of a command Codex ran"),
    ("request_id", "request", "control request ids of Claude Code's SDK protocol: random short strings from the SDK host, UUIDs from the CLI"),
];

/// Text patterns replaced in every string: (pattern, replacement, why).
/// Applied in order, after the run directory, secrets and ids.
const TEXT: &[(&str, &str, &str)] = &[
    (r"(127\.0\.0\.1|localhost):\d+", "$1:<port>", "ephemeral loopback ports"),
    (r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", "random ids (items, messages, installations)"),
    (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>", "wall-clock timestamps"),
    (r"\d{4}/\d\d/\d\d/rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d", "<date>/rollout-<time>", "Codex names rollout files by date and time"),
    (r"Wall time: [0-9.]+", "Wall time: <T>", "Codex tells the model how long a tool took"),
    (r"aborted by user after [0-9.]+s", "aborted by user after <T>s", "up to 0.149.1 Codex tells the model how long a cancelled command ran"),
    (r"Chunk ID: [0-9a-f]+", "Chunk ID: <chunk>", "Codex names each piece of a command's output it shows the model at random"),
    (r"cc-socks/\d+\.sock", "cc-socks/<pid>.sock", "Claude Code names its socket by process id"),
    (r"^[0-9a-f]{8}:(\d+)$", "<sdk-run>:$1", "Claude Code 2.1.326 prefixes its SDK servers' message ids with a random 8-hex run id"),
];

/// Field-specific rewrites: (field, why).
const FIELDS: &[(&str, &str)] = &[
    ("command", "the fake MCP server's program (a machine path, and a subcommand of the CLI or a program of its own) becomes <fake-mcp> with its leading arguments dropped, also inside a TOML `args=[...]` override"),
    ("userAgent", "after the product token it names the recording machine's OS and terminal: kept only up to the first space"),
    ("serverName", "remoteControl/status/changed names the recording machine's host: its hostname becomes <host>"),
    ("timestamp", "wall-clock time of a Claude Code stream message -> <time>"),
];

fn text_rules() -> &'static [(Regex, &'static str)] {
    static RULES: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    RULES.get_or_init(|| TEXT.iter().map(|(p, r, _)| (Regex::new(p).expect("valid rule"), *r)).collect())
}

/// Normalizes the values of one run's conversations.
pub struct Normalizer {
    /// (text, replacement, whole token only), longest first: run
    /// directory, secrets, ids.
    literal: Vec<(String, String, bool)>,
    counters: BTreeMap<&'static str, usize>,
    host: Option<String>,
    /// The fake MCP server's program and leading arguments.
    fake_mcp: (String, Vec<String>),
}

impl Normalizer {
    /// `run` is the trial's run directory; `secrets` every secret handed
    /// out; `fake_mcp` the program and leading arguments that start the fake
    /// MCP server.
    pub fn new(run: &str, secrets: &[String], fake_mcp: (String, Vec<String>)) -> Normalizer {
        let mut literal = Vec::new();
        if !run.is_empty() {
            // Claude Code names per-project folders after the path, `/` -> `-`.
            literal.push((run.to_string(), "<run>".to_string(), false));
            literal.push((run.replace('/', "-"), "<run>".to_string(), false));
        }
        literal.extend(secrets.iter().filter(|s| !s.is_empty()).map(|s| (s.clone(), "<secret>".to_string(), false)));
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
        if !fake_mcp.0.is_empty() {
            literal.push((fake_mcp.0.clone(), "<fake-mcp>".to_string(), false));
            // The same in a TOML `-c mcp_servers.S.args=[...]` value.
            if !fake_mcp.1.is_empty() {
                let quoted: Vec<String> = fake_mcp.1.iter().map(|a| format!("{a:?}, ")).collect();
                literal.push((format!("args=[{}", quoted.concat()), "args=[".to_string(), false));
            }
        }
        literal.sort_by(|a, b| b.0.len().cmp(&a.0.len()));
        Normalizer { literal, counters: BTreeMap::new(), host, fake_mcp }
    }

    /// Learns the run-time ids in `v` (call on every message, in recording
    /// order, before [`Normalizer::value`]).
    pub fn learn(&mut self, v: &Value) {
        self.learn_at(v, "")
    }

    fn learn_at(&mut self, v: &Value, parent: &str) {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    let path = format!("/{parent}/{k}");
                    let kind = IDS.iter().find(|(name, ..)| *name == k || *name == path).map(|(_, kind, _)| *kind);
                    if let (Some(kind), Some(s)) = (kind, x.as_str()) {
                        self.id(kind, s);
                    }
                    self.learn_at(x, k);
                }
            }
            Value::Array(items) => items.iter().for_each(|x| self.learn_at(x, parent)),
            _ => {}
        }
    }

    fn id(&mut self, kind: &'static str, value: &str) {
        // Short values ("0", "") would match inside unrelated text.
        if value.len() < 4 || self.literal.iter().any(|(l, ..)| l == value) {
            return;
        }
        let n = self.counters.entry(kind).or_insert(0);
        *n += 1;
        // An id is a whole token: a process id's digits inside a UUID are
        // not that process (codex 0.152.1 seed 21 case 105 read as flaky).
        self.literal.push((value.to_string(), format!("<{kind} {n}>"), true));
        // Longest first, so an id never matches inside a longer one.
        self.literal.sort_by(|a, b| b.0.len().cmp(&a.0.len()));
    }

    /// The normalized copy of `v`.
    pub fn value(&self, v: &Value) -> Value {
        self.at(v, "")
    }

    fn at(&self, v: &Value, key: &str) -> Value {
        match v {
            Value::Object(map) => {
                let mut out: Map<_, _> = map.iter().map(|(k, x)| (k.clone(), self.at(x, k))).collect();
                self.server_command(map, &mut out);
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(|x| self.at(x, key)).collect()),
            Value::Number(_) => number_rule(key).map(|p| json!(p)).unwrap_or_else(|| v.clone()),
            Value::String(s) => json!(self.field(key, s).unwrap_or_else(|| self.text(s))),
            _ => v.clone(),
        }
    }

    /// A stdio server declaration starting the fake MCP server.
    fn server_command(&self, raw: &Map<String, Value>, out: &mut Map<String, Value>) {
        let (program, prefix) = &self.fake_mcp;
        if program.is_empty() || raw.get("command").and_then(Value::as_str) != Some(program.as_str()) {
            return;
        }
        if let Some(args) = out.get_mut("args").and_then(Value::as_array_mut) {
            if args.iter().zip(prefix).all(|(a, p)| a == p) && args.len() >= prefix.len() {
                args.drain(..prefix.len());
            }
        }
    }

    fn field(&self, key: &str, s: &str) -> Option<String> {
        match key {
            "userAgent" => Some(self.text(s.split(' ').next().unwrap_or(""))),
            "serverName" if self.host.as_deref() == Some(s) => Some("<host>".into()),
            "timestamp" => Some("<time>".into()),
            _ => None,
        }
    }

    /// Every text rule applied to one string.
    pub fn text(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (lit, with, whole) in &self.literal {
            if !out.contains(lit.as_str()) {
                continue;
            }
            out = if *whole { replace_tokens(&out, lit, with) } else { out.replace(lit.as_str(), with) };
        }
        for (re, with) in text_rules() {
            if re.is_match(&out) {
                out = re.replace_all(&out, *with).into_owned();
            }
        }
        out
    }
}

/// `text` with each `lit` that no letter or digit adjoins replaced by `with`.
fn replace_tokens(text: &str, lit: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(lit) {
        let before = rest[..i].chars().last().or_else(|| out.chars().last());
        let after = rest[i + lit.len()..].chars().next();
        let joined = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
        out.push_str(&rest[..i]);
        out.push_str(if joined(before) || joined(after) { lit } else { with });
        rest = &rest[i + lit.len()..];
    }
    out.push_str(rest);
    out
}

fn number_rule(key: &str) -> Option<&'static str> {
    NUMBERS
        .iter()
        .find(|(name, ..)| match name.strip_prefix('*') {
            Some(suffix) => key.ends_with(suffix) && key != "progressToken",
            None => *name == key,
        })
        .map(|(_, placeholder, _)| *placeholder)
}

/// The rules, for the recordings' README: one `what: why` line each.
pub fn describe() -> Vec<String> {
    let numbers = NUMBERS.iter().map(|(k, p, why)| format!("number `{k}` -> {p}: {why}"));
    let ids = IDS.iter().map(|(k, kind, why)| format!("id `{k}` -> <{kind} N>: {why}"));
    let text = TEXT.iter().map(|(p, r, why)| format!("text /{p}/ -> {r}: {why}"));
    let fields = FIELDS.iter().map(|(k, why)| format!("field `{k}`: {why}"));
    numbers.chain(ids).chain(text).chain(fields).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_replaced_only_as_a_whole_token() {
        let mut n = Normalizer::new("", &[], (String::new(), Vec::new()));
        let msg = json!({"item": {"processId": "28371", "id": "01a24df7-a99f-77b3-9678-28371b062ed0", "note": "pid 28371."}});
        n.learn(&msg);
        assert_eq!(n.value(&msg), json!({"item": {"processId": "<process 1>", "id": "<uuid>", "note": "pid <process 1>."}}));
    }

    #[test]
    fn run_paths_secrets_ids_ports_and_times_are_replaced() {
        let mut n = Normalizer::new("/tmp/conformance-abc", &["canary-1-ff".into()], ("/bin/cli".into(), vec!["fake-mcp".into()]));
        let msg = json!({
            "params": {"threadId": "01a2-thread-xyz", "cwd": "/tmp/conformance-abc/work", "emittedAtMs": 17,
                       "url": "http://127.0.0.1:4242/mcp", "auth": "Bearer canary-1-ff", "progressToken": 3,
                       "windowId": "01a2-thread-xyz:0", "memory": "/h/projects/-tmp-conformance-abc-work/m",
                       "item": {"id": "8c139d8e-dd92-4164-bbb4-ddc1359cebca", "inputTokens": 10},
                       "text": "Wall time: 0.0022 seconds\nOutput:"},
            "files": {"command": "/bin/cli", "args": ["fake-mcp", "stdio"]},
        });
        n.learn(&msg);
        assert_eq!(
            n.value(&msg),
            json!({
                "params": {"threadId": "<thread 1>", "cwd": "<run>/work", "emittedAtMs": "<time>",
                           "url": "http://127.0.0.1:<port>/mcp", "auth": "Bearer <secret>", "progressToken": 3,
                           "windowId": "<thread 1>:0", "memory": "/h/projects/<run>-work/m",
                           "item": {"id": "<uuid>", "inputTokens": "<n>"},
                           "text": "Wall time: <T> seconds\nOutput:"},
                "files": {"command": "<fake-mcp>", "args": ["stdio"]},
            })
        );
    }

    #[test]
    fn ids_are_numbered_per_kind_in_order_of_appearance() {
        let mut n = Normalizer::new("", &[], Default::default());
        let a = json!({"thread": {"id": "thread-a"}, "turnId": "turn-a", "x": {"threadId": "thread-b"}});
        n.learn(&a);
        let v = n.value(&json!(["thread-a", "thread-b", "turn-a", "thread-b/turn-a"]));
        assert_eq!(v, json!(["<thread 1>", "<thread 2>", "<turn 1>", "<thread 2>/<turn 1>"]));
        assert_eq!(n.value(&json!({"userAgent": "driver/1.0 (Debian 12; x86_64) xterm"})), json!({"userAgent": "driver/1.0"}));
    }
}
