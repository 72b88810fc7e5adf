//! A run directory for driving the fake `codex app-server` directly, without
//! any driver: one stdio MCP server `lab`, a scripted model, config.toml and
//! `-c` overrides. Shared by the fake Codex test files.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

pub const FAKE_CODEX: &str = env!("CARGO_BIN_EXE_fake-codex");
pub const FAKE_MCP: &str = env!("CARGO_BIN_EXE_fake-mcp");

pub struct Session {
    pub child: Child,
    pub stdin: ChildStdin,
    pub lines: Receiver<Value>,
    pub next_id: u64,
    pub _dir: tempfile::TempDir,
    pub dir: PathBuf,
    /// Every message the fake sent, in order.
    pub seen: Vec<Value>,
}

/// A run directory with one stdio MCP server `lab` exposing `tools`, a
/// script whose first turn calls `calls` in order, and `config` appended to
/// config.toml.
pub fn start(version: &str, tools: Value, calls: &[&str], config: &str, overrides: &[&str]) -> Result<Session, (i32, String)> {
    start_with(version, tools, calls, config, overrides, json!({"experimentalApi": true}))
}

pub fn start_with(
    version: &str,
    tools: Value,
    calls: &[&str],
    config: &str,
    overrides: &[&str],
    capabilities: Value,
) -> Result<Session, (i32, String)> {
    start_turns(version, tools, &[calls], config, overrides, capabilities)
}

/// [`start_with`], the script playing one turn per entry of `turns`.
pub fn start_turns(
    version: &str,
    tools: Value,
    turns: &[&[&str]],
    config: &str,
    overrides: &[&str],
    capabilities: Value,
) -> Result<Session, (i32, String)> {
    let tmp = tempfile::tempdir().unwrap();
    write_run(tmp.path(), version, tools, calls_turns(turns, |step| json!({"n": step})), config);
    launch(tmp, overrides, capabilities)
}

/// One turn per entry of `turns`, each calling its `lab` tools in order,
/// steps numbered through; `arguments(step)` gives each call's arguments.
pub fn calls_turns(turns: &[&[&str]], arguments: impl Fn(usize) -> Value) -> Vec<Value> {
    let mut step = 0;
    turns
        .iter()
        .map(|calls| {
            let actions: Vec<Value> = calls
                .iter()
                .map(|t| {
                    step += 1;
                    json!({"kind": "tool_call", "step": step - 1, "server": "lab", "tool": t, "arguments": arguments(step - 1)})
                })
                .collect();
            json!({"actions": actions})
        })
        .collect()
}

/// Writes a run directory: the `lab` server's catalog (`tools`), the
/// script playing `turns` (each `{"actions": [...]}`), and
/// home/config.toml attaching `lab` over stdio, `config` appended.
pub fn write_run(dir: &Path, version: &str, tools: Value, turns: Vec<Value>, config: &str) {
    std::fs::create_dir_all(dir.join("home")).unwrap();
    std::fs::write(dir.join("lab.json"), json!({"server": "lab", "tools": tools}).to_string()).unwrap();
    let script = json!({"version": version, "transcript": dir.join("codex.jsonl"), "state": dir.join("state.json"),
                        "turns": turns});
    std::fs::write(dir.join("script.json"), script.to_string()).unwrap();
    let toml = format!(
        "[mcp_servers.lab]\ncommand = {:?}\nargs = [\"stdio\", \"--catalog\", {:?}, \"--record\", {:?}]\n{config}",
        FAKE_MCP,
        dir.join("lab.json").display().to_string(),
        dir.join("lab.jsonl").display().to_string()
    );
    std::fs::write(dir.join("home/config.toml"), toml).unwrap();
}

