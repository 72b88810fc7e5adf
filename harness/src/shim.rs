//! The language-neutral driver protocol (docs/driver-protocol.md): a
//! [`ShimDriver`] that runs a shim program per trial and speaks to it over
//! JSON lines, and [`serve`], which exposes any in-process [`Driver`] as a shim.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::Instant;

use fakes::version::VersionRange;
use fakes::wire::{read_line, Line, MAX_LINE};
use serde_json::{json, Value};

use crate::driver::{Driver, Failure, Host, HostAnswer, Launch, Prompt, ServerSpec, TurnOutput};
use crate::command::FakeCommand;
use crate::stop::NoMessage;

pub const PROTOCOL: u64 = 1;
pub const SCHEMA: &str = include_str!("../../docs/driver-protocol.schema.json");

/// Kinds of shim messages, each a `$defs` entry of the schema.
const KINDS: [&str; 6] = ["response", "errorResponse", "hostDecide", "hostCallTool", "hostInterrupt", "event"];

/// One validator per message kind, so an error names the field at fault
/// instead of "matches none of oneOf".
fn validator(kind: &str) -> &'static jsonschema::Validator {
    static V: OnceLock<Vec<jsonschema::Validator>> = OnceLock::new();
    let all = V.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA).expect("the bundled schema is JSON");
        KINDS
            .iter()
            .map(|k| {
                let mut one = schema.clone();
                if let Some(o) = one.as_object_mut() {
                    o.remove("oneOf");
                    o.insert("$ref".into(), json!(format!("#/$defs/{k}")));
                }
                jsonschema::validator_for(&one).expect("the bundled schema is valid")
            })
            .collect()
    });
    &all[KINDS.iter().position(|k| *k == kind).unwrap_or(0)]
}

/// Why a shim message is not a valid protocol message, if it is not.
pub fn check_message(msg: &Value) -> Result<(), String> {
    let kind = match (msg.get("method").and_then(Value::as_str), msg.get("error")) {
        (Some("host/decide"), _) => "hostDecide",
        (Some("host/call_tool"), _) => "hostCallTool",
        (Some("host/interrupt"), _) => "hostInterrupt",
        (Some("event"), _) => "event",
        (Some(other), _) => return Err(format!("at `/method`: `{other}` is not a shim-to-harness method")),
        (None, Some(_)) => "errorResponse",
        (None, None) => "response",
    };
    let v = validator(kind);
    if v.is_valid(msg) {
        return Ok(());
    }
    let errors: Vec<String> = v.iter_errors(msg).take(3).map(|e| format!("at `{}`: {}", e.instance_path(), e)).collect();
    Err(errors.join("; "))
}

/// A driver behind a shim process, started when the trial starts.
pub struct ShimDriver {
    name: String,
    capabilities: BTreeSet<String>,
    provider_versions: BTreeMap<String, VersionRange>,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    next_id: u64,
    /// Messages after the first bad one are not trusted.
    broken: Option<Failure>,
    killed: bool,
    stderr_path: std::path::PathBuf,
    _stderr_dir: tempfile::TempDir,
    /// What is recorded of the conversation, see [`Record`].
    record: Record,
}

/// The conversation with the shim, written to the trial's `driver/`
/// directory: `protocol.jsonl` (both directions), `events.jsonl` and, when
/// the shim is stopped, `stderr`. Lines before the trial names the directory
/// (the `hello` exchange) wait in memory. Secret values the harness hands the
/// shim are written as `[secret]`; whatever the shim says is kept as it
/// said it, so a leak in it is caught like any other.
#[derive(Default)]
struct Record {
    dir: Option<std::path::PathBuf>,
    pending: Vec<(&'static str, String)>,
    secrets: Vec<String>,
}

impl Record {
    fn write(&mut self, file: &'static str, line: String) {
        match &self.dir {
            None => self.pending.push((file, line)),
            Some(dir) => {
                let path = dir.join(file);
                let f = std::fs::OpenOptions::new().create(true).append(true).open(path);
                if let Ok(mut f) = f {
                    let _ = writeln!(f, "{line}");
                }
            }
        }
    }

    fn message(&mut self, dir: &str, msg: &Value) {
        let mut line = json!({"dir": dir, "msg": msg}).to_string();
        if dir == "harness" {
            for s in &self.secrets {
                line = line.replace(s.as_str(), "[secret]");
            }
        }
        self.write("protocol.jsonl", line);
    }

    fn start(&mut self, dir: &std::path::Path) {
        if std::fs::create_dir_all(dir).is_ok() {
            self.dir = Some(dir.to_path_buf());
            for (file, line) in std::mem::take(&mut self.pending) {
                self.write(file, line);
            }
        }
    }

