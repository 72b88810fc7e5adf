//! Codex configuration as the fake sees it: CODEX_HOME/config.toml, `-c`
//! overrides and thread/start `config`, merged in that order, then read into
//! the MCP server settings that drive approval.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use toml::{Table, Value as Toml};

/// `approval_mode` values, case-sensitive as in the real CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    Auto,
    Prompt,
    Writes,
    Approve,
}

impl ApprovalMode {
    /// As written in config.toml.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Auto => "auto",
            ApprovalMode::Prompt => "prompt",
            ApprovalMode::Writes => "writes",
            ApprovalMode::Approve => "approve",
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ToolSettings {
    pub approval_mode: Option<ApprovalMode>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServerSettings {
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    pub url: Option<String>,
    pub bearer_token_env_var: Option<String>,
    pub enabled: Option<bool>,
    pub default_tools_approval_mode: Option<ApprovalMode>,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolSettings>,
}

impl ServerSettings {
    /// Per-tool mode wins over the server default both ways; `auto` otherwise.
    pub fn mode_for(&self, tool: &str) -> ApprovalMode {
        self.tools
            .get(tool)
            .and_then(|t| t.approval_mode)
            .or(self.default_tools_approval_mode)
            .unwrap_or(ApprovalMode::Auto)
    }
}

/// Only the part of config.toml the fake acts on; other keys are accepted
/// and ignored, as the real CLI accepts keys it does not use here.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Settings {
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, ServerSettings>,
}

/// The config.toml file plus `-c` overrides, kept untyped so thread-level
/// overrides can be merged before the typed read.
#[derive(Debug, Clone)]
pub struct BaseConfig {
    /// CODEX_HOME, where config.toml and remembered approvals live.
    pub home: PathBuf,
    pub text: Option<String>,
    pub table: Table,
    /// The `-c` pairs alone, to tell which source a setting came from.
    pub overrides: Table,
}

impl BaseConfig {
    /// CODEX_HOME/config.toml.
    pub fn path(&self) -> PathBuf {
        self.home.join("config.toml")
    }

    /// Reads CODEX_HOME/config.toml (missing is fine) and applies `-c` pairs.
    /// A syntax error in the file or a bad `-c` value is a startup error.
    pub fn load(home: &Path, overrides: &[String]) -> Result<BaseConfig, String> {
        let path = home.join("config.toml");
        let text = std::fs::read_to_string(&path).ok();
        let mut overrides_only = Table::new();
        let mut table = match &text {
            Some(t) => t.parse::<Table>().map_err(|e| located(&path, t, &e))?,
            None => Table::new(),
        };
        for pair in overrides {
            let (key, raw) = pair
                .split_once('=')
                .ok_or_else(|| format!("Invalid override (missing '='): {pair}"))?;
            let value = parse_override_value(raw.trim());
            set_dotted(&mut table, key.trim(), value.clone());
            set_dotted(&mut overrides_only, key.trim(), value.clone());
            // The real CLI rejects a bad -c value before initialize.
            let mut probe = Table::new();
            set_dotted(&mut probe, key.trim(), value);
            Toml::Table(probe)
                .try_into::<Settings>()
                .map_err(|e| format!("Error loading config: -c {pair}: {}", e.message()))?;
        }
        Ok(BaseConfig { home: home.to_path_buf(), text, table, overrides: overrides_only })
    }

    /// The effective settings for a thread: the file (checked first, so its
    /// errors name file:line:col), then `-c`, then thread/start `config`.
    pub fn for_thread(&self, thread_config: Option<&Value>) -> Result<Settings, String> {
        if let Some(text) = &self.text {
            toml::from_str::<Settings>(text).map_err(|e| located(&self.path(), text, &e))?;
        }
        let mut table = self.table.clone();
        apply_thread_config(&mut table, thread_config)?;
        Toml::Table(table).try_into::<Settings>().map_err(|e| format!("invalid config: {}", e.message()))
    }