/// Starts a fake app-server on the run directory `tmp` and initializes it.
pub fn launch(tmp: tempfile::TempDir, overrides: &[&str], capabilities: Value) -> Result<Session, (i32, String)> {
    let dir = tmp.path().to_path_buf();
    let mut cmd = Command::new(FAKE_CODEX);
    cmd.arg("--run").arg(dir.join("script.json"));
    for o in overrides {
        cmd.arg("-c").arg(o);
    }
    let mut child = cmd
        .arg("app-server")
        .env("CODEX_HOME", dir.join("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let mut s = Session { child, stdin, lines, next_id: 0, _dir: tmp, dir, seen: Vec::new() };
    match s.request("initialize", json!({"clientInfo": {"name": "t", "version": "0"}, "capabilities": capabilities})) {
        Some(_) => {
            s.send(json!({"method": "initialized"}));
            Ok(s)
        }
        None => {
            let status = s.child.wait().unwrap();
            let mut err = String::new();
            std::io::Read::read_to_string(s.child.stderr.as_mut().unwrap(), &mut err).unwrap();
            Err((status.code().unwrap_or(-1), err))
        }
    }
}

impl Session {
    pub fn send(&mut self, msg: Value) {
        let _ = writeln!(self.stdin, "{msg}");
    }

    pub fn next(&mut self) -> Option<Value> {
        let m = self.lines.recv_timeout(Duration::from_secs(10)).ok()?;
        self.seen.push(m.clone());
        Some(m)
    }

    /// Ends this app-server (stdin closed) and starts another on the same
    /// run directory, as a driver relaunching it would.
    pub fn relaunch(mut self, capabilities: Value) -> Session {
        drop(self.stdin);
        let _ = self.child.wait();
        launch(self._dir, &[], capabilities).unwrap()
    }

    /// The notifications seen so far with `method`, their params.
    pub fn notes(&self, method: &str) -> Vec<Value> {
        self.seen.iter().filter(|m| m["method"] == method && m.get("id").is_none()).map(|m| m["params"].clone()).collect()
    }

    /// Sends a request and returns its response (`result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Option<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"id": id, "method": method, "params": params}));
        loop {
            let m = self.next()?;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return Some(m);
            }
        }
    }

    pub fn thread(&mut self, params: Value) -> Value {
        self.request("thread/start", params).unwrap()
    }

    /// Runs the scripted turn, answering each server request with `answer`;
    /// returns (server requests seen, completed mcpToolCall items).
    pub fn turn(&mut self, thread_id: &str, answer: impl Fn(&Value) -> Value) -> (Vec<Value>, Vec<Value>) {
        self.request("turn/start", json!({"threadId": thread_id, "input": []})).unwrap();
        let (mut requests, mut items) = (Vec::new(), Vec::new());
        loop {
            let m = self.next().expect("turn did not complete");
            match (m.get("method").and_then(Value::as_str), m.get("id")) {
                (Some("turn/completed"), _) => return (requests, items),
                (Some("item/completed"), None) if m["params"]["item"]["type"] == "mcpToolCall" => items.push(m["params"]["item"].clone()),
                (Some(_), Some(id)) => {
                    let id = id.clone();
                    self.send(json!({"id": id, "result": answer(&m)}));
                    requests.push(m);
                }
                _ => {}
            }
        }
    }

    /// The transcript's `event` records of one kind, in order.
    pub fn events(&self, kind: &str) -> Vec<Value> {
        fakes::wire::read_jsonl(&self.dir.join("codex.jsonl")).unwrap().into_iter().filter(|e| e["event"] == kind).collect()
    }

    pub fn outcomes(&self) -> Vec<Value> {
        fakes::wire::read_jsonl(&self.dir.join("codex.jsonl")).unwrap().into_iter().filter(|e| e["event"] == "outcome").collect()
    }

    pub fn server_calls(&self) -> usize {
        fakes::wire::read_jsonl(&self.dir.join("lab.jsonl")).unwrap_or_default().iter().filter(|e| e["event"] == "tools/call").count()
    }
}

pub fn plain() -> Value {
    json!([{"name": "plain"}, {"name": "ro", "annotations": {"readOnlyHint": true}}])
}

pub fn accept(_: &Value) -> Value {
    json!({"action": "accept", "content": {}})
}

pub fn decline(_: &Value) -> Value {
    json!({"action": "decline"})
}

pub fn thread_id(r: &Value) -> String {
    r["result"]["thread"]["id"].as_str().unwrap().to_string()
}
