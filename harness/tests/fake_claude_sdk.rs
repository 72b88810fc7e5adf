//! The fake Claude Code in SDK host mode (`--input-format stream-json`, as
//! the Agent SDKs launch it): argv in both SDKs' forms, initialize with and
//! without mcpServers, can_use_tool and its answers, and the real CLI's
//! errors for lines it cannot take. Drives the fake as an SDK host would.

mod claude_lab;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use claude_lab::*;
use serde_json::{json, Value};

/// What the TS SDK 0.3.334 passes (SDK-FACTS.md), before the allow list.
const TS_ARGV: [&str; 6] = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--permission-prompt-tool=stdio"];

struct Session {
    code: i32,
    /// Everything the fake printed, in order.
    out: Vec<Value>,
    stderr: String,
}

impl Session {
    fn results(&self) -> Vec<&Value> {
        self.out.iter().filter(|m| m["type"] == "result").collect()
    }

    fn asked(&self) -> Vec<&Value> {
        self.out.iter().filter(|m| m["type"] == "control_request" && m["request"]["subtype"] == "can_use_tool").map(|m| &m["request"]).collect()
    }

    fn tool_results(&self) -> Vec<&Value> {
        let blocks = self.out.iter().filter(|m| m["type"] == "user").filter_map(|m| m["message"]["content"].as_array()).flatten();
        blocks.filter(|b| b["type"] == "tool_result").collect()
    }
}

/// Runs the fake with `args`, writes `lines`, answers each can_use_tool
/// with `answer(request)` and closes stdin after the last result.
fn host(lab: &Lab, args: &[&str], lines: &[Value], answer: &dyn Fn(&Value) -> Value) -> Session {
    host_env(lab, args, lines, answer, &[])
}

fn host_env(lab: &Lab, args: &[&str], lines: &[Value], answer: &dyn Fn(&Value) -> Value, env: &[(&str, &str)]) -> Session {
    let mut child = lab
        .command(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take();
    // A fake that exits early (bad input) closes the pipe: not an error here.
    for line in lines {
        let _ = writeln!(stdin.as_mut().unwrap(), "{line}");
    }
    let users = lines.iter().filter(|l| l["type"] == "user").count();
    if users == 0 {
        stdin = None;
    }
    let mut out = Vec::new();
    let mut results = 0;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let msg: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if msg["type"] == "control_request" && msg["request"]["subtype"] == "can_use_tool" {
            let reply = json!({"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"], "response": answer(&msg["request"])}});
            if let Some(s) = stdin.as_mut() {
                let _ = writeln!(s, "{reply}");
            }
        }
        if msg["type"] == "result" {
            results += 1;
            if results == users {
                stdin = None;
            }
        }
        out.push(msg);
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    Session { code: output.status.code().unwrap_or(-1), out, stderr: String::from_utf8_lossy(&output.stderr).to_string() }
}

fn initialize(servers: Option<Value>) -> Value {
    let mut request = json!({"subtype": "initialize", "hooks": {}});
    if let Some(s) = servers {
        request["mcpServers"] = s;
    }
    json!({"type": "control_request", "request_id": "init1", "request": request})
}

fn user(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}, "parent_tool_use_id": null, "session_id": ""})
}

fn servers_of(lab: &Lab) -> Value {
    serde_json::from_str::<Value>(&lab.two_servers()).unwrap()["mcpServers"].clone()
}

fn allow(request: &Value) -> Value {
    json!({"behavior": "allow", "updatedInput": request["input"], "toolUseID": request["tool_use_id"]})
}

#[test]
fn ts_sdk_servers_in_initialize_and_an_exact_allow_entry_skips_can_use_tool() {
    let lab = Lab::new(NEW, vec![pair()]);
    let mut args = TS_ARGV.to_vec();
    args.extend(["--allowedTools=mcp__lab__echo", "--await-initialize"]);
    let s = host(&lab, &args, &[initialize(Some(servers_of(&lab))), user("go")], &allow);
    assert_eq!(s.code, 0, "{}", s.stderr);
    let init = &s.out[0];
    assert_eq!((init["type"].as_str(), init["response"]["request_id"].as_str()), (Some("control_response"), Some("init1")));
    assert_eq!(init["response"]["response"]["mcp_servers_applied"], true);
    assert_eq!(init["response"]["response"]["claude_code_version"], NEW);
    // Only the same tool name on the other server is asked.
    let asked = s.asked();
    assert_eq!(asked.len(), 1, "{:?}", s.out);
    assert_eq!(asked[0]["tool_name"], "mcp__other__echo");
    assert_eq!(asked[0]["mcp_server"], json!({"name": "other", "source": "dynamic"}));
    assert_eq!(asked[0]["permission_suggestions"][0]["rules"], json!([{"toolName": "mcp__other__echo"}]));
    assert_eq!(asked[0]["tool_use_id"], "toolu_fake_1");
    assert_eq!((lab.calls("lab").len(), lab.calls("other").len()), (1, 1));
    assert_eq!(s.results()[0]["subtype"], "success");
}