    /// Each source of a thread's settings on its own, in the order they
    /// apply, named as the transcript names them (`thread_source`: the
    /// request that carried the thread's `config`). A source that does not
    /// read on its own counts as empty: it only serves to say where a
    /// setting of [`BaseConfig::for_thread`]'s result came from.
    pub fn sources(&self, thread_config: Option<&Value>, thread_source: &'static str) -> Vec<(&'static str, Settings)> {
        let read = |t: Table| Toml::Table(t).try_into::<Settings>().unwrap_or_default();
        let file = self.text.as_deref().and_then(|t| toml::from_str::<Settings>(t).ok()).unwrap_or_default();
        let mut thread = Table::new();
        // Only asked for once for_thread succeeded, so the same config applies.
        let _ = apply_thread_config(&mut thread, thread_config);
        vec![(CONFIG_FILE, file), (OVERRIDES, read(self.overrides.clone())), (thread_source, read(thread))]
    }
}

/// Config source names, as the transcript gives them.
pub const CONFIG_FILE: &str = "config.toml";
pub const OVERRIDES: &str = "-c";
pub const THREAD_START: &str = "thread/start config";
pub const THREAD_RESUME: &str = "thread/resume config";

/// A thread's `config` (dotted keys to values) laid over `table`.
fn apply_thread_config(table: &mut Table, thread_config: Option<&Value>) -> Result<(), String> {
    if let Some(Value::Object(map)) = thread_config {
        for (key, value) in map {
            let value = json_to_toml(value).ok_or_else(|| format!("config override `{key}` has a null value"))?;
            set_dotted(table, key, value);
        }
    }
    Ok(())
}

/// `path:line:col: message`, the shape the real CLI uses for config errors.
fn located(path: &Path, text: &str, err: &toml::de::Error) -> String {
    let (line, col) = match err.span() {
        Some(span) => line_col(text, span.start),
        None => (1, 1),
    };
    format!("{}:{line}:{col}: {}", path.display(), err.message().trim())
}

pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A `-c` value is TOML when it parses as one, else a bare string.
pub fn parse_override_value(raw: &str) -> Toml {
    format!("v = {raw}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Toml::String(raw.to_string()))
}

pub fn set_dotted(table: &mut Table, key: &str, value: Toml) {
    let parts: Vec<&str> = key.split('.').collect();
    let (last, parents) = match parts.split_last() {
        Some(x) => x,
        None => return,
    };
    let mut cur = table;
    for p in parents {
        let entry = cur.entry(p.to_string()).or_insert_with(|| Toml::Table(Table::new()));
        if !entry.is_table() {
            *entry = Toml::Table(Table::new());
        }
        cur = match entry {
            Toml::Table(t) => t,
            _ => return,
        };
    }
    cur.insert(last.to_string(), value);
}

pub fn json_to_toml(v: &Value) -> Option<Toml> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => Toml::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Toml::Integer(i),
            None => Toml::Float(n.as_f64()?),
        },
        Value::String(s) => Toml::String(s.clone()),
        Value::Array(a) => Toml::Array(a.iter().filter_map(json_to_toml).collect()),
        Value::Object(o) => {
            Toml::Table(o.iter().filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?))).collect())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_tool_wins_over_server_default_both_ways() {
        let s: Settings = toml::from_str(
            "[mcp_servers.a]\ndefault_tools_approval_mode = \"approve\"\n[mcp_servers.a.tools.t]\napproval_mode = \"prompt\"\n",
        )
        .unwrap();
        assert_eq!(s.mcp_servers["a"].mode_for("t"), ApprovalMode::Prompt);
        assert_eq!(s.mcp_servers["a"].mode_for("u"), ApprovalMode::Approve);
    }

    #[test]
    fn bad_mode_in_file_names_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "[mcp_servers.a.tools.t]\napproval_mode = \"bogus\"\n").unwrap();
        let base = BaseConfig::load(dir.path(), &[]).unwrap();
        let err = base.for_thread(None).unwrap_err();
        assert!(err.contains("config.toml:2:17"), "{err}");
    }

    #[test]
    fn bad_mode_in_override_fails_at_startup_and_case_matters() {
        let dir = tempfile::tempdir().unwrap();
        let err = BaseConfig::load(dir.path(), &["mcp_servers.a.tools.t.approval_mode=\"Approve\"".into()]);
        assert!(err.is_err());
        let ok = BaseConfig::load(dir.path(), &["mcp_servers.a.tools.t.approval_mode=\"approve\"".into()]).unwrap();
        let s = ok.for_thread(None).unwrap();
        assert_eq!(s.mcp_servers["a"].mode_for("t"), ApprovalMode::Approve);
    }

    #[test]
    fn thread_config_overrides_apply_last() {
        let dir = tempfile::tempdir().unwrap();
        let base = BaseConfig::load(dir.path(), &["mcp_servers.a.tools.t.approval_mode=prompt".into()]).unwrap();
        let s = base
            .for_thread(Some(&serde_json::json!({"mcp_servers.a.tools.t.approval_mode": "approve"})))
            .unwrap();
        assert_eq!(s.mcp_servers["a"].mode_for("t"), ApprovalMode::Approve);
    }
}
