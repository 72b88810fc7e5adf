//! The per-run script a harness hands a fake provider (Codex or Claude
//! Code) and the mock model: which version to simulate, where to record,
//! and what the model and the provider do in each turn.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Provider version to simulate, e.g. "0.153.4".
    pub version: String,
    /// JSONL transcript: every wire message both ways plus outcome events.
    pub transcript: PathBuf,
    /// Small state file so turns keep their order across process restarts.
    pub state: PathBuf,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    pub actions: Vec<Action>,
}

/// One thing the simulated model or provider does during a turn. `step` is the
/// scenario step index, echoed in outcome events so the judge can match them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// The model calls an MCP tool.
    ToolCall { step: usize, server: String, tool: String, arguments: Value },
    /// The provider asks the client something (approval, input, elicitation).
    /// With `raised_by`, the request is `server`'s own elicitation, sent
    /// while the call of that step (a ToolCall of the same turn) runs, not
    /// by the provider itself.
    Request {
        step: usize,
        request: RequestKind,
        #[serde(default)]
        server: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raised_by: Option<usize>,
    },
    /// A raw server request with a method the client may not know.
    Raw { step: usize, method: String, params: Value },
}

/// A turn's server elicitations: (step of the call whose server sends
/// one, the request's own step).
pub fn raised_elicitations(actions: &[Action]) -> Vec<(usize, usize)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Request { step, raised_by: Some(call), .. } => Some((*call, *step)),
            _ => None,
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    Command,
    FileChange,
    Permissions,
    UrlElicitation,
    FormElicitation,
    UserInput,
}

impl RequestKind {
    /// As scenarios write it.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Command => "command",
            RequestKind::FileChange => "file_change",
            RequestKind::Permissions => "permissions",
            RequestKind::UrlElicitation => "url_elicitation",
            RequestKind::FormElicitation => "form_elicitation",
            RequestKind::UserInput => "user_input",
        }
    }
}

impl Script {
    /// Loads a script and parses the version it asks the fake to be.
    pub fn load_versioned(path: &std::path::Path) -> Result<(Script, crate::version::Version), String> {
        let script = Script::load(path)?;
        let version = script.version.parse()?;
        Ok((script, version))
    }

    pub fn load(path: &std::path::Path) -> Result<Script, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))
    }

    /// The fake's per-run state from the `state` file; the default before
    /// the first process writes it.
    pub fn load_state<T: DeserializeOwned + Default>(&self) -> T {
        std::fs::read_to_string(&self.state).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
    }

    pub fn save_state<T: Serialize>(&self, state: &T) {
        let _ = std::fs::write(&self.state, serde_json::to_string(state).unwrap_or_default());
    }
}