    /// Keeps the last MiB of the shim's stderr beside its messages.
    fn stderr(&self, from: &std::path::Path) {
        let (Some(dir), Ok(bytes)) = (&self.dir, std::fs::read(from)) else { return };
        let tail = &bytes[bytes.len().saturating_sub(1 << 20)..];
        let _ = std::fs::write(dir.join("stderr"), tail);
    }
}

/// The last lines of a trial's shim stderr, for its failed verdict.
pub fn stderr_tail(run_dir: &std::path::Path, lines: usize) -> Option<String> {
    let text = std::fs::read_to_string(run_dir.join("driver/stderr")).ok()?;
    let tail = last_lines(&text, lines);
    (!tail.is_empty()).then(|| tail.join("\n"))
}

/// The last `n` lines of `text` that are not blank, in order.
fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let mut tail: Vec<&str> = text.lines().rev().filter(|l| !l.trim().is_empty()).take(n).collect();
    tail.reverse();
    tail
}

impl ShimDriver {
    /// Starts `command` (program and arguments) under its own supervisor
    /// (see [`crate::contain`]) and says hello. The thread that starts it
    /// must be the one that drops it: the supervisor ends with that thread.
    pub fn start(command: &[String], supervisor: &FakeCommand) -> Result<ShimDriver, Failure> {
        let (program, args) = command.split_first().ok_or_else(|| Failure::new("shim-error", "empty shim command"))?;
        let stderr_dir = tempfile::tempdir().map_err(|e| Failure::new("harness-error", e.to_string()))?;
        let stderr_path = stderr_dir.path().join("stderr");
        let stderr = std::fs::File::create(&stderr_path).map_err(|e| Failure::new("harness-error", e.to_string()))?;
        let mut cmd = crate::contain::command(supervisor, program, args);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(stderr);
        let mut child = cmd.spawn().map_err(|e| Failure::new("shim-error", format!("cannot start shim `{program}`: {e}")))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or_else(|| Failure::new("shim-error", "no stdout"))?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let line = read_line(&mut r, MAX_LINE).unwrap_or(Line::Eof);
                let eof = line == Line::Eof;
                if tx.send(line).is_err() || eof {
                    break;
                }
            }
        });
        let mut shim = ShimDriver {
            name: program.clone(),
            capabilities: BTreeSet::new(),
            provider_versions: BTreeMap::new(),
            child,
            stdin,
            lines,
            next_id: 0,
            broken: None,
            killed: false,
            stderr_path,
            _stderr_dir: stderr_dir,
            record: Record::default(),
        };
        let hello = shim.call("hello", json!({"protocol": PROTOCOL}), None)?;
        shim.name = hello["name"].as_str().unwrap_or(program).to_string();
        shim.capabilities = hello["capabilities"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
            .unwrap_or_default();
        shim.provider_versions = provider_versions(&hello["provider_versions"])?;
        Ok(shim)
    }

    fn send(&mut self, msg: &Value) -> Result<(), Failure> {
        self.record.message("harness", msg);
        let stdin = self.stdin.as_mut().ok_or_else(|| Failure::new("shim-exited", "shim input closed"))?;
        let mut line = msg.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).and_then(|_| stdin.flush()).map_err(|_| self.dead("shim closed its input"))
    }

    /// One request, serving host requests from the shim until its answer.
    fn call(&mut self, method: &str, params: Value, mut host: Option<&mut dyn Host>) -> Result<Value, Failure> {
        if let Some(f) = &self.broken {
            return Err(f.clone());
        }
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + crate::limits::trial_timeout();
        loop {
            let line = match crate::stop::recv_until(&self.lines, deadline) {
                Ok(l) => l,
                Err(NoMessage::Stopped) => return Err(self.fail("interrupted", format!("the run was interrupted during `{method}`"))),
                Err(NoMessage::TimedOut) => return Err(self.fail("timeout", format!("no answer to `{method}` in time"))),
                Err(NoMessage::Disconnected) => Line::Eof,
            };
            let msg = match line {
                Line::Json(v) => v,
                Line::Eof => return Err(self.dead(&format!("shim exited during `{method}`"))),
                Line::Garbage { text, error } => {
                    return Err(self.fail("protocol-error", format!("shim wrote a line that is not JSON ({error}): {text}")))
                }
                Line::TooLong { len } => return Err(self.fail("protocol-error", format!("shim wrote a {len}-byte line"))),
            };
            self.record.message("shim", &msg);
            if let Err(e) = check_message(&msg) {
                return Err(self.fail("protocol-error", format!("invalid message {e}: {}", truncate(&msg.to_string()))));
            }
            match msg.get("method").and_then(Value::as_str) {
                Some("event") => self.record.write("events.jsonl", msg["params"].to_string()),
                Some(m) => {
                    let shim_id = msg["id"].clone();
                    let reply = match host.as_deref_mut() {
                        None => json!({"jsonrpc": "2.0", "id": shim_id, "error": {"code": -32600, "message": format!("`{m}` outside a turn")}}),
                        Some(h) => match answer_host(h, m, &msg["params"]) {
                            Ok(result) => json!({"jsonrpc": "2.0", "id": shim_id, "result": result}),
                            Err(e) => json!({"jsonrpc": "2.0", "id": shim_id, "error": {"code": -32602, "message": e}}),
                        },
                    };
                    self.send(&reply)?;
                }
                None if msg["id"] != json!(id) => {
                    return Err(self.fail("protocol-error", format!("answer to unknown request id {} (expected {id})", msg["id"])));
                }
                None => {
                    if let Some(err) = msg.get("error") {
                        let kind = match err["code"].as_i64() {
                            Some(-32601) => "not-testable".to_string(),
                            _ => err.pointer("/data/kind").and_then(Value::as_str).unwrap_or("driver-error").to_string(),
                        };
                        return Err(Failure::new(kind, err["message"].as_str().unwrap_or("").to_string()));
                    }
                    return Ok(msg["result"].clone());
                }
            }
        }
    }

    /// Marks the shim broken, kills it, and describes why.
    fn fail(&mut self, kind: &str, message: String) -> Failure {
        let f = Failure::new(kind, message);
        self.broken = Some(f.clone());
        self.kill();
        f
    }

    fn dead(&mut self, what: &str) -> Failure {
        // Its output closed first; give the exit status a moment to arrive.
        let deadline = Instant::now() + std::time::Duration::from_secs(2);
        let mut status = self.child.try_wait().ok().flatten();
        while status.is_none() && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            status = self.child.try_wait().ok().flatten();
        }
        let code = match status {
            Some(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                (Some(c), _) => format!("exit code {c}"),
                (None, Some(sig)) => format!("killed by signal {sig}"),
                (None, None) => "ended".into(),
            },
            None => "still running".into(),
        };
        let stderr = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let tail = last_lines(&stderr, 5).join(" | ");
        self.fail("shim-exited", format!("{what} ({code}); stderr: {tail}"))
    }

    /// Ends the shim and everything it started (its supervisor kills the
    /// whole tree), once.
    fn kill(&mut self) {
        self.stdin = None;
        if self.killed {
            return;
        }
        self.killed = true;
        crate::contain::end(&mut self.child);
        self.record.stderr(&self.stderr_path);
    }
}

