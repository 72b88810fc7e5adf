//! Where the fake Claude Code finds its MCP servers and permission rules:
//! `--mcp-config` (files or inline JSON), the user-scope servers of
//! `.claude.json`, `--settings`, the user's `settings.json` and the
//! project's `.claude/settings*.json` (allow entries only when the
//! workspace is trusted), with `${VAR}` expansion as the real CLI does it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::profile::Profile;
use super::rules::{Rule, RuleSource, Rules};

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    /// "dynamic" (--mcp-config), "user" or "local" (.claude.json), "sdk"
    /// (an SDK host's in-process server).
    pub source: &'static str,
    pub transport: ServerTransport,
    /// Per-server tool timeout in ms, as written (values < 1000 are ignored later).
    pub timeout_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ServerTransport {
    Stdio { command: Option<String>, args: Vec<String>, env: BTreeMap<String, String> },
    Http { url: Option<String>, headers: BTreeMap<String, String> },
    /// An in-process server of the SDK host, reached through `mcp_message`
    /// control requests (`{"type": "sdk", "name": ...}`, as the Python SDK
    /// passes it in `--mcp-config`).
    Sdk,
    /// A transport the fake does not speak (sse, ws): reported failed.
    Unsupported(String),
}

/// Reads every `--mcp-config` value. Errors are the lines the real CLI
/// prints under "Invalid MCP configuration:".
pub fn load_mcp_configs(
    values: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
    profile: &Profile,
) -> Result<Vec<ServerConfig>, Vec<String>> {
    let mut servers: Vec<ServerConfig> = Vec::new();
    let mut errors = Vec::new();
    for value in values {
        let doc = match serde_json::from_str::<Value>(value) {
            Ok(v) if v.is_object() => v,
            _ => {
                let path = absolute(cwd, value);
                match std::fs::read_to_string(&path) {
                    Err(_) => {
                        errors.push(format!("MCP config file not found: {}", path.display()));
                        continue;
                    }
                    Ok(text) => match serde_json::from_str::<Value>(&text) {
                        Ok(v) => v,
                        Err(_) => {
                            errors.push("MCP config is not a valid JSON".to_string());
                            continue;
                        }
                    },
                }
            }
        };
        match parse_servers(&doc, "dynamic", env, profile) {
            Ok(list) => {
                for s in list {
                    servers.retain(|o| o.name != s.name);
                    servers.push(s);
                }
            }
            Err(e) => errors.extend(e),
        }
    }
    if errors.is_empty() {
        Ok(servers)
    } else {
        Err(errors)
    }
}

/// The `mcpServers` record an SDK host sends in its initialize request,
/// read like an `--mcp-config` document's (source "dynamic", as measured).
pub fn servers_of_record(record: &Value, env: &BTreeMap<String, String>, profile: &Profile) -> Result<Vec<ServerConfig>, Vec<String>> {
    parse_servers(&serde_json::json!({"mcpServers": record}), "dynamic", env, profile)
}

