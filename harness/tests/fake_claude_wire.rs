//! The fake `claude -p` renders and speaks like the measured real Claude
//! Code: tool timeouts, result rendering, stream-json shapes, the
//! per-version MCP handshake, modes, bad input, sessions and HTTP servers.
//! Drives the fake directly, without any driver.

mod claude_lab;

use std::process::Command;
use std::time::{Duration, Instant};

use claude_lab::*;
use serde_json::{json, Value};

fn slow_lab(version: &str, server_timeout: Option<u64>, delay_ms: u64) -> Lab {
    let lab = Lab::new(version, vec![vec![call(0, "lab", "slow", json!({}))]]);
    let mut server = lab.stdio("lab", json!([{"name": "slow", "delay_ms": delay_ms}]));
    if let Some(t) = server_timeout {
        server["timeout"] = json!(t);
    }
    std::fs::write(lab.dir.join("mcp.json"), json!({"mcpServers": {"lab": server}}).to_string()).unwrap();
    lab
}

#[test]
fn tool_timeout_rules() {
    for (version, reason) in [(OLD, "McpError: MCP error -32001: Request timed out"), (NEW, "SdkError: Request timed out")] {
        let lab = slow_lab(version, Some(1500), 3000);
        let start = Instant::now();
        let ran = lab.run(&["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", "../mcp.json", "--allowedTools", "mcp__lab"]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        assert!(start.elapsed() < Duration::from_millis(2900), "{:?}", start.elapsed());
        let o = &lab.outcomes()[0];
        assert_eq!(o["model_saw"], "MCP server \"lab\" tool \"slow\" timed out after 1s");
        assert_eq!((o["item_status"].as_str(), o["is_error"].as_bool()), (Some("failed"), Some(true)));
        let cancelled = lab.received("lab", "notifications/cancelled");
        assert_eq!(cancelled.len(), 1, "{version}");
        // Killed at exit, as the real CLI does: the server never reads EOF.
        assert!(!lab.recording("lab").iter().any(|e| e["event"] == "eof"), "{version}");
        let call_id = &lab.received("lab", "tools/call")[0]["id"];
        assert_eq!(cancelled[0]["params"], json!({"requestId": call_id, "reason": reason}));
    }
    // A server timeout under 1000 ms is ignored: MCP_TOOL_TIMEOUT applies.
    let lab = slow_lab(NEW, Some(500), 1500);
    lab.run_env(&["-p", "go", "--mcp-config", "../mcp.json", "--allowedTools", "mcp__lab"], &[("MCP_TOOL_TIMEOUT", "2500")]);
    assert_eq!(lab.outcomes()[0]["item_status"], "completed");
    // MCP_TOOL_TIMEOUT is clamped to at least 1 s.
    let lab = slow_lab(NEW, None, 3000);
    let start = Instant::now();
    lab.run_env(&["-p", "go", "--mcp-config", "../mcp.json", "--allowedTools", "mcp__lab"], &[("MCP_TOOL_TIMEOUT", "200")]);
    assert!(start.elapsed() >= Duration::from_millis(950));
    assert_eq!(lab.outcomes()[0]["model_saw"], "MCP server \"lab\" tool \"slow\" timed out after 1s");
    // N is whole seconds, rounded down.
    let lab = slow_lab(OLD, Some(2500), 4000);
    lab.run(&["-p", "go", "--mcp-config", "../mcp.json", "--allowedTools", "mcp__lab"]);
    assert_eq!(lab.outcomes()[0]["model_saw"], "MCP server \"lab\" tool \"slow\" timed out after 2s");
}

fn result_lab(result: Value) -> (Lab, Ran) {
    let lab = Lab::new(NEW, vec![vec![call(0, "lab", "t", json!({}))]]);
    let config = json!({"mcpServers": {"lab": lab.stdio("lab", json!([{"name": "t", "result": result}]))}}).to_string();
    let ran = lab.run(&["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config, "--allowedTools", "mcp__lab__t"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    (lab, ran)
}

#[test]
fn annotations_dropped_audience_kept_resource_flattened() {
    let (lab, ran) = result_lab(json!({"content": [
        {"type": "text", "text": "FOR-ASSISTANT", "annotations": {"audience": ["assistant"]}},
        {"type": "text", "text": "FOR-USER", "annotations": {"audience": ["user"], "priority": 0.0}},
        {"type": "resource", "resource": {"uri": "file:///lab/x.txt", "mimeType": "text/plain", "text": "EMBEDDED"}},
    ]}));
    let expected = json!([
        {"type": "text", "text": "FOR-ASSISTANT"},
        {"type": "text", "text": "FOR-USER"},
        {"type": "text", "text": "[Resource from lab at file:///lab/x.txt] EMBEDDED"},
    ]);
    let o = &lab.outcomes()[0];
    assert_eq!(o["model_saw"], expected);
    assert_eq!(o["mcp_result"]["content"][0]["annotations"], json!({"audience": ["assistant"]}), "mcp_result is what the server sent");
    let user = ran.of_type("user").next().unwrap();
    assert_eq!(user["message"]["content"][0]["content"], expected);
}

#[test]
fn structured_content_replaces_text_and_is_error_becomes_an_error_result() {
    let (lab, ran) = result_lab(json!({"content": [{"type": "text", "text": "TEXT-BLOCK"}], "structuredContent": {"answer": 42}}));
    assert_eq!(lab.outcomes()[0]["model_saw"], json!("{\"answer\":42}"));
    let user = ran.of_type("user").next().unwrap();
    assert_eq!(user["tool_use_result"], json!({"content": "{\"answer\":42}", "structuredContent": {"answer": 42}}));

    let lab = Lab::new(OLD, vec![vec![call(0, "lab", "t", json!({}))]]);
    let config = json!({"mcpServers": {"lab": lab.stdio("lab", json!([{"name": "t", "result": {"content": [{"type": "text", "text": "FAILED"}], "isError": true}}]))}}).to_string();
    let ran = lab.run(&["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config, "--allowedTools", "mcp__lab__t"]);
    let block = &ran.of_type("user").next().unwrap()["message"]["content"][0];
    assert_eq!((block["content"].as_str(), block["is_error"].as_bool()), (Some("FAILED"), Some(true)));
    // 2.1.332 defers MCP tools; an error then carries the input schema hint
    // (unless ENABLE_TOOL_SEARCH=false inlines the tools).
    for (env, hint) in [(Some("true"), true), (Some("false"), false)] {
        let lab = Lab::new(NEW, vec![vec![call(0, "lab", "t", json!({}))]]);
        let config = json!({"mcpServers": {"lab": lab.stdio("lab", json!([{"name": "t", "result": {"content": [{"type": "text", "text": "FAILED"}], "isError": true}}]))}}).to_string();
        let env: Vec<(&str, &str)> = env.map(|v| ("ENABLE_TOOL_SEARCH", v)).into_iter().collect();
        lab.run_env(&["-p", "go", "--mcp-config", &config, "--allowedTools", "mcp__lab__t"], &env);
        let saw = lab.outcomes()[0]["model_saw"].as_str().unwrap().to_string();
        assert!(saw.starts_with("FAILED"));
        assert_eq!(saw.contains("This tool's input schema was not in your prompt"), hint, "{saw}");
    }
}

#[test]
fn stream_json_shape_and_other_formats() {
    let lab = Lab::new(NEW, vec![pair()]);
    let ran = lab.play(&["--allowedTools", "mcp__lab__echo"]);
    let init = ran.init();
    let session = init["session_id"].as_str().unwrap().to_string();
    assert_eq!(init["permissionMode"], "default");
    assert_eq!(init["claude_code_version"], NEW);
    assert_eq!(init["mcp_servers"], json!([{"name": "lab", "status": "connected", "source": "dynamic"}, {"name": "other", "status": "connected", "source": "dynamic"}]));
    let tools = init["tools"].as_array().unwrap();
    for t in ["mcp__lab__echo", "mcp__lab__write", "mcp__other__echo", "mcp__other__write"] {
        assert!(tools.contains(&json!(t)), "{t}");
    }
    let types: Vec<String> = ran.events.iter().map(|e| format!("{}/{}", e["type"].as_str().unwrap_or(""), e["subtype"].as_str().unwrap_or(""))).collect();
    assert_eq!(types, ["system/init", "assistant/", "user/", "assistant/", "system/permission_denied", "user/", "assistant/", "result/success"]);
    assert!(ran.events.iter().all(|e| e["session_id"] == session.as_str()));
    let first_use = &ran.events[1]["message"];
    assert_eq!(first_use["role"], "assistant");
    assert_eq!(first_use["content"], json!([{"type": "tool_use", "id": "toolu_fake_0", "name": "mcp__lab__echo", "input": {"n": 0}}]));
    let result_block = &ran.events[2]["message"]["content"][0];
    assert_eq!((result_block["type"].as_str(), result_block["tool_use_id"].as_str()), (Some("tool_result"), Some("toolu_fake_0")));
    assert!(result_block.get("is_error").is_none());
    let denied_block = &ran.events[5]["message"]["content"][0];
    assert_eq!(denied_block["is_error"], true);
    assert_eq!(ran.events[5]["tool_result_meta"], json!([{"id": "toolu_fake_1", "non_execution_kind": "user-rejected", "permission_decision": {"decision": "reject", "source": "config"}}]));
    let result = ran.result();
    assert_eq!((result["is_error"].as_bool(), result["num_turns"].as_u64(), result["result"].as_str()), (Some(false), Some(3), Some("Done.")));
    // Every stdout event is in the transcript, between launch and exit.
    let t = lab.transcript();
    assert_eq!(t.first().unwrap()["event"], "launch");
    let exit = t.last().unwrap();
    assert_eq!((&exit["event"], &exit["code"]), (&json!("exit"), &json!(0)), "{exit}");
    // Each record names the process that wrote it.
    assert!(t.iter().all(|e| e[fakes::wire::PROCESS] == t[0]["pid"]), "{t:?}");
    let recorded: Vec<Value> = t.iter().filter(|e| e["dir"] == "out").map(|e| e["msg"].clone()).collect();
    assert_eq!(recorded, ran.events);

    // 2.1.266: no server source in init, no permission_decision.
    let lab = Lab::new(OLD, vec![pair()]);
    let ran = lab.play(&["--allowedTools", "mcp__lab__echo"]);
    assert_eq!(ran.init()["mcp_servers"], json!([{"name": "lab", "status": "connected"}, {"name": "other", "status": "connected"}]));
    let users: Vec<&Value> = ran.of_type("user").collect();
    assert!(users[0].get("tool_result_meta").is_none());
    assert_eq!(users[1]["tool_result_meta"], json!([{"id": "toolu_fake_1", "non_execution_kind": "user-rejected"}]));

    // json: the result object alone; text: the final text.
    let lab = Lab::new(NEW, vec![pair()]);
    let config = lab.two_servers();
    let ran = lab.run(&["-p", "go", "--output-format", "json", "--mcp-config", &config]);
    assert_eq!(ran.events.len(), 1);
    assert_eq!(ran.events[0]["type"], "result");
    assert_eq!(ran.events[0]["permission_denials"].as_array().unwrap().len(), 2);
    let lab = Lab::new(NEW, vec![pair()]);
    let ran = lab.run(&["-p", "go", "--mcp-config", &config]);
    assert_eq!(ran.stdout, "Done.\n");
    // stream-json needs --verbose in print mode.
    let ran = Lab::new(NEW, vec![]).run(&["-p", "go", "--output-format", "stream-json"]);
    assert_eq!((ran.code, ran.stderr.trim()), (1, "Error: When using --print, --output-format=stream-json requires --verbose"));
}

#[test]
fn version_profiles_differ_in_the_handshake() {
    for (version, discover, elicitation) in [(OLD, false, json!({})), (NEW, true, json!({"form": {}, "url": {}}))] {
        let lab = Lab::new(version, vec![pair()]);
        lab.play(&[]);
        let ins: Vec<Value> = lab.recording("lab").into_iter().filter(|e| e["dir"] == "in").map(|e| e["msg"].clone()).collect();
        let methods: Vec<&str> = ins.iter().map(|m| m["method"].as_str().unwrap_or("")).collect();
        if discover {
            assert_eq!(methods[..4], ["server/discover", "initialize", "notifications/initialized", "tools/list"]);
            assert_eq!(ins[0]["id"], "server-discover-probe-1");
            assert_eq!(ins[0]["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"], "claude-code");
        } else {
            assert_eq!(methods[..3], ["initialize", "notifications/initialized", "tools/list"]);
        }
        let init = ins.iter().find(|m| m["method"] == "initialize").unwrap();
        assert_eq!(init["id"], 0);
        assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
        assert_eq!(init["params"]["clientInfo"]["name"], "claude-code");
        assert_eq!(init["params"]["clientInfo"]["version"], version);
        assert_eq!(init["params"]["capabilities"]["elicitation"], elicitation);
        let v = Lab::new(version, vec![]).run(&["--version"]);
        assert_eq!((v.code, v.stdout.as_str()), (0, format!("{version} (Claude Code)\n").as_str()));
    }
}

#[test]
fn bypass_permissions_as_root_needs_is_sandbox() {
    let message = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons";
    for flags in [&["--permission-mode", "bypassPermissions"][..], &["--dangerously-skip-permissions"], &["--settings", r#"{"permissions":{"defaultMode":"bypassPermissions"}}"#]] {
        let lab = Lab::new(NEW, vec![pair()]);
        let config = lab.two_servers();
        let mut args = vec!["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config];
        args.extend_from_slice(flags);
        let ran = lab.run(&args);
        if is_root() {
            assert_eq!((ran.code, ran.stderr.trim()), (1, message), "{flags:?}");
            assert!(ran.events.is_empty());
            assert!(lab.recording("lab").is_empty(), "no MCP server is started");
            let exit = lab.transcript().last().unwrap().clone();
            assert_eq!((&exit["event"], &exit["code"]), (&json!("exit"), &json!(1)), "{exit}");
        } else {
            assert_eq!(ran.code, 0, "{}", ran.stderr);
        }
        let lab = Lab::new(NEW, vec![pair()]);
        let config = lab.two_servers();
        let mut args = vec!["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config];
        args.extend_from_slice(flags);
        let ran = lab.run_env(&args, &[("IS_SANDBOX", "1")]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        assert_eq!(ran.init()["permissionMode"], "bypassPermissions");
        assert!(lab.outcomes().iter().all(|o| o["decision"] == "allowed"));
        let meta = &ran.of_type("user").next().unwrap()["tool_result_meta"][0]["permission_decision"];
        assert_eq!(meta["reason_type"], "mode");
    }
}

#[test]
fn plan_and_dont_ask_modes_refuse_without_asking() {
    let lab = Lab::new(NEW, vec![pair()]);
    let ran = lab.play(&["--permission-mode", "plan", "--allowedTools", "mcp__lab__echo"]);
    let o = lab.outcomes();
    assert_eq!(o[0]["model_saw"], "Cannot call mcp__lab__echo while in plan mode.");
    assert_eq!(ran.denied_events()[0]["decision_reason_type"], "mode");
    assert_eq!(lab.calls("lab").len(), 0);
    let (lab, _) = with_prompt_tool(OLD, r#"{"behavior":"allow"}"#, &["--permission-mode", "dontAsk", "--allowedTools", "mcp__lab__echo"]);
    let o = lab.outcomes();
    assert_eq!(o[0]["decision"], "allowed");
    assert!(o[1]["model_saw"].as_str().unwrap().starts_with("Permission to use mcp__other__echo has been denied because Claude Code is running in don't ask mode."));
    assert_eq!(lab.calls("perm").len(), 0, "dontAsk never calls the prompt tool");
    // auto has no classifier in print mode; the texts and notices differ
    // per version (recordings/drivers/print-mode-auto/), no permission_denied.
    for (version, start, notice) in [
        (OLD, "claude-opus-5[1m] is temporarily unavailable, so auto mode cannot determine the safety of mcp__lab__echo", None),
        (NEW, "Auto mode is unavailable: its safety check does not run for this session, so mcp__lab__echo was not run.", Some("auto_mode_no_server_check")),
    ] {
        let lab = Lab::new(version, vec![pair()]);
        let ran = lab.play(&["--permission-mode", "auto"]);
        assert!(lab.outcomes()[0]["model_saw"].as_str().unwrap().starts_with(start), "{version}: {}", lab.outcomes()[0]["model_saw"]);
        assert_eq!(ran.of_type("user").next().unwrap()["tool_result_meta"][0]["non_execution_kind"], "automode-unavailable");
        assert!(ran.denied_events().is_empty(), "{version}");
        let tags: Vec<&str> = ran.of_type("system").filter_map(|m| m["tag"].as_str()).collect();
        assert_eq!(tags.first().copied(), notice, "{version}");
    }
}

#[test]
fn bad_input_gives_the_real_errors_and_never_panics() {
    let lab = Lab::new(NEW, vec![pair()]);
    for (args, code, stderr) in [
        (vec!["-p", "x", "--bogus-flag"], 1, "error: unknown option '--bogus-flag'"),
        (vec!["-p", "x", "--mcp-config", "{not json"], 1, "Error: Invalid MCP configuration:\nMCP config file not found: "),
        (vec!["-p", "x", "--mcp-config", r#"{"mcpServers":5}"#], 1, "Error: Invalid MCP configuration:\nmcpServers: Invalid input: expected record, received number"),
        (vec!["-p", "x", "--model"], 1, "error: option '--model <model>' argument missing"),
        (vec!["-p", "x", "--permission-mode", "yolo"], 1, "error: option '--permission-mode <mode>' argument 'yolo' is invalid."),
        (vec!["-p", "x", "--session-id", "nope"], 1, "Error: Invalid session ID. Must be a valid UUID."),
        (vec!["-p"], 1, "Error: Input must be provided either through stdin or as a prompt argument when using --print"),
    ] {
        let ran = lab.run(&args);
        assert_eq!(ran.code, code, "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.starts_with(stderr), "{args:?}: {}", ran.stderr);
        assert!(!ran.stderr.contains("panicked"));
    }
    std::fs::write(lab.dir.join("bad.json"), "{bad").unwrap();
    let ran = lab.run(&["-p", "x", "--mcp-config", "../bad.json"]);
    assert_eq!((ran.code, ran.stderr.as_str()), (1, "Error: Invalid MCP configuration:\nMCP config is not a valid JSON\n"));
    // A server that cannot start is reported failed; its tools do not exist.
    let lab = Lab::new(OLD, vec![vec![call(0, "broken", "echo", json!({}))]]);
    let config = r#"{"mcpServers":{"broken":{"type":"stdio","command":"/nonexistent/server"}}}"#;
    let ran = lab.run(&["-p", "x", "--output-format", "stream-json", "--verbose", "--mcp-config", config, "--allowedTools", "mcp__broken"]);
    assert_eq!(ran.init()["mcp_servers"], json!([{"name": "broken", "status": "failed"}]));
    assert_eq!(lab.outcomes()[0]["model_saw"], "<tool_use_error>Error: No such tool available: mcp__broken__echo</tool_use_error>");
    // Without the wrapper's --run the fake says what is missing.
    let out = Command::new(FAKE_CLAUDE).arg("-p").arg("x").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn turns_advance_per_process_and_resume_keeps_the_session() {
    let lab = Lab::new(NEW, vec![vec![call(0, "lab", "echo", json!({}))], vec![call(1, "lab", "write", json!({}))]]);
    let first = lab.play(&["--allowedTools", "mcp__lab"]);
    let session = first.init()["session_id"].as_str().unwrap().to_string();
    let second = lab.play(&["--allowedTools", "mcp__lab", "--resume", &session]);
    assert_eq!(second.init()["session_id"], session.as_str());
    let steps: Vec<u64> = lab.outcomes().iter().map(|o| o["step"].as_u64().unwrap()).collect();
    assert_eq!(steps, [0, 1]);
    let tools: Vec<Value> = lab.calls("lab").iter().map(|c| c["tool"].clone()).collect();
    assert_eq!(tools, [json!("echo"), json!("write")]);
    // A third process has no scripted actions left: it only answers.
    let third = lab.play(&[]);
    assert_eq!(third.result()["num_turns"], 1);
    let unknown = "11111111-1111-1111-1111-111111111111";
    let ran = lab.run(&["-p", "x", "--output-format", "stream-json", "--verbose", "--resume", unknown]);
    assert_eq!((ran.code, ran.stderr.trim()), (1, format!("No conversation found with session ID: {unknown}").as_str()));
    assert_eq!(ran.result()["subtype"], "error_during_execution");
    let ran = lab.run(&["-p", "x", "--session-id", &session]);
    assert_eq!((ran.code, ran.stderr.trim()), (1, format!("Error: Session ID {session} is already in use.").as_str()));
}

/// A stdio MCP server in sh that sends `elicitation/create` during its one
/// tool call and records the client's answer.
fn elicit_server(lab: &Lab) -> Value {
    let answer = lab.dir.join("elicit-answer.json");
    let script = lab.dir.join("elicit.sh");
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"server/discover"'*) printf '%s\n' '{{"jsonrpc":"2.0","id":"server-discover-probe-1","error":{{"code":-32601,"message":"no"}}}}' ;;
    *'"initialize"'*) printf '%s\n' '{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"elicit","version":"0"}}}}}}' ;;
    *'"tools/list"'*) printf '%s\n' '{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"ask","inputSchema":{{"type":"object"}}}}]}}}}' ;;
    *'"tools/call"'*)
      printf '%s\n' '{{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{{"message":"name?","requestedSchema":{{"type":"object","properties":{{}}}}}}}}'
      IFS= read -r reply
      printf '%s\n' "$reply" > '{answer}'
      printf '%s\n' '{{"jsonrpc":"2.0","id":2,"result":{{"content":[{{"type":"text","text":"asked"}}]}}}}' ;;
  esac
done
"#,
            answer = answer.display()
        ),
    )
    .unwrap();
    json!({"type": "stdio", "command": "/bin/sh", "args": [script.display().to_string()]})
}

#[test]
fn elicitation_during_a_call_is_cancelled() {
    for version in [OLD, NEW] {
        let lab = Lab::new(version, vec![vec![call(0, "el", "ask", json!({}))]]);
        let config = json!({"mcpServers": {"el": elicit_server(&lab)}}).to_string();
        let ran = lab.run(&["-p", "x", "--mcp-config", &config, "--allowedTools", "mcp__el__ask"]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        let answer: Value = serde_json::from_str(&std::fs::read_to_string(lab.dir.join("elicit-answer.json")).unwrap()).unwrap();
        assert_eq!(answer["id"], "e1");
        assert_eq!(answer["result"], json!({"action": "cancel"}));
        assert_eq!(lab.outcomes()[0]["model_saw"], json!([{"type": "text", "text": "asked"}]));
    }
}

#[test]
fn http_server_gets_the_expanded_bearer_header_and_argv_is_recorded() {
    let lab = Lab::new(NEW, vec![vec![call(0, "web", "echo", json!({"q": 1}))]]);
    let token = lab.dir.join("web.token");
    std::fs::write(&token, "tok-123").unwrap();
    let catalog = fakes::mcp::Catalog::from_json_str(r#"{"server":"web","tools":[{"name":"echo"}]}"#).unwrap();
    let rec = fakes::wire::Recorder::open(&lab.recording_path("web")).unwrap();
    let server = fakes::mcp::start_http(catalog, rec, Some(token)).unwrap();
    let config = json!({"mcpServers": {"web": {"type": "http", "url": server.url(), "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}}}).to_string();
    let ran = lab.run_env(&["-p", "x", "--output-format", "stream-json", "--verbose", "--mcp-config", &config, "--allowedTools", "mcp__web__echo"], &[("WEB_TOKEN", "tok-123")]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.init()["mcp_servers"][0]["status"], "connected");
    assert_eq!(lab.outcomes()[0]["item_status"], "completed");
    assert_eq!(lab.calls("web")[0]["meta"]["claudecode/toolUseId"], "toolu_fake_0");
    // The optional GET stream, refused, opened with the session's bearer.
    let gets: Vec<Value> = lab.recording("web").into_iter().filter(|e| e["event"] == "http" && e["method"] == "GET").collect();
    assert_eq!(gets, [json!({"event": "http", "method": "GET", "path": "/mcp", "bearer": true, "status": 405})]);
    // The launch record holds argv as given (here with the variable, not the secret).
    let launch = &lab.transcript()[0];
    assert_eq!(launch["event"], "launch");
    assert!(launch["argv"].as_array().unwrap().contains(&json!(config)));
    assert!(!std::fs::read_to_string(lab.dir.join("claude.jsonl")).unwrap().contains("tok-123"));
    // A wrong token: the server fails to connect.
    let lab2 = Lab::new(NEW, vec![vec![call(0, "web", "echo", json!({}))]]);
    let ran = lab2.run_env(&["-p", "x", "--output-format", "stream-json", "--verbose", "--mcp-config", &config], &[("WEB_TOKEN", "wrong")]);
    assert_eq!(ran.init()["mcp_servers"][0]["status"], "failed");
    server.shutdown();
}

#[test]
fn user_scope_servers_unless_strict() {
    for (strict, expected) in [(false, "allowed"), (true, "removed")] {
        let lab = Lab::new(NEW, vec![vec![call(0, "usr", "echo", json!({}))]]);
        let usr = lab.stdio("usr", json!([{"name": "echo"}]));
        std::fs::write(lab.dir.join("cfg/.claude.json"), json!({"mcpServers": {"usr": usr}}).to_string()).unwrap();
        let mut args = vec!["-p", "x", "--allowedTools", "mcp__usr"];
        if strict {
            args.push("--strict-mcp-config");
        }
        let ran = lab.run(&args);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        assert_eq!(lab.outcomes()[0]["decision"], expected, "strict={strict}");
    }
}

#[test]
fn tool_search_loads_each_deferred_tool_once_before_its_call() {
    let calls = vec![call(0, "lab", "echo", json!({})), call(1, "lab", "echo", json!({})), call(2, "other", "echo", json!({}))];
    let tool_uses = |ran: &Ran| -> Vec<String> {
        let blocks = ran.of_type("assistant").flat_map(|m| m["message"]["content"].as_array().cloned().unwrap_or_default());
        blocks.filter(|b| b["type"] == "tool_use").map(|b| b["name"].as_str().unwrap_or("").to_string()).collect()
    };
    let lab = Lab::new(NEW, vec![calls.clone()]);
    let ran = lab.play_env(&["--allowedTools", "mcp__lab,mcp__other"], &[("ENABLE_TOOL_SEARCH", "true")]);
    let tools = ran.init()["tools"].as_array().unwrap().clone();
    let at = |name: &str| tools.iter().position(|t| t == name).unwrap();
    assert!(at("TaskStop") < at("ToolSearch") && at("ToolSearch") < at("WebFetch"), "{tools:?}");
    assert_eq!(tool_uses(&ran), ["ToolSearch", "mcp__lab__echo", "mcp__lab__echo", "ToolSearch", "mcp__other__echo"]);
    let search = ran.of_type("user").next().unwrap();
    assert_eq!(search["message"]["content"][0]["tool_use_id"], "toolu_search_0");
    assert_eq!(search["message"]["content"][0]["content"], json!([{"type": "tool_reference", "tool_name": "mcp__lab__echo"}]));
    // 13 deferred built-in tools and the four MCP tools.
    assert_eq!(search["tool_use_result"], json!({"matches": ["mcp__lab__echo"], "query": "select:mcp__lab__echo", "total_deferred_tools": 17}));
    assert_eq!(ran.result()["num_turns"], 6);
    assert_eq!(lab.outcomes().iter().filter(|o| o["decision"] == "allowed").count(), 3);
    // Inlined tools, or a version without tool search: the calls come straight.
    for (version, env) in [(NEW, "false"), (OLD, "true")] {
        let lab = Lab::new(version, vec![calls.clone()]);
        let ran = lab.play_env(&["--allowedTools", "mcp__lab,mcp__other"], &[("ENABLE_TOOL_SEARCH", env)]);
        assert!(!ran.init()["tools"].as_array().unwrap().contains(&json!("ToolSearch")), "{version}");
        assert_eq!(tool_uses(&ran), ["mcp__lab__echo", "mcp__lab__echo", "mcp__other__echo"], "{version}");
    }
}