impl Drop for ShimDriver {
    fn drop(&mut self) {
        self.kill();
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(300).collect()
}

fn answer_host(host: &mut dyn Host, method: &str, params: &Value) -> Result<Value, String> {
    match method {
        "host/decide" => {
            let prompt: Prompt = serde_json::from_value(params["prompt"].clone()).map_err(|e| e.to_string())?;
            let answer = host.decide(&prompt);
            let word = match answer {
                HostAnswer::Accept => "accept",
                HostAnswer::Decline => "decline",
                HostAnswer::Cancel => "cancel",
            };
            let mut result = json!({"answer": word});
            if answer == HostAnswer::Accept {
                if let Some(edited) = host.edited_input(&prompt) {
                    result["updated_input"] = edited;
                }
            }
            Ok(result)
        }
        "host/call_tool" => {
            let tool = params["tool"].as_str().unwrap_or("");
            Ok(json!({"result": host.call_tool(tool, &params["arguments"])}))
        }
        "host/interrupt" => {
            let event: crate::driver::GatewayEvent = serde_json::from_value(params["event"].clone()).map_err(|e| e.to_string())?;
            Ok(json!({"answer": host.interrupt(&event)}))
        }
        other => Err(format!("unknown method `{other}`")),
    }
}

/// `hello`'s `provider_versions`: provider -> version range (`>=2.1.332`,
/// `>=0.146.0 <0.171.0`); absent means every version of every provider.
fn provider_versions(v: &Value) -> Result<BTreeMap<String, VersionRange>, Failure> {
    let Some(map) = v.as_object() else {
        return if v.is_null() { Ok(BTreeMap::new()) } else { Err(Failure::new("protocol-error", "hello `provider_versions` is not an object")) };
    };
    map.iter()
        .map(|(provider, range)| {
            let range = range.as_str().and_then(|r| r.parse::<VersionRange>().ok());
            range.map(|r| (provider.clone(), r)).ok_or_else(|| {
                Failure::new("protocol-error", format!("hello `provider_versions.{provider}` is not a version range like \">=2.1.332\""))
            })
        })
        .collect()
}

fn parse<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, Failure> {
    serde_json::from_value(v).map_err(|e| Failure::new("protocol-error", format!("bad `{what}` result: {e}")))
}

impl Driver for ShimDriver {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn capabilities(&self) -> BTreeSet<String> {
        self.capabilities.clone()
    }

