//! A thread's state in this process, and the per-run state kept across the
//! driver's app-server processes (thread ids, turn count).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::rollout::Rollout;
use crate::codex::config::{ServerSettings, Settings};
use crate::codex::profile;
use crate::script::Script;
use crate::mcp_client::{McpConnection, ServerTarget};
use crate::wire::Recorder;

pub struct Thread {
    pub id: String,
    /// The thread object as thread/start and thread/started carry it.
    pub info: Value,
    pub approval_policy: Value,
    pub sandbox: String,
    pub settings: Settings,
    /// Its effective approval settings with their sources, as recorded
    /// when it was opened ([`crate::codex::effective`]).
    pub approval_settings: Value,
    pub servers: BTreeMap<String, Result<McpConnection, String>>,
    pub approved_for_session: BTreeSet<(String, String)>,
    /// Where its turns are written, from the first one on.
    pub rollout: Rollout,
    /// Its first turn: no client marks turns read, so it stays the first unread.
    pub first_turn: Option<String>,
}

impl Thread {
    /// `persist: "session"` stops re-prompting in this process; `"always"`
    /// also writes the per-tool approval into CODEX_HOME/config.toml.
    pub fn remember_approval(&mut self, server: &str, tool: &str, persist: &Value, home: &Path, rec: &Recorder) {
        match persist.as_str() {
            Some("session") => {
                self.approved_for_session.insert((server.to_string(), tool.to_string()));
            }
            Some("always") => {
                self.approved_for_session.insert((server.to_string(), tool.to_string()));
                let path = home.join("config.toml");
                let mut text = std::fs::read_to_string(&path).unwrap_or_default();
                text.push_str(&crate::codex::profile::approved_tool_table(server, tool));
                let _ = std::fs::write(&path, text);
                rec.record(&json!({"event": "persisted", "server": server, "tool": tool}));
            }
            _ => {}
        }
    }
}

/// Per-run state, in the script's state file.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct State {
    pub next_turn: usize,
    pub threads: Vec<String>,
    /// Cancelled commands (thread id, step) whose "aborted" output the
    /// model has not been shown yet: it sees it at that thread's next turn.
    #[serde(default)]
    pub aborted: Vec<(String, usize)>,
}

/// A fresh thread id, recorded in the state file; `salt` tells apart two ids
/// made by one process.
pub fn new_thread_id(script: &Script, salt: i64) -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let id = format!("{:08x}-fake-{:04x}-{:012x}", std::process::id(), salt & 0xffff, nanos & 0xffff_ffff_ffff);
    let mut state: State = script.load_state();
    state.threads.push(id.clone());
    script.save_state(&state);
    id
}

/// Codex reads an HTTP server's bearer token from the env var it names.
pub fn target(s: &ServerSettings, env: &BTreeMap<String, String>) -> Result<ServerTarget, String> {
    let mut headers = BTreeMap::new();
    if let Some(var) = &s.bearer_token_env_var {
        let token = env.get(var).ok_or_else(|| profile::missing_bearer_token(var))?;
        headers.insert("authorization".to_string(), format!("Bearer {token}"));
    }
    Ok(ServerTarget {
        command: s.command.clone(),
        args: s.args.clone(),
        env: s.env.clone(),
        cwd: s.cwd.clone(),
        url: s.url.clone(),
        headers,
    })
}