/// The `mcpServers` record of one config document.
fn parse_servers(doc: &Value, source: &'static str, env: &BTreeMap<String, String>, profile: &Profile) -> Result<Vec<ServerConfig>, Vec<String>> {
    let servers = doc.get("mcpServers").unwrap_or(&Value::Null);
    let Some(map) = servers.as_object() else {
        return Err(vec![profile.mcp_servers_type_error(servers)]);
    };
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (name, s) in map {
        match parse_server(name, s, source, env) {
            Ok(c) => out.push(c),
            Err(e) => errors.push(format!("mcpServers.{name}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn parse_server(name: &str, s: &Value, source: &'static str, env: &BTreeMap<String, String>) -> Result<ServerConfig, String> {
    let obj = s.as_object().ok_or("Invalid input: expected object")?;
    let text = |key: &str| -> Result<Option<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(v)) => Ok(Some(expand(v, env))),
            Some(_) => Err(format!("Invalid input: `{key}` must be a string")),
        }
    };
    let strings = |key: &str| -> Result<Vec<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(|s| expand(s, env)).ok_or_else(|| format!("Invalid input: `{key}` must hold strings")))
                .collect(),
            Some(_) => Err(format!("Invalid input: `{key}` must be an array")),
        }
    };
    let record = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| {
                    v.as_str().map(|s| (k.clone(), expand(s, env))).ok_or_else(|| format!("Invalid input: `{key}.{k}` must be a string"))
                })
                .collect(),
            Some(_) => Err(format!("Invalid input: `{key}` must be an object")),
        }
    };
    let timeout_ms = match obj.get("timeout") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(_) => return Err("Invalid input: `timeout` must be a number".into()),
    };
    let kind = match obj.get("type") {
        None | Some(Value::Null) => {
            if obj.contains_key("url") {
                "http"
            } else {
                "stdio"
            }
        }
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err("Invalid input: `type` must be a string".into()),
    };
    let transport = match kind {
        "stdio" => ServerTransport::Stdio { command: text("command")?, args: strings("args")?, env: record("env")? },
        "http" => ServerTransport::Http { url: text("url")?, headers: record("headers")? },
        "sdk" => ServerTransport::Sdk,
        "sse" | "ws" | "sse-ide" | "ws-ide" => ServerTransport::Unsupported(kind.to_string()),
        other => return Err(format!("Invalid input: unknown server type `{other}`")),
    };
    // Init and hook inputs name an SDK server's source "sdk" whatever
    // config it came from (measured with the Python SDK's --mcp-config, 2.1.332).
    let source = if transport == ServerTransport::Sdk { "sdk" } else { source };
    Ok(ServerConfig { name: name.to_string(), source, transport, timeout_ms })
}

/// `${VAR}` and `${VAR:-default}`, as Claude Code expands MCP configs. An
/// unset variable without a default stays as written.
pub fn expand(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match (env.get(name), default) {
            (Some(v), _) => out.push_str(v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The user-scope (`mcpServers`) and local-scope (`projects[cwd].mcpServers`)
/// servers of `.claude.json`. Unreadable files give none.
pub fn user_servers(global_config: &Value, cwd: &Path, env: &BTreeMap<String, String>, profile: &Profile) -> Vec<ServerConfig> {
    let mut out = Vec::new();
    if global_config.get("mcpServers").is_some_and(Value::is_object) {
        out.extend(parse_servers(global_config, "user", env, profile).unwrap_or_default());
    }
    if let Some(project) = project_entry(global_config, cwd) {
        if project.get("mcpServers").is_some_and(Value::is_object) {
            out.extend(parse_servers(project, "local", env, profile).unwrap_or_default());
        }
    }
    out
}

fn project_entry<'a>(global_config: &'a Value, cwd: &Path) -> Option<&'a Value> {
    global_config.get("projects")?.get(cwd.to_str()?)
}

/// Where the real CLI keeps its files for this environment.
#[derive(Debug, Clone)]
pub struct Locations {
    /// CLAUDE_CONFIG_DIR, else ~/.claude.
    pub config_dir: PathBuf,
    /// `.claude.json`: inside CLAUDE_CONFIG_DIR when set, else ~/.claude.json.
    pub global_config: PathBuf,
}

impl Locations {
    pub fn new(env: &BTreeMap<String, String>) -> Locations {
        let home = env.get("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
        match env.get("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => Locations { config_dir: PathBuf::from(dir), global_config: PathBuf::from(dir).join(".claude.json") },
            None => Locations { config_dir: home.join(".claude"), global_config: home.join(".claude.json") },
        }
    }
}

/// Permission rules and default mode gathered from every settings source.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub rules: Rules,
    /// `permissions.defaultMode` of the highest-priority source that sets it.
    pub default_mode: Option<String>,
    /// Stderr lines the real CLI prints about the settings (kept going).
    pub warnings: Vec<String>,
}

/// Which of user / project / local `--setting-sources` enables (all when absent).
pub fn parse_setting_sources(value: Option<&str>) -> Result<Vec<String>, String> {
    let Some(value) = value else {
        return Ok(vec!["user".into(), "project".into(), "local".into()]);
    };
    let mut out = Vec::new();
    for s in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !["user", "project", "local"].contains(&s) {
            return Err(format!("Invalid setting source: {s}. Valid options are: user, project, local"));
        }
        out.push(s.to_string());
    }
    Ok(out)
}

