//! A provider child process whose stdout lines feed the driver's event
//! channel, tagged with a generation so a replaced child's last words are
//! ignored.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Sender;

use serde_json::Value;

use crate::events::Event;
use crate::error::DriverError;

pub struct ChildProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    pub generation: u64,
}

impl ChildProcess {
    pub fn spawn(
        binary: &Path,
        args: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
        events: Sender<Event>,
        generation: u64,
    ) -> Result<ChildProcess, DriverError> {
        let mut command = Command::new(binary);
        command.args(args).envs(env).current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = spawn_retrying(&mut command, binary)?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or_else(|| DriverError::new("launch-failed", "no stdout"))?;
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                let parsed = serde_json::from_str(&line).map_err(|e| format!("bad JSON from the provider: {e}"));
                if events.send(Event::Child { generation, line: parsed }).is_err() {
                    return;
                }
            }
            let _ = events.send(Event::ChildExited { generation });
        });
        Ok(ChildProcess { child, stdin, generation })
    }

    pub fn send(&mut self, msg: &Value) -> Result<(), DriverError> {
        let stdin = self.stdin.as_mut().ok_or_else(|| DriverError::new("provider-exited", "input already closed"))?;
        let mut line = msg.to_string();
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|e| DriverError::new("provider-exited", format!("provider closed its input: {e}")))
    }

    /// Closes the child's stdin (print-mode CLIs need no input).
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Waits up to `limit` for the child to exit on its own; true if it did.
    pub fn exited_within(&mut self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return true,
                Ok(None) if std::time::Instant::now() >= deadline => return false,
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
    }

    pub fn exit_code(&mut self) -> Option<i32> {
        self.child.try_wait().ok().flatten().and_then(|s| s.code())
    }
}

/// Starts `command` (running `binary`). A binary written a moment ago can
/// still be open for writing in a process another thread forked meanwhile
/// (until its exec): "Text file busy" then passes within milliseconds.
pub fn spawn_retrying(command: &mut Command, binary: &Path) -> Result<Child, DriverError> {
    let mut tries = 0;
    loop {
        match command.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 20 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other.map_err(|e| DriverError::new("launch-failed", format!("cannot start {}: {e}", binary.display()))),
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
