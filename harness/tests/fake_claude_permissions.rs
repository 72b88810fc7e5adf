//! The fake `claude -p` decides permissions like the measured real Claude
//! Code (../shared/PROVIDERS.md, section "Claude Code"): rules from every
//! source and their precedence, the permission prompt tool, call `_meta`.
//! Drives the fake directly, without any driver.

mod claude_lab;

use claude_lab::*;
use serde_json::{json, Value};

#[test]
fn exact_allow_runs_and_the_same_tool_on_another_server_is_not_granted() {
    for version in [OLD, NEW] {
        let lab = Lab::new(version, vec![pair()]);
        let ran = lab.play(&["--allowedTools", "mcp__lab__echo"]);
        let o = lab.outcomes();
        assert_eq!(o.len(), 2, "{version}");
        assert_eq!((o[0]["decision"].as_str(), o[0]["item_status"].as_str(), o[0]["prompted"].as_bool()), (Some("allowed"), Some("completed"), Some(false)));
        assert_eq!(o[0]["model_saw"], json!([{"type": "text", "text": "lab/echo ok: {\"n\":0}"}]));
        assert_eq!(o[0]["call_id"], "toolu_fake_0");
        assert_eq!((o[1]["decision"].as_str(), o[1]["item_status"].as_str()), (Some("denied"), Some("none")));
        assert_eq!(o[1]["model_saw"], not_granted("mcp__other__echo"));
        assert_eq!(o[1]["answer"], Value::Null);
        assert_eq!(lab.calls("lab").len(), 1);
        assert_eq!(lab.calls("other").len(), 0, "the other server is never called");
        let denied = ran.denied_events();
        assert_eq!(denied.len(), 1);
        assert_eq!(denied[0]["tool_name"], "mcp__other__echo");
        assert_eq!(denied[0]["tool_use_id"], "toolu_fake_1");
        assert_eq!(denied[0]["message"], not_granted("mcp__other__echo"));
        assert_eq!(ran.result()["permission_denials"], json!([{"tool_name": "mcp__other__echo", "tool_use_id": "toolu_fake_1", "tool_input": {"n": 1}}]));
    }
}

#[test]
fn server_wide_allow_forms_and_the_ones_that_allow_nothing() {
    let steps = || vec![call(0, "lab", "echo", json!({})), call(1, "lab", "write", json!({})), call(2, "other", "echo", json!({}))];
    for (rule, expected) in [
        ("mcp__lab", ["allowed", "allowed", "denied"]),
        ("mcp__lab__*", ["allowed", "allowed", "denied"]),
        ("mcp__lab__ech*", ["allowed", "denied", "denied"]),
        ("mcp__lab__echo(*)", ["allowed", "denied", "denied"]),
        ("mcp__*", ["denied", "denied", "denied"]),
        ("mcp__*__echo", ["denied", "denied", "denied"]),
        ("echo", ["denied", "denied", "denied"]),
        ("*", ["denied", "denied", "denied"]),
    ] {
        let lab = Lab::new(NEW, vec![steps()]);
        lab.play(&["--allowedTools", rule]);
        let got: Vec<String> = lab.outcomes().iter().map(|o| o["decision"].as_str().unwrap_or("").to_string()).collect();
        assert_eq!(got, expected, "--allowedTools {rule}");
    }
    // Comma- and space-separated lists, and several values after one flag.
    for args in [&["--allowedTools", "mcp__lab__echo,mcp__other__echo"][..], &["--allowed-tools", "mcp__lab__echo mcp__other__echo"], &["--allowedTools", "mcp__lab__echo", "mcp__other__echo"]] {
        let lab = Lab::new(NEW, vec![pair()]);
        lab.play(args);
        assert!(lab.outcomes().iter().all(|o| o["decision"] == "allowed"), "{args:?}");
    }
}