pub struct SettingsInput<'a> {
    pub flag: Option<&'a str>,
    pub sources: &'a [String],
    pub cwd: &'a Path,
    pub locations: &'a Locations,
    pub global_config: &'a Value,
    pub profile: &'a Profile,
}

/// Loads every settings source. Err only for what stops the real CLI: a
/// `--settings` value that is neither JSON nor an existing file.
pub fn load_settings(input: &SettingsInput) -> Result<Settings, String> {
    let mut settings = Settings::default();
    // Lowest priority first; defaultMode of later sources wins.
    let trusted = project_entry(input.global_config, input.cwd)
        .and_then(|p| p.get("hasTrustDialogAccepted"))
        .and_then(Value::as_bool)
        == Some(true);
    let mut layers: Vec<(RuleSource, Value, Option<&str>)> = Vec::new();
    let read_file = |path: &Path, settings: &mut Settings| -> Option<Value> {
        let text = std::fs::read_to_string(path).ok()?;
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => Some(v),
            Err(_) => {
                if input.profile.warns_unreadable_settings() {
                    settings.warnings.push(unreadable_settings_warning(path, input.profile));
                }
                None
            }
        }
    };
    let has = |s: &str| input.sources.iter().any(|x| x == s);
    if has("user") {
        if let Some(v) = read_file(&input.locations.config_dir.join("settings.json"), &mut settings) {
            layers.push((RuleSource::User, v, None));
        }
    }
    if has("project") {
        if let Some(v) = read_file(&input.cwd.join(".claude/settings.json"), &mut settings) {
            layers.push((RuleSource::Project, v, Some(".claude/settings.json")));
        }
    }
    if has("local") {
        if let Some(v) = read_file(&input.cwd.join(".claude/settings.local.json"), &mut settings) {
            layers.push((RuleSource::Local, v, Some(".claude/settings.local.json")));
        }
    }
    if let Some(flag) = input.flag {
        let inline = serde_json::from_str::<Value>(flag).ok().filter(Value::is_object);
        let v = match inline {
            Some(v) => Some(v),
            None => {
                let path = absolute(input.cwd, flag);
                if !path.is_file() {
                    let shown = if input.profile.absolute_settings_path() { path.display().to_string() } else { flag.to_string() };
                    return Err(format!("Error: Settings file not found: {shown}"));
                }
                read_file(&path, &mut settings)
            }
        };
        if let Some(v) = v {
            layers.push((RuleSource::Flag, v, None));
        }
    }
    for (source, doc, project_file) in layers {
        let perms = doc.get("permissions").cloned().unwrap_or(Value::Null);
        let list = |key: &str| -> Vec<String> {
            perms.get(key).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect()).unwrap_or_default()
        };
        let allow = list("allow");
        if let (Some(file), false) = (project_file, trusted) {
            // Measured: an untrusted workspace keeps its deny and ask rules
            // but loses its allow rules, with this warning.
            if !allow.is_empty() {
                let n = allow.len();
                let entries = if n == 1 { "entry" } else { "entries" };
                settings.warnings.push(format!(
                    "Ignoring {n} permissions.allow {entries} from {file}: this workspace has not been trusted. Run Claude Code interactively here once and accept the trust dialog, or set projects[{:?}].hasTrustDialogAccepted: true in {}.",
                    input.cwd.display().to_string(),
                    input.locations.global_config.display()
                ));
            }
        } else {
            settings.rules.allow.extend(allow.into_iter().map(|r| Rule::new(r, source)));
            if let Some(mode) = perms.get("defaultMode").and_then(Value::as_str) {
                settings.default_mode = Some(mode.to_string());
            }
        }
        settings.rules.deny.extend(list("deny").into_iter().map(|r| Rule::new(r, source)));
        settings.rules.ask.extend(list("ask").into_iter().map(|r| Rule::new(r, source)));
    }
    Ok(settings)
}