#[test]
fn session_states_only_for_a_host_that_reads_them() {
    let lab = Lab::new(NEW, vec![pair()]);
    let mut args = TS_ARGV.to_vec();
    args.extend(["--allowedTools=mcp__lab__echo", "--await-initialize"]);
    // As the TS SDK sends it without hooks.
    let mut init = initialize(Some(servers_of(&lab)));
    init["request"].as_object_mut().unwrap().remove("hooks");
    let lines = [init, user("go")];
    let states = |s: &Session| -> Vec<String> {
        let changes = s.out.iter().filter(|m| m["subtype"] == "session_state_changed");
        changes.map(|m| m["state"].as_str().unwrap_or("").to_string()).collect()
    };
    let s = host_env(&lab, &args, &lines, &allow, &[("CLAUDE_CODE_SDK_READS_SESSION_STATE", "1")]);
    assert_eq!(states(&s), ["running", "requires_action", "running", "idle"]);
    let last = s.out.last().unwrap();
    assert_eq!((last["sdk_host_only"].as_bool(), last["session_id"].as_str()), (Some(true), s.results()[0]["session_id"].as_str()));
    assert_eq!(s.out[0]["response"]["pending_permission_requests"], json!([]));
    assert!(s.out[0]["response"]["response"].get("hooks_applied").is_none(), "no hooks were sent");
    let lab = Lab::new(NEW, vec![pair()]);
    let s = host(&lab, &args, &[initialize(Some(servers_of(&lab))), user("go")], &allow);
    assert!(states(&s).is_empty());
}

#[test]
fn python_sdk_argv_two_token_flags_and_mcp_config_json() {
    let lab = Lab::new(NEW, vec![pair()]);
    let config = lab.two_servers();
    let args = [
        "--output-format", "stream-json", "--verbose", "--system-prompt", "", "--allowedTools", "mcp__lab__echo",
        "--permission-prompt-tool", "stdio", "--mcp-config", &config, "--setting-sources=user,project", "--strict-mcp-config",
        "--permission-mode", "default", "--input-format", "stream-json",
    ];
    let deny = |r: &Value| json!({"behavior": "deny", "message": format!("NO-{}", r["tool_name"].as_str().unwrap())});
    let s = host(&lab, &args, &[initialize(None), user("go")], &deny);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert!(s.out[0]["response"]["response"].get("mcp_servers_applied").is_none());
    assert_eq!(s.out[0]["response"]["response"]["hooks_applied"], true, "hooks were sent");
    assert_eq!(s.asked().len(), 1);
    let results = s.tool_results();
    assert_eq!(results[1]["content"], "NO-mcp__other__echo");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(lab.calls("other").len(), 0, "a denied call never reaches the server");
    let result = s.results()[0];
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["permission_denials"][0]["tool_name"], "mcp__other__echo");
}

#[test]
fn allow_with_updated_input_runs_the_tool_with_it() {
    let lab = Lab::new(NEW, vec![pair()]);
    let config = lab.two_servers();
    let mut args = TS_ARGV.to_vec();
    args.extend(["--mcp-config", &config]);
    let changed = |r: &Value| json!({"behavior": "allow", "updatedInput": {"n": 99}, "toolUseID": r["tool_use_id"]});
    let s = host(&lab, &args, &[initialize(None), user("go")], &changed);
    assert_eq!(s.asked().len(), 2);
    assert_eq!(lab.calls("lab")[0]["arguments"], json!({"n": 99}), "{:?}", lab.calls("lab"));
}

#[test]
fn deny_with_interrupt_ends_the_turn_with_the_measured_texts() {
    let lab = Lab::new(NEW, vec![pair()]);
    let config = lab.two_servers();
    let mut args = TS_ARGV.to_vec();
    args.extend(["--mcp-config", &config]);
    let stop = |_: &Value| json!({"behavior": "deny", "message": "HOST-MESSAGE", "interrupt": true});
    let s = host(&lab, &args, &[initialize(None), user("go")], &stop);
    // Its input ending after an error result, the CLI exits 1 (measured).
    assert_eq!(s.code, 1, "{}", s.stderr);
    assert_eq!(s.asked().len(), 1, "the second call is never made");
    let text = s.tool_results()[0]["content"].as_str().unwrap().to_string();
    assert!(text.starts_with("The user doesn't want to proceed with this tool use.") && text.contains("STOP"), "{text}");
    let marker = s.out.iter().find(|m| m["type"] == "user" && m["message"]["content"][0]["type"] == "text").unwrap();
    assert_eq!(marker["message"]["content"][0]["text"], "[Request interrupted by user for tool use]");
    let r = s.results()[0];
    assert_eq!((r["subtype"].as_str(), r["is_error"].as_bool(), r["terminal_reason"].as_str()), (Some("error_during_execution"), Some(true), Some("aborted_tools")));
    assert_eq!(r["result"], Value::Null);
    assert_eq!(r["errors"], json!(["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"]));
    assert_eq!(lab.calls("lab").len(), 0);
}

