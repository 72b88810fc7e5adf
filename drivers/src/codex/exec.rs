//! Reference driver for `codex exec --json`, the way `@openai/codex-sdk`
//! drives Codex: one process per turn, `exec resume <thread id>` after the
//! first, the prompt on stdin, the JSONL events on stdout.
//!
//! exec has no client to ask and runs every turn under approval policy
//! `never`, whatever it is told: a call needing approval fails in the CLI.
//! So this driver is fail-closed by construction, and everything the host
//! settled must be in the config: per-tool policies in CODEX_HOME/config.toml
//! exactly as for the app-server, and under global `auto-approve` a
//! server-wide `approve` default (as `-c`), which per-tool `prompt` tables
//! still override. The config is rewritten for every turn, so a resume with
//! changed declarations takes effect at the next turn.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use serde_json::Value;

use super::REPLY_TIMEOUT;
use crate::child::spawn_retrying;
use crate::error::DriverError;
use crate::launch::{Launch, TurnReport};
use crate::parts::Parts;
use crate::spec::{McpServerSpec, ServerSet};

/// How much of exec's stderr an error quotes.
const STDERR_TAIL: usize = 2000;

pub struct CodexExecDriver {
    parts: Parts,
    launch: Option<Launch>,
    base: ServerSet,
    /// The thread the first turn started; later turns resume it.
    thread_id: Option<String>,
}

impl CodexExecDriver {
    pub fn new(parts: Parts) -> CodexExecDriver {
        CodexExecDriver { parts, launch: None, base: ServerSet::default(), thread_id: None }
    }

    /// Validates the declarations; nothing starts before the first turn.
    pub fn open(&mut self, launch: Launch) -> Result<(), DriverError> {
        if launch.bridge.is_some() || launch.gateway.is_some() {
            return Err(DriverError::new("unsupported", "codex exec has no client to bridge host tools or pause gateway calls"));
        }
        self.base = (self.parts.build)(launch.servers.clone())?;
        self.launch = Some(launch);
        self.thread_id = None;
        Ok(())
    }

    /// Takes the changed declarations or secrets for the next turn, which
    /// resumes the same thread.
    pub fn resume(&mut self, launch: Launch) -> Result<(), DriverError> {
        self.base = (self.parts.build)(launch.servers.clone())?;
        self.launch = Some(launch);
        Ok(())
    }

    /// One `codex exec` process: `scoped` servers are in its config only.
    pub fn turn(&mut self, prompt: &str, scoped: Vec<McpServerSpec>) -> Result<TurnReport, DriverError> {
        let launch = self.launch.clone().ok_or_else(|| DriverError::new("not-open", "open() first"))?;
        let set = self.base.merged(&(self.parts.build)(scoped)?)?;
        let mut env = BTreeMap::new();
        for var in set.secret_envs() {
            let value = launch.process.secrets.get(var).ok_or_else(|| DriverError::new("missing-secret", format!("no value for `{var}`")))?;
            env.insert(var.to_string(), value.clone());
        }
        env.insert("CODEX_HOME".to_string(), launch.process.home.display().to_string());
        std::fs::create_dir_all(&launch.process.home)
            .and_then(|_| std::fs::write(launch.process.home.join("config.toml"), (self.parts.codex_config)(&set)))
            .map_err(|e| DriverError::new("launch-failed", format!("cannot write config.toml: {e}")))?;
        let mut args: Vec<String> = ["exec", "--experimental-json", "--skip-git-repo-check", "--cd"].map(String::from).into();
        args.push(launch.process.cwd.display().to_string());
        args.extend((self.parts.codex_exec_args)(&set, launch.global));
        if let Some(id) = &self.thread_id {
            args.extend(["resume".to_string(), id.clone()]);
        }
        let mut command = Command::new(&launch.process.binary);
        command.args(&args).envs(&env).current_dir(&launch.process.cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = spawn_retrying(&mut command, &launch.process.binary)?;
        // The prompt goes to stdin, as the SDK sends it; EOF ends it.
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(prompt.as_bytes());
        }
        let stdout = child.stdout.take().ok_or_else(|| DriverError::new("launch-failed", "no stdout"))?;
        let mut stderr = child.stderr.take().ok_or_else(|| DriverError::new("launch-failed", "no stderr"))?;
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let deadline = Instant::now() + REPLY_TIMEOUT;
        let mut report = TurnReport::default();
        let mut failure = None;
        loop {
            let line = match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => line,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(DriverError::new("timeout", format!("codex exec said nothing for {} s", REPLY_TIMEOUT.as_secs())));
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            let event: Value = serde_json::from_str(&line).map_err(|e| DriverError::new("protocol-error", format!("bad JSON from codex exec: {e}")))?;
            match event["type"].as_str().unwrap_or("") {
                "thread.started" => self.thread_id = event["thread_id"].as_str().map(String::from).or(self.thread_id.take()),
                "item.completed" => report.tool_calls.extend(super::mcp_call_record(&event["item"], "mcp_tool_call")),
                "turn.failed" => failure = Some(event["error"]["message"].as_str().unwrap_or("turn failed").to_string()),
                _ => {}
            }
        }
        let status = child.wait().map_err(|e| DriverError::new("provider-exited", e.to_string()))?;
        let stderr = errors.join().unwrap_or_default();
        if !status.success() {
            let tail: String = stderr.trim().chars().rev().take(STDERR_TAIL).collect::<Vec<_>>().into_iter().rev().collect();
            return Err(DriverError::new("provider-exited", format!("codex exec exited with {status}: {tail}")));
        }
        match failure {
            Some(message) => Err(DriverError::new("provider-rejected", message)),
            None => Ok(report),
        }
    }
}