fn unreadable_settings_warning(path: &Path, profile: &Profile) -> String {
    if !profile.explains_unloaded_settings() {
        return format!(
            "These settings files did not load, so nothing in them is in effect, including hooks and permission rules. Each loads again once the problem listed for it is fixed:\n  {}: Invalid or malformed JSON",
            path.display()
        );
    }
    format!(
        "These settings did not load, so nothing in them is in effect, including hooks, permission rules and sandbox settings, though environment variables they already set can stay:\n  {}: Invalid or malformed JSON\nFix each problem listed, then start Claude Code again. For settings sent with applyFlagSettings, shown as SDK inline settings, send them again instead.",
        path.display()
    )
}

fn absolute(cwd: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env() -> BTreeMap<String, String> {
        [("TOK".to_string(), "s3cret".to_string())].into_iter().collect()
    }

    #[test]
    fn expands_variables_like_claude_code() {
        assert_eq!(expand("Bearer ${TOK}", &env()), "Bearer s3cret");
        assert_eq!(expand("${NOPE:-dflt}/${TOK:-x}", &env()), "dflt/s3cret");
        assert_eq!(expand("${NOPE} and ${unclosed", &env()), "${NOPE} and ${unclosed");
    }

    #[test]
    fn reads_inline_and_file_configs() {
        let dir = tempfile::tempdir().unwrap();
        let p = Profile { version: crate::version::Version::new(2, 1, 332) };
        std::fs::write(dir.path().join("m.json"), r#"{"mcpServers":{"f":{"command":"x","timeout":1500}}}"#).unwrap();
        let inline = r#"{"mcpServers":{"w":{"type":"http","url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer ${TOK}"}}}}"#;
        let servers = load_mcp_configs(&["m.json".into(), inline.into()], dir.path(), &env(), &p).unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].timeout_ms, Some(1500.0));
        match &servers[1].transport {
            ServerTransport::Http { headers, .. } => assert_eq!(headers["Authorization"], "Bearer s3cret"),
            other => panic!("{other:?}"),
        }
        let errs = load_mcp_configs(&["nope.json".into(), r#"{"mcpServers":5}"#.into()], dir.path(), &env(), &p).unwrap_err();
        assert!(errs[0].starts_with("MCP config file not found: ") && errs[0].ends_with("nope.json"), "{errs:?}");
        assert_eq!(errs[1], "mcpServers: Invalid input: expected record, received number");
        std::fs::write(dir.path().join("bad.json"), "{bad").unwrap();
        assert_eq!(load_mcp_configs(&["bad.json".into()], dir.path(), &env(), &p).unwrap_err(), vec!["MCP config is not a valid JSON"]);
    }

    #[test]
    fn untrusted_project_keeps_deny_but_not_allow() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work");
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        std::fs::write(cwd.join(".claude/settings.json"), r#"{"permissions":{"allow":["mcp__a__b"],"deny":["mcp__a__c"]}}"#).unwrap();
        let envs: BTreeMap<String, String> = [("CLAUDE_CONFIG_DIR".to_string(), dir.path().join("cfg").display().to_string())].into_iter().collect();
        let locations = Locations::new(&envs);
        let p = Profile { version: crate::version::Version::new(2, 1, 332) };
        let sources = parse_setting_sources(None).unwrap();
        let untrusted = json!({});
        let s = load_settings(&SettingsInput { flag: None, sources: &sources, cwd: &cwd, locations: &locations, global_config: &untrusted, profile: &p }).unwrap();
        assert!(s.rules.allow.is_empty());
        assert_eq!(s.rules.deny.len(), 1);
        assert!(s.warnings[0].starts_with("Ignoring 1 permissions.allow entry from .claude/settings.json"), "{:?}", s.warnings);
        let trusted = json!({"projects": {cwd.display().to_string(): {"hasTrustDialogAccepted": true}}});
        let s = load_settings(&SettingsInput { flag: None, sources: &sources, cwd: &cwd, locations: &locations, global_config: &trusted, profile: &p }).unwrap();
        assert_eq!(s.rules.allow.len(), 1);
        assert!(parse_setting_sources(Some("user,bogus")).is_err());
    }
}