#[test]
fn each_user_message_plays_the_next_turn() {
    let lab = Lab::new(NEW, vec![vec![call(0, "lab", "echo", json!({}))], vec![call(1, "lab", "write", json!({}))]]);
    let mut args = TS_ARGV.to_vec();
    args.extend(["--allowedTools=mcp__lab", "--await-initialize"]);
    let s = host(&lab, &args, &[initialize(Some(servers_of(&lab))), user("one"), user("two")], &allow);
    assert_eq!(s.results().len(), 2, "{}", s.stderr);
    let calls = lab.calls("lab");
    let tools: Vec<&Value> = calls.iter().map(|c| &c["tool"]).collect();
    assert_eq!(tools, [&json!("echo"), &json!("write")]);
}

#[test]
fn unknown_control_subtypes_and_bad_lines_get_the_real_answers() {
    let lab = Lab::new(NEW, vec![vec![]]);
    // An unknown subtype is answered with an error and the CLI carries on
    // (exit 0 at the end of stdin), as 2.1.332 does.
    let bogus = json!({"type": "control_request", "request_id": "r1", "request": {"subtype": "bogus_subtype"}});
    let s = host(&lab, &TS_ARGV, &[initialize(None), bogus], &allow);
    assert_eq!(s.code, 0);
    assert_eq!(s.out[1]["response"], json!({"subtype": "error", "request_id": "r1", "error": "Unsupported control request subtype: bogus_subtype", "error_code": "unsupported_request"}));
    let bad = |lines: &[&str], args: &[&str]| {
        let mut child = lab
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for l in lines {
            let _ = writeln!(stdin, "{l}");
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).trim().to_string())
    };
    let init = initialize(None).to_string();
    assert_eq!(bad(&[&init, "not json at all"], &TS_ARGV), (Some(1), "Error parsing streaming input line (type=unknown, 15 chars): SyntaxError".into()));
    let mut awaiting = TS_ARGV.to_vec();
    awaiting.push("--await-initialize");
    let (code, err) = bad(&["{\"type\":\"keep_alive\"}"], &awaiting);
    assert_eq!((code, err.as_str()), (Some(1), "Error: --await-initialize requires the initialize control request as the first stdin line, and the first line is a different message."));
    let (code, err) = bad(&["{"], &awaiting);
    assert_eq!(code, Some(1));
    assert!(err.ends_with("the first line is not valid JSON."), "{err}");
    let (code, err) = bad(&[], &["--input-format", "stream-json", "--output-format", "json"]);
    assert_eq!((code, err.as_str()), (Some(1), "Error: --input-format=stream-json requires output-format=stream-json."));
}

#[test]
fn interrupt_when_idle_and_set_permission_mode_as_measured() {
    let lab = Lab::new(NEW, vec![vec![call(0, "lab", "echo", json!({}))]]);
    let config = lab.two_servers();
    let mut args = TS_ARGV.to_vec();
    args.extend(["--mcp-config", &config]);
    let control = |id: &str, request: Value| json!({"type": "control_request", "request_id": id, "request": request});
    let lines = [
        initialize(None),
        control("r2", json!({"subtype": "interrupt"})),
        control("r3", json!({"subtype": "set_permission_mode", "mode": "plan"})),
        control("r4", json!({"subtype": "set_permission_mode", "mode": "bogus"})),
        user("go"),
    ];
    let s = host(&lab, &args, &lines, &allow);
    assert_eq!(s.out[1]["response"], json!({"subtype": "success", "request_id": "r2", "response": {"still_queued": []}}));
    assert_eq!(s.out[2]["response"]["response"], json!({"mode": "plan"}));
    assert_eq!((s.out[3]["subtype"].as_str(), s.out[3]["permissionMode"].as_str()), (Some("status"), Some("plan")));
    assert_eq!(s.out[4]["response"]["error_code"], "invalid_mode");
    assert_eq!(s.out[4]["response"]["error"], "Cannot set permission mode: must be one of acceptEdits, auto, bypassPermissions, default, dontAsk, plan");
    // The new mode holds for the turn: plan mode refuses the call unasked.
    assert!(s.asked().is_empty());
    assert_eq!(s.tool_results()[0]["content"], "Cannot call mcp__lab__echo while in plan mode.");
}

#[test]
fn sdk_mode_is_refused_before_the_release_that_connects_initialize_servers() {
    let lab = Lab::new(OLD, vec![vec![]]);
    let s = host(&lab, &TS_ARGV, &[initialize(None)], &allow);
    assert_eq!(s.code, 2);
    assert!(s.stderr.contains("simulated from 2.1.326; 2.1.266 connects none"), "{}", s.stderr);
}