    fn provider_versions(&self) -> BTreeMap<String, VersionRange> {
        self.provider_versions.clone()
    }

    fn fingerprint(&mut self, servers: &[ServerSpec], global: &str) -> Result<String, Failure> {
        let r = self.call("fingerprint", json!({"servers": servers, "global": global}), None)?;
        r["fingerprint"].as_str().map(String::from).ok_or_else(|| Failure::new("protocol-error", "fingerprint result has no `fingerprint`"))
    }

    fn open(&mut self, launch: &Launch) -> Result<(), Failure> {
        self.record.secrets.extend(launch.process.secrets.values().cloned());
        self.call("open", json!({"launch": launch}), None).map(|_| ())
    }

    fn turn(&mut self, prompt: &str, scoped: &[ServerSpec], host: &mut dyn Host) -> Result<TurnOutput, Failure> {
        let r = self.call("turn", json!({"prompt": prompt, "scoped": scoped}), Some(host))?;
        parse(r, "turn")
    }

    fn resume(&mut self, launch: &Launch) -> Result<(), Failure> {
        self.record.secrets.extend(launch.process.secrets.values().cloned());
        self.call("resume", json!({"launch": launch}), None).map(|_| ())
    }

    fn permission_mode(&mut self, mode: &str) -> Result<(), Failure> {
        self.call("permission_mode", json!({"mode": mode}), None).map(|_| ())
    }

    fn record_to(&mut self, dir: &std::path::Path) {
        self.record.start(dir);
    }

    fn close(&mut self) {
        let _ = self.call("close", json!({}), None);
        self.kill();
    }
}

// ---- serving an in-process driver as a shim ---------------------------------

/// Serves `driver` over the protocol on `input`/`output` until `close` or EOF.
pub fn serve(driver: &mut dyn Driver, input: impl BufRead, mut output: impl Write) -> i32 {
    let mut input = input;
    loop {
        let msg = match read_line(&mut input, MAX_LINE) {
            Ok(Line::Json(v)) => v,
            Ok(Line::Eof) | Err(_) => return 0,
            Ok(_) => continue,
        };
        let id = msg["id"].clone();
        let params = msg["params"].clone();
        let method = msg["method"].as_str().unwrap_or("").to_string();
        let result: Result<Value, Failure> = match method.as_str() {
            "hello" => {
                let mut hello = json!({"name": driver.name(), "capabilities": driver.capabilities()});
                let versions = driver.provider_versions();
                if !versions.is_empty() {
                    hello["provider_versions"] = versions.iter().map(|(p, r)| (p.clone(), json!(r.to_string()))).collect();
                }
                Ok(hello)
            }
            "fingerprint" => parse::<Vec<ServerSpec>>(params["servers"].clone(), "servers")
                .and_then(|s| driver.fingerprint(&s, params["global"].as_str().unwrap_or("")))
                .map(|fp| json!({"fingerprint": fp})),
            "open" => parse::<Launch>(params["launch"].clone(), "launch").and_then(|l| driver.open(&l)).map(|_| json!({})),
            "resume" => parse::<Launch>(params["launch"].clone(), "launch").and_then(|l| driver.resume(&l)).map(|_| json!({})),
            "permission_mode" => driver.permission_mode(params["mode"].as_str().unwrap_or("")).map(|_| json!({})),
            "turn" => {
                let scoped = parse::<Vec<ServerSpec>>(params["scoped"].clone(), "scoped");
                scoped.and_then(|s| {
                    let mut host = RemoteHost { input: &mut input, output: &mut output, next_id: 0, edited: None };
                    driver.turn(params["prompt"].as_str().unwrap_or(""), &s, &mut host)
                })
                .map(|out| serde_json::to_value(out).unwrap_or(json!({})))
            }
            "close" => {
                driver.close();
                let _ = write_line(&mut output, &json!({"jsonrpc": "2.0", "id": id, "result": {}}));
                return 0;
            }
            _ => Err(Failure::new("method-not-found", format!("unknown method `{method}`"))),
        };
        let reply = match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err(f) if f.kind == "method-not-found" => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": f.message}}),
            Err(f) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": 1, "message": f.message, "data": {"kind": f.kind}}}),
        };
        if write_line(&mut output, &reply).is_err() {
            return 1;
        }
    }
}

