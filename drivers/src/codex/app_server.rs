//! A minimal `codex app-server` client: one child process, newline JSON-RPC
//! on its stdio, a reader thread so every wait has a deadline.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::host::DriverError;

pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct AppServer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Result<Value, String>>,
    next_id: u64,
}

/// What the client reads: a response to one of its requests, a server
/// request, or a notification.
pub enum Incoming {
    Response { id: Value, result: Result<Value, Value> },
    Request { id: Value, method: String, params: Value },
    Notification { method: String, params: Value },
}

impl AppServer {
    pub fn spawn(
        binary: &Path,
        args: &[String],
        home: &Path,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<AppServer, DriverError> {
        let mut child = Command::new(binary)
            .args(args)
            .env("CODEX_HOME", home)
            .envs(env)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| DriverError::new("launch-failed", format!("cannot start {}: {e}", binary.display())))?;
        let stdin = child.stdin.take().ok_or_else(|| DriverError::new("launch-failed", "no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| DriverError::new("launch-failed", "no stdout"))?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                let parsed = serde_json::from_str(&line).map_err(|e| format!("bad JSON from app-server: {e}"));
                if tx.send(parsed).is_err() {
                    break;
                }
            }
        });
        Ok(AppServer { child, stdin, lines, next_id: 0 })
    }

    pub fn send(&mut self, msg: &Value) -> Result<(), DriverError> {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|_| self.stdin.flush())
            .map_err(|e| DriverError::new("provider-exited", format!("app-server closed its input: {e}")))
    }

    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, DriverError> {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        Ok(id)
    }

    pub fn notify(&mut self, method: &str) -> Result<(), DriverError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
    }

    pub fn reply(&mut self, id: &Value, answer: Result<Value, (i64, String)>) -> Result<(), DriverError> {
        let msg = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        };
        self.send(&msg)
    }

    /// The next message, or an error when the process ends or goes quiet.
    pub fn next(&mut self, deadline: Instant) -> Result<Incoming, DriverError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        let msg = match self.lines.recv_timeout(wait) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(DriverError::new("protocol-error", e)),
            Err(RecvTimeoutError::Timeout) => return Err(DriverError::new("timeout", "app-server stopped answering")),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.try_wait().ok().flatten().and_then(|s| s.code());
                return Err(DriverError::new("provider-exited", format!("app-server exited (code {status:?})")));
            }
        };
        let method = msg.get("method").and_then(Value::as_str).map(String::from);
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        Ok(match (method, msg.get("id").cloned()) {
            (Some(method), Some(id)) => Incoming::Request { id, method, params },
            (Some(method), None) => Incoming::Notification { method, params },
            (None, Some(id)) => Incoming::Response {
                id,
                result: match msg.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
                },
            },
            (None, None) => return Err(DriverError::new("protocol-error", format!("message is neither request nor response: {msg}"))),
        })
    }

}

impl Drop for AppServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
