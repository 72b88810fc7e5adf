//! The approval settings a thread ended up with, per MCP server, and which
//! config source set each one. The fake records them for every thread it
//! opens (event [`EVENT`]), so a judge can check what a driver rendered
//! whichever source it used: config.toml, `-c` or the thread's `config`.

use serde_json::{json, Map, Value};

use super::config::{ServerSettings, Settings};

/// The transcript event carrying a thread's effective approval settings.
pub const EVENT: &str = "approval_settings";

/// `{"<server>": {"transport", "enabled", "default_tools_approval_mode":
/// mode | null, "tools": {"<tool>": mode | null}, "sources":
/// {"default_tools_approval_mode": source, "tools": {"<tool>": source}}}}`:
/// every server of the effective `settings` and every tool table it has
/// (null: a table without `approval_mode`); `sources` are the config sources
/// on their own, in the order they apply, and a setting's source is the
/// last one that sets it.
pub fn describe(settings: &Settings, sources: &[(&str, Settings)]) -> Value {
    let servers: Map<String, Value> = settings
        .mcp_servers
        .iter()
        .map(|(name, s)| {
            let from = |sets: &dyn Fn(&ServerSettings) -> bool| {
                sources.iter().rev().find(|(_, layer)| layer.mcp_servers.get(name).is_some_and(sets)).map(|(source, _)| *source)
            };
            let mut tools = Map::new();
            let mut tool_sources = Map::new();
            for (tool, t) in &s.tools {
                tools.insert(tool.clone(), json!(t.approval_mode.map(|m| m.as_str())));
                if t.approval_mode.is_some() {
                    let source = from(&|l| l.tools.get(tool).is_some_and(|lt| lt.approval_mode.is_some()));
                    tool_sources.insert(tool.clone(), json!(source));
                }
            }
            let mut sources = json!({"tools": tool_sources});
            if s.default_tools_approval_mode.is_some() {
                sources["default_tools_approval_mode"] = json!(from(&|l| l.default_tools_approval_mode.is_some()));
            }
            (name.clone(), json!({
                "transport": if s.url.is_some() { "http" } else { "stdio" },
                "enabled": s.enabled.unwrap_or(true),
                "default_tools_approval_mode": s.default_tools_approval_mode.map(|m| m.as_str()),
                "tools": tools,
                "sources": sources,
            }))
        })
        .collect();
    Value::Object(servers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codex::config::BaseConfig;

    fn base(file: &str, overrides: &[&str]) -> (tempfile::TempDir, BaseConfig) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), file).unwrap();
        let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
        let base = BaseConfig::load(dir.path(), &overrides).unwrap();
        (dir, base)
    }

    #[test]
    fn each_setting_names_the_last_source_that_set_it() {
        let file = "[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.a.tools.t]\napproval_mode = \"prompt\"\n\
                    [mcp_servers.a.tools.u]\napproval_mode = \"approve\"\n[mcp_servers.a.tools.\"notes.append\"]\napproval_mode = \"approve\"\n";
        let (_dir, base) = base(file, &["mcp_servers.a.tools.t.approval_mode=approve", "mcp_servers.b.url=\"http://h\""]);
        let thread = json!({"mcp_servers.b.default_tools_approval_mode": "prompt", "mcp_servers.a.tools.v": {"approval_mode": "writes"}});
        let settings = base.for_thread(Some(&thread)).unwrap();
        let got = describe(&settings, &base.sources(Some(&thread), crate::codex::config::THREAD_START));
        assert_eq!(
            got["a"],
            json!({"transport": "stdio", "enabled": true, "default_tools_approval_mode": null,
                   "tools": {"t": "approve", "u": "approve", "notes.append": "approve", "v": "writes"},
                   "sources": {"tools": {"t": "-c", "u": "config.toml", "notes.append": "config.toml", "v": "thread/start config"}}})
        );
        assert_eq!(
            got["b"],
            json!({"transport": "http", "enabled": true, "default_tools_approval_mode": "prompt", "tools": {},
                   "sources": {"tools": {}, "default_tools_approval_mode": "thread/start config"}})
        );
    }

    #[test]
    fn a_table_without_a_mode_is_listed_with_no_source() {
        let (_dir, base) = base("[mcp_servers.a]\ncommand = \"x\"\nenabled = false\n[mcp_servers.a.tools.t]\n", &[]);
        let settings = base.for_thread(None).unwrap();
        let got = describe(&settings, &base.sources(None, crate::codex::config::THREAD_START));
        assert_eq!((&got["a"]["tools"], &got["a"]["sources"], &got["a"]["enabled"]), (&json!({"t": null}), &json!({"tools": {}}), &json!(false)));
    }
}
