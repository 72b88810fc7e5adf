//! The fake `claude -p` renames MCP tool names like the measured real Claude
//! Code (2.1.266 and 2.1.332): every character outside `[A-Za-z0-9_-]` in
//! the server or tool name becomes `_` for the model, the permission rules
//! and the permission prompt tool; only `tools/call` carries the original.
//! Drives the fake directly, without any driver.

mod claude_lab;

use claude_lab::*;
use serde_json::{json, Value};

/// `notes` with `notes.append` and `plain`; the model calls `notes.append`.
fn notes_lab(version: &str, tools: Value, extra: &[&str]) -> (Lab, Ran) {
    let lab = Lab::new(version, vec![vec![call(0, "notes", "notes.append", json!({"n": 0}))]]);
    let config = json!({"mcpServers": {"notes": lab.stdio("notes", tools)}}).to_string();
    let mut args = vec!["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config];
    args.extend_from_slice(extra);
    let ran = lab.run(&args);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    (lab, ran)
}

fn dotted() -> Value {
    json!([{"name": "notes.append"}, {"name": "plain"}])
}

#[test]
fn the_model_and_the_rules_see_the_renamed_name_and_the_server_the_original() {
    for version in [OLD, NEW] {
        for rule in [&["--allowedTools", "mcp__notes__notes_append"][..], &["--settings", r#"{"permissions":{"allow":["mcp__notes__notes_append"]}}"#]] {
            let (lab, ran) = notes_lab(version, dotted(), rule);
            let tools: Vec<&str> = ran.init()["tools"].as_array().unwrap().iter().filter_map(Value::as_str).filter(|t| t.starts_with("mcp__")).collect();
            assert_eq!(tools, ["mcp__notes__notes_append", "mcp__notes__plain"]);
            let uses: Vec<Value> = ran.of_type("assistant").flat_map(|m| m["message"]["content"].as_array().cloned().unwrap_or_default()).collect();
            assert_eq!(uses[0]["name"], "mcp__notes__notes_append");
            assert_eq!(lab.outcomes()[0]["item_status"], "completed", "{version} {rule:?}");
            assert_eq!(lab.calls("notes")[0]["tool"], "notes.append");
        }
    }
}

#[test]
fn dotted_rules_match_nothing() {
    for version in [OLD, NEW] {
        for rule in [&["--allowedTools", "mcp__notes__notes.append"][..], &["--settings", r#"{"permissions":{"allow":["mcp__notes__notes.append"]}}"#]] {
            let (lab, ran) = notes_lab(version, dotted(), rule);
            assert_eq!(lab.outcomes()[0]["model_saw"], not_granted("mcp__notes__notes_append"), "{version} {rule:?}");
            assert_eq!(ran.denied_events()[0]["tool_name"], "mcp__notes__notes_append");
            assert!(lab.calls("notes").is_empty());
        }
        // A dotted deny rule removes nothing; the renamed one removes the tool.
        let (lab, _) = notes_lab(version, dotted(), &["--disallowedTools", "mcp__notes__notes.append"]);
        assert_eq!(lab.outcomes()[0]["decision"], "denied");
        let (lab, ran) = notes_lab(version, dotted(), &["--disallowedTools", "mcp__notes__notes_append"]);
        assert_eq!(lab.outcomes()[0]["model_saw"], "<tool_use_error>Error: No such tool available: mcp__notes__notes_append</tool_use_error>");
        assert!(!ran.init()["tools"].as_array().unwrap().contains(&json!("mcp__notes__notes_append")));
    }
}

/// A run whose `perm` server's `p.approve` allows everything, named to
/// `--permission-prompt-tool` as `prompt_tool`.
fn with_dotted_prompt_tool(version: &str, prompt_tool: &str) -> (Lab, Ran) {
    let lab = Lab::new(version, vec![vec![call(0, "notes", "notes.append", json!({"n": 0}))]]);
    let perm = lab.stdio("perm", json!([{"name": "p.approve", "result": {"content": [{"type": "text", "text": "{\"behavior\":\"allow\"}"}]}}]));
    let config = json!({"mcpServers": {"notes": lab.stdio("notes", dotted()), "perm": perm}}).to_string();
    let ran = lab.run(&["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config, "--permission-prompt-tool", prompt_tool]);
    (lab, ran)
}

#[test]
fn the_prompt_tool_is_asked_about_the_renamed_name() {
    for version in [OLD, NEW] {
        let (lab, ran) = with_dotted_prompt_tool(version, "mcp__perm__p_approve");
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        assert_eq!(lab.calls("perm")[0]["tool"], "p.approve");
        assert_eq!(lab.calls("perm")[0]["arguments"]["tool_name"], "mcp__notes__notes_append");
        assert_eq!(lab.calls("notes")[0]["tool"], "notes.append");
        // The dotted prompt tool name is not found: exit 1, renamed names listed.
        let (_, ran) = with_dotted_prompt_tool(version, "mcp__perm__p.approve");
        assert_eq!(ran.code, 1);
        assert!(ran.stderr.contains("Available MCP tools: mcp__notes__notes_append, mcp__notes__plain, mcp__perm__p_approve"), "{}", ran.stderr);
    }
}

#[test]
fn names_that_rename_alike_are_one_tool_the_first_listed() {
    for (tools, called) in [(json!([{"name": "notes.append"}, {"name": "notes_append"}]), "notes.append"), (json!([{"name": "notes_append"}, {"name": "notes.append"}]), "notes_append")] {
        let (lab, ran) = notes_lab(NEW, tools, &["--allowedTools", "mcp__notes"]);
        let mcp: Vec<&Value> = ran.init()["tools"].as_array().unwrap().iter().filter(|t| t.as_str().is_some_and(|t| t.starts_with("mcp__"))).collect();
        assert_eq!(mcp, [&json!("mcp__notes__notes_append")]);
        assert_eq!(lab.calls("notes")[0]["tool"], called);
    }
}