fn write_line(out: &mut impl Write, v: &Value) -> std::io::Result<()> {
    fakes::wire::write_message(out, v)
}

/// The harness, reached back over the protocol during a turn.
struct RemoteHost<'a, R: BufRead, W: Write> {
    input: &'a mut R,
    output: &'a mut W,
    next_id: u64,
    /// The `updated_input` of the last accepted decision.
    edited: Option<Value>,
}

impl<R: BufRead, W: Write> RemoteHost<'_, R, W> {
    fn ask(&mut self, method: &str, params: Value) -> Option<Value> {
        self.next_id += 1;
        let id = format!("host-{}", self.next_id);
        write_line(self.output, &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).ok()?;
        loop {
            match read_line(self.input, MAX_LINE).ok()? {
                Line::Json(v) if v["id"] == json!(id) => return v.get("result").cloned(),
                Line::Eof => return None,
                _ => {}
            }
        }
    }
}

impl<R: BufRead, W: Write> Host for RemoteHost<'_, R, W> {
    fn decide(&mut self, prompt: &Prompt) -> HostAnswer {
        let r = self.ask("host/decide", json!({"prompt": prompt}));
        self.edited = r.as_ref().and_then(|r| r.get("updated_input")).cloned();
        match r.as_ref().and_then(|r| r["answer"].as_str()) {
            Some("accept") => HostAnswer::Accept,
            Some("cancel") => HostAnswer::Cancel,
            _ => HostAnswer::Decline,
        }
    }

    fn edited_input(&mut self, _prompt: &Prompt) -> Option<Value> {
        self.edited.take()
    }

    fn call_tool(&mut self, tool: &str, arguments: &Value) -> Value {
        self.ask("host/call_tool", json!({"tool": tool, "arguments": arguments}))
            .map(|r| r["result"].clone())
            .unwrap_or_else(|| json!({"content": [], "isError": true}))
    }

    fn interrupt(&mut self, event: &crate::driver::GatewayEvent) -> crate::driver::ResumeAnswer {
        self.ask("host/interrupt", json!({"event": event}))
            .and_then(|r| serde_json::from_value(r["answer"].clone()).ok())
            .unwrap_or(crate::driver::ResumeAnswer::Deny)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_accepts_good_and_names_the_bad_field() {
        assert!(check_message(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})).is_ok());
        assert!(check_message(&json!({"jsonrpc": "2.0", "id": 2, "method": "host/decide", "params": {"prompt": {"type": "command"}}})).is_ok());
        let e = check_message(&json!({"jsonrpc": "2.0", "id": 2, "method": "host/decide", "params": {"prompt": {"type": "coffee"}}})).unwrap_err();
        assert!(e.contains("/params/prompt"), "{e}");
        assert!(check_message(&json!({"jsonrpc": "1.0", "id": 1, "result": {}})).is_err());
        assert!(check_message(&json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}})).is_err());
    }

    #[test]
    fn provider_versions_are_ranges_or_a_protocol_error() {
        assert!(provider_versions(&Value::Null).unwrap().is_empty());
        let ranges = provider_versions(&json!({"claude": ">=2.1.332"})).unwrap();
        assert!(ranges["claude"].contains(fakes::version::Version::new(2, 1, 332)));
        assert!(!ranges["claude"].contains(fakes::version::Version::new(2, 1, 266)));
        assert_eq!(provider_versions(&json!({"claude": "soon"})).unwrap_err().kind, "protocol-error");
        assert!(provider_versions(&json!(["claude"])).is_err());
    }

    #[test]
    fn a_served_driver_says_which_versions_it_drives() {
        let hello = |driver: &mut dyn Driver| {
            let mut out = Vec::new();
            serve(driver, &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\",\"params\":{}}\n"[..], &mut out);
            serde_json::from_slice::<Value>(&out).unwrap()["result"].clone()
        };
        let sdk = hello(&mut crate::reference::ReferenceDriver::claude_sdk());
        assert_eq!(sdk["provider_versions"], json!({"claude": ">=2.1.326"}));
        assert_eq!(provider_versions(&sdk["provider_versions"]).unwrap().len(), 1);
        assert_eq!(hello(&mut crate::reference::ReferenceDriver::new()).get("provider_versions"), None);
    }
}