#[test]
fn deny_beats_allow_and_removes_the_tool() {
    for version in [OLD, NEW] {
        for flags in [
            vec!["--allowedTools", "mcp__lab__echo", "--disallowedTools", "mcp__lab__echo"],
            vec!["--allowedTools", "mcp__lab__echo", "--settings", r#"{"permissions":{"deny":["mcp__lab"]}}"#],
            vec!["--allowedTools", "mcp__lab__echo", "--disallowed-tools", "mcp__*"],
        ] {
            let lab = Lab::new(version, vec![pair()]);
            let ran = lab.play(&flags);
            let o = &lab.outcomes()[0];
            assert_eq!(o["decision"], "removed", "{flags:?}");
            assert_eq!(o["model_saw"], "<tool_use_error>Error: No such tool available: mcp__lab__echo</tool_use_error>");
            assert_eq!(lab.calls("lab").len(), 0);
            let tools = ran.init()["tools"].as_array().unwrap().clone();
            assert!(!tools.contains(&json!("mcp__lab__echo")), "{tools:?}");
            // Removal is not a permission denial.
            assert!(ran.result()["permission_denials"].as_array().unwrap().iter().all(|d| d["tool_name"] != "mcp__lab__echo"));
            assert!(ran.denied_events().iter().all(|d| d["tool_name"] != "mcp__lab__echo"));
        }
    }
}

#[test]
fn ask_beats_allow_and_bypass() {
    let ask = r#"{"permissions":{"ask":["mcp__lab__echo"]}}"#;
    let lab = Lab::new(NEW, vec![pair()]);
    lab.play(&["--settings", ask, "--allowedTools", "mcp__lab__echo"]);
    assert_eq!(lab.outcomes()[0]["model_saw"], not_granted("mcp__lab__echo"));
    assert_eq!(lab.calls("lab").len(), 0);

    let lab = Lab::new(NEW, vec![pair()]);
    lab.play_env(&["--settings", ask, "--permission-mode", "bypassPermissions"], &[("IS_SANDBOX", "1")]);
    let o = lab.outcomes();
    assert_eq!(o[0]["decision"], "denied", "an ask rule gates even under bypassPermissions");
    assert_eq!(o[1]["decision"], "allowed");
}

#[test]
fn settings_sources() {
    let allow = r#"{"permissions":{"allow":["mcp__lab__echo"]}}"#;
    // CLAUDE_CONFIG_DIR/settings.json
    let lab = Lab::new(NEW, vec![pair()]);
    std::fs::write(lab.dir.join("cfg/settings.json"), allow).unwrap();
    let ran = lab.play(&[]);
    assert_eq!(lab.outcomes()[0]["decision"], "allowed");
    let user = ran.of_type("user").next().unwrap();
    assert_eq!(user["tool_result_meta"][0]["permission_decision"], json!({"decision": "accept", "source": "user_permanent", "reason_type": "rule"}));
    // ... unless --setting-sources leaves out user.
    let lab2 = Lab::new(NEW, vec![pair()]);
    std::fs::write(lab2.dir.join("cfg/settings.json"), allow).unwrap();
    lab2.play(&["--setting-sources", "project,local"]);
    assert_eq!(lab2.outcomes()[0]["decision"], "denied");
    // --settings inline JSON and file.
    let lab = Lab::new(OLD, vec![pair()]);
    lab.play(&["--settings", allow]);
    assert_eq!(lab.outcomes()[0]["decision"], "allowed");
    let lab = Lab::new(OLD, vec![pair()]);
    let file = lab.dir.join("flag-settings.json");
    std::fs::write(&file, allow).unwrap();
    lab.play(&["--settings", file.to_str().unwrap()]);
    assert_eq!(lab.outcomes()[0]["decision"], "allowed");
    // An untrusted project's allow entries are ignored, with the real warning.
    let lab = Lab::new(NEW, vec![pair()]);
    std::fs::create_dir_all(lab.dir.join("work/.claude")).unwrap();
    std::fs::write(lab.dir.join("work/.claude/settings.json"), allow).unwrap();
    let ran = lab.play(&[]);
    assert_eq!(lab.outcomes()[0]["decision"], "denied");
    assert!(ran.stderr.contains("Ignoring 1 permissions.allow entry from .claude/settings.json: this workspace has not been trusted."), "{}", ran.stderr);
    // Trusted in .claude.json: they apply.
    let lab = Lab::new(NEW, vec![pair()]);
    std::fs::create_dir_all(lab.dir.join("work/.claude")).unwrap();
    std::fs::write(lab.dir.join("work/.claude/settings.json"), allow).unwrap();
    let work = lab.dir.join("work").display().to_string();
    std::fs::write(lab.dir.join("cfg/.claude.json"), json!({"projects": {work: {"hasTrustDialogAccepted": true}}}).to_string()).unwrap();
    lab.play(&[]);
    assert_eq!(lab.outcomes()[0]["decision"], "allowed");
    // A missing --settings file stops the CLI.
    let ran = Lab::new(NEW, vec![pair()]).run(&["-p", "x", "--settings", "/nonexistent/s.json"]);
    assert_eq!((ran.code, ran.stderr.trim()), (1, "Error: Settings file not found: /nonexistent/s.json"));
}


#[test]
fn permission_prompt_tool_allow_deny_and_garbage() {
    for version in [OLD, NEW] {
        let (lab, ran) = with_prompt_tool(version, r#"{"behavior":"allow"}"#, &["--allowedTools", "mcp__lab__echo"]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        let asks = lab.calls("perm");
        assert_eq!(asks.len(), 1, "only the gated call asks");
        assert_eq!(asks[0]["arguments"], json!({"tool_name": "mcp__other__echo", "input": {"n": 1}, "tool_use_id": "toolu_fake_1"}));
        assert_eq!(asks[0]["meta"]["claudecode/toolUseId"], "toolu_fake_1");
        let o = lab.outcomes();
        assert_eq!((o[0]["prompted"].as_bool(), o[0]["decision"].as_str()), (Some(false), Some("allowed")));
        assert_eq!((o[1]["prompted"].as_bool(), o[1]["answer"].as_str(), o[1]["decision"].as_str()), (Some(true), Some("allow"), Some("prompt")));
        assert_eq!(o[1]["item_status"], "completed");
        assert_eq!(lab.calls("other")[0]["arguments"], json!({"n": 1}));
        assert_eq!(ran.result()["permission_denials"], json!([]));

        let (lab, _) = with_prompt_tool(version, r#"{"behavior":"allow","updatedInput":{"n":99}}"#, &[]);
        assert_eq!(lab.calls("other")[0]["arguments"], json!({"n": 99}), "updatedInput replaces the input");

        let (lab, ran) = with_prompt_tool(version, r#"{"behavior":"deny","message":"NOPE-FROM-HOST"}"#, &[]);
        let o = lab.outcomes();
        assert_eq!((o[0]["answer"].as_str(), o[0]["model_saw"].as_str(), o[0]["item_status"].as_str()), (Some("deny"), Some("NOPE-FROM-HOST"), Some("none")));
        assert_eq!(lab.calls("lab").len(), 0);
        assert_eq!(lab.calls("perm").len(), 2);
        assert!(ran.denied_events().is_empty(), "a prompt tool's deny sends no permission_denied event");
        assert_eq!(ran.result()["permission_denials"].as_array().unwrap().len(), 2);

        for garbage in ["yes please", r#"{"behavior":"deny"}"#, r#"{"behavior":"sure"}"#] {
            let (lab, _) = with_prompt_tool(version, garbage, &[]);
            let o = &lab.outcomes()[0];
            assert_eq!(o["answer"], "invalid", "{garbage}");
            let text = o["model_saw"].as_str().unwrap();
            assert!(text.starts_with("The permission prompt tool returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}."), "{text}");
            assert_eq!(text.contains("updatedPermissions"), version == NEW, "{version}: {text}");
            assert_eq!(lab.calls("lab").len(), 0);
        }
    }
}

#[test]
fn missing_permission_prompt_tool_stops_at_the_first_gated_call() {
    let lab = Lab::new(NEW, vec![pair()]);
    let config = lab.two_servers();
    let ran = lab.run(&["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config, "--permission-prompt-tool", "mcp__lab__nosuch"]);
    assert_eq!(ran.code, 1);
    assert!(ran.stderr.starts_with("Error: MCP tool mcp__lab__nosuch (passed via --permission-prompt-tool) not found. Available MCP tools: mcp__lab__echo, "), "{}", ran.stderr);
    assert!(ran.of_type("result").next().is_none());
    let o = &lab.outcomes()[0];
    assert!(o["model_saw"].as_str().unwrap().starts_with("<tool_use_error>Error calling tool (mcp__lab__echo): Error: MCP tool mcp__lab__nosuch"));
}

#[test]
fn call_meta_carries_the_tool_use_id() {
    for version in [OLD, NEW] {
        let lab = Lab::new(version, vec![pair()]);
        let ran = lab.play(&["--allowedTools", "mcp__lab,mcp__other"]);
        let uses: Vec<Value> = ran.of_type("assistant").flat_map(|m| m["message"]["content"].as_array().cloned().unwrap_or_default()).filter(|b| b["type"] == "tool_use").collect();
        assert_eq!(uses.len(), 2);
        for (server, used) in ["lab", "other"].iter().zip(&uses) {
            let calls = lab.received(server, "tools/call");
            assert_eq!(calls.len(), 1);
            let meta = &calls[0]["params"]["_meta"];
            assert_eq!(meta["claudecode/toolUseId"], used["id"]);
            // progressToken is the JSON-RPC request id; initialize is id 0.
            assert_eq!(meta["progressToken"], calls[0]["id"]);
            assert_eq!(calls[0]["id"], 2, "{version}");
            assert_eq!(meta.as_object().unwrap().len(), 2, "{meta}");
        }
    }
}
