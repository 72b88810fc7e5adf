//! The fake Claude Code's PreToolUse hooks, interrupts and prompt errors in
//! SDK host mode, driven as an SDK host would (answers given per request).
//! Expected shapes and texts are those measured on 2.1.332 and 2.1.334.

mod claude_lab;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use claude_lab::*;
use serde_json::{json, Value};

const V334: &str = "2.1.334";
const ARGV: [&str; 7] = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--permission-prompt-tool=stdio", "--await-initialize"];

struct Run {
    out: Vec<Value>,
    code: i32,
    stderr: String,
}

impl Run {
    fn requests(&self, subtype: &str) -> Vec<&Value> {
        self.out.iter().filter(|m| m["type"] == "control_request" && m["request"]["subtype"] == subtype).collect()
    }

    fn tool_results(&self) -> Vec<(&Value, &Value)> {
        let users = self.out.iter().filter(|m| m["type"] == "user");
        users.filter_map(|m| Some((m["message"]["content"].as_array()?.iter().find(|b| b["type"] == "tool_result")?, m))).collect()
    }

    fn result(&self) -> &Value {
        self.out.iter().find(|m| m["type"] == "result").unwrap_or_else(|| panic!("no result: {:?}\n{}", self.out, self.stderr))
    }

    fn position(&self, pred: impl Fn(&Value) -> bool) -> usize {
        self.out.iter().position(pred).unwrap_or(usize::MAX)
    }
}

/// Runs the fake as a host: writes initialize (with `hooks`, the lab's
/// servers and `extra` fields) and a prompt, then for every line the fake
/// prints writes what `on` returns; stdin closes after the first result.
fn drive(lab: &Lab, args: &[&str], hooks: Value, extra: Value, on: &mut dyn FnMut(&Value) -> Vec<Value>) -> Run {
    let mut all = ARGV.to_vec();
    all.extend_from_slice(args);
    let mut child = lab.command(&all).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take();
    let servers = serde_json::from_str::<Value>(&lab.two_servers()).unwrap()["mcpServers"].clone();
    let mut init = json!({"subtype": "initialize", "hooks": hooks, "mcpServers": servers});
    if let (Some(i), Some(x)) = (init.as_object_mut(), extra.as_object()) {
        i.extend(x.clone());
    }
    let user = json!({"type": "user", "message": {"role": "user", "content": "go"}, "parent_tool_use_id": null, "session_id": ""});
    for line in [json!({"type": "control_request", "request_id": "init1", "request": init}), user] {
        writeln!(stdin.as_mut().unwrap(), "{line}").unwrap();
    }
    let mut out = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let msg: Value = serde_json::from_str(&line.unwrap()).unwrap();
        for reply in on(&msg) {
            if let Some(s) = stdin.as_mut() {
                let _ = writeln!(s, "{reply}");
            }
        }
        if msg["type"] == "result" {
            stdin = None;
        }
        out.push(msg);
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    Run { out, code: output.status.code().unwrap_or(-1), stderr: String::from_utf8_lossy(&output.stderr).to_string() }
}

fn ok(msg: &Value, response: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"], "response": response}})
}

fn hooks(matcher: &str, ids: &[&str]) -> Value {
    json!({"PreToolUse": [{"matcher": matcher, "hookCallbackIds": ids}]})
}

fn decision(d: &str, reason: Option<&str>) -> Value {
    let mut o = json!({"hookEventName": "PreToolUse", "permissionDecision": d});
    if let Some(r) = reason {
        o["permissionDecisionReason"] = json!(r);
    }
    json!({"hookSpecificOutput": o})
}

/// Answers hook callbacks by tool name with `hook(tool)`, and allows every
/// can_use_tool.
fn host_with(hook: impl Fn(&str) -> Value) -> impl FnMut(&Value) -> Vec<Value> {
    move |m: &Value| {
        if m["type"] != "control_request" {
            return vec![];
        }
        let r = &m["request"];
        match r["subtype"].as_str() {
            Some("hook_callback") => vec![ok(m, hook(r["input"]["tool_name"].as_str().unwrap_or("")))],
            Some("can_use_tool") => vec![ok(m, json!({"behavior": "allow", "updatedInput": r["input"], "toolUseID": r["tool_use_id"]}))],
            _ => vec![],
        }
    }
}

#[test]
fn hook_callback_comes_between_tool_use_and_can_use_tool_with_flush_from_334() {
    for (version, flush) in [(NEW, None), (V334, Some(true))] {
        let lab = Lab::new(version, vec![pair()]);
        let run = drive(&lab, &["--allowedTools=mcp__lab__echo"], hooks("mcp__.*", &["hook_0"]), json!({}), &mut host_with(|_| json!({})));
        assert_eq!(run.code, 0, "{}", run.stderr);
        let calls = run.requests("hook_callback");
        assert_eq!(calls.len(), 2, "{version}");
        assert_eq!(calls[0].get("flush").and_then(Value::as_bool), flush, "{version}");
        let r = &calls[1]["request"];
        assert_eq!((r["callback_id"].as_str(), r["tool_use_id"].as_str()), (Some("hook_0"), Some("toolu_fake_1")));
        let input = &r["input"];
        assert_eq!(input["hook_event_name"], "PreToolUse");
        assert_eq!(input["tool_name"], "mcp__other__echo");
        assert_eq!(input["tool_input"], json!({"n": 1}));
        assert_eq!(input["mcp_server"], json!({"name": "other", "source": "dynamic"}));
        assert_eq!(input["permission_mode"], "default");
        assert!(input["transcript_path"].as_str().unwrap().ends_with(&format!("{}.jsonl", run.result()["session_id"].as_str().unwrap())));
        // {} leaves the rules: the listed tool runs unasked, the other is asked after its hook.
        let asked = run.requests("can_use_tool");
        assert_eq!(asked.len(), 1);
        assert!(asked[0].get("flush").is_none(), "can_use_tool never carries flush");
        let tool_use = run.position(|m| m["type"] == "assistant" && m["message"]["content"][0]["id"] == "toolu_fake_1");
        let hook = run.position(|m| m["request"]["subtype"] == "hook_callback" && m["request"]["tool_use_id"] == "toolu_fake_1");
        let ask = run.position(|m| m["request"]["subtype"] == "can_use_tool");
        assert!(tool_use < hook && hook < ask, "{tool_use} {hook} {ask}");
        assert_eq!((lab.calls("lab").len(), lab.calls("other").len()), (1, 1));
    }
}

#[test]
fn hook_deny_beats_an_allow_entry_and_names_the_hook_from_334() {
    for (version, refused_by) in [(NEW, None), (V334, Some("hook"))] {
        let lab = Lab::new(version, vec![pair()]);
        let deny = |tool: &str| if tool == "mcp__lab__echo" { decision("deny", Some("HOOK-DENY")) } else { decision("deny", None) };
        let run = drive(&lab, &["--allowedTools=mcp__lab__echo"], hooks("mcp__lab__echo|mcp__other__echo", &["h"]), json!({}), &mut host_with(deny));
        let results = run.tool_results();
        assert_eq!(results[0].0["content"], "PreToolUse:mcp__lab__echo hook error: HOOK-DENY");
        assert_eq!(results[0].0["is_error"], true);
        assert_eq!(results[0].1["tool_use_result"], "Error: PreToolUse:mcp__lab__echo hook error: HOOK-DENY");
        assert_eq!(results[1].0["content"], "PreToolUse:mcp__other__echo hook error: Blocked by hook");
        let meta = &results[0].1["tool_result_meta"][0];
        assert_eq!(meta["non_execution_kind"], "permission-rule");
        assert_eq!(meta.get("refused_by").and_then(Value::as_str), refused_by, "{version}");
        assert_eq!(meta["permission_decision"], json!({"decision": "reject", "source": "hook", "reason_type": "hook"}));
        assert!(run.requests("can_use_tool").is_empty());
        assert_eq!(run.result()["permission_denials"].as_array().unwrap().len(), 2);
        assert!(!run.out.iter().any(|m| m["subtype"] == "permission_denied"));
        assert_eq!(lab.calls("lab").len() + lab.calls("other").len(), 0, "denied calls never reach a server");
    }
}

#[test]
fn hook_allow_skips_can_use_tool_and_its_updated_input_is_what_the_server_gets() {
    for (version, changed) in [(NEW, None), (V334, Some(true))] {
        let lab = Lab::new(version, vec![pair()]);
        let allow = |tool: &str| {
            let mut d = decision("allow", Some("OK"));
            if tool == "mcp__other__echo" {
                d["hookSpecificOutput"]["updatedInput"] = json!({"n": 42});
            }
            d
        };
        let run = drive(&lab, &[], hooks("*", &["h"]), json!({}), &mut host_with(allow));
        assert!(run.requests("can_use_tool").is_empty(), "{version}");
        assert_eq!(lab.calls("other")[0]["arguments"], json!({"n": 42}));
        let results = run.tool_results();
        let meta = &results[1].1["tool_result_meta"][0];
        assert_eq!(meta["permission_decision"], json!({"decision": "accept", "source": "hook", "reason_type": "hook"}));
        assert_eq!(meta.get("input_changed").and_then(Value::as_bool), changed, "{version}");
        assert!(results[0].1["tool_result_meta"][0].get("input_changed").is_none());
    }
}

#[test]
fn hook_ask_asks_even_for_a_listed_tool_and_an_ask_rule_outlasts_a_hook_allow() {
    let lab = Lab::new(V334, vec![pair()]);
    let settings = json!({"permissions": {"ask": ["mcp__other__echo"]}}).to_string();
    let answer = |tool: &str| if tool == "mcp__lab__echo" { decision("ask", Some("R-ASK")) } else { decision("allow", None) };
    let run = drive(&lab, &["--allowedTools=mcp__lab__echo", "--settings", &settings], hooks("mcp__.*", &["h"]), json!({}), &mut host_with(answer));
    let asked = run.requests("can_use_tool");
    assert_eq!(asked.len(), 2, "{:?}", run.out);
    let hook = &asked[0]["request"];
    assert_eq!((hook["decision_reason"].as_str(), hook["decision_reason_type"].as_str()), (Some("R-ASK"), Some("hook")));
    assert_eq!((hook["decision_reason_hook_event"].as_str(), hook["decision_reason_hook_source"].as_str()), (Some("PreToolUse"), Some("settings")));
    assert!(hook.get("permission_suggestions").is_none() && hook.get("server_policy_ask_only").is_none());
    let rule = &asked[1]["request"];
    assert_eq!(rule["tool_name"], "mcp__other__echo");
    assert_eq!((rule["decision_reason_type"].as_str(), rule["decision_reason_rule_source"].as_str()), (Some("rule"), Some("flagSettings")));
    assert_eq!(rule["server_policy_ask_only"], false);
    assert_eq!((lab.calls("lab").len(), lab.calls("other").len()), (1, 1));
}

#[test]
fn two_callbacks_are_sent_at_once_and_deny_wins() {
    let lab = Lab::new(V334, vec![vec![call(0, "lab", "echo", json!({}))]]);
    let two = json!({"PreToolUse": [{"matcher": "mcp__lab__echo", "hookCallbackIds": ["a"]}, {"matcher": "mcp__.*", "hookCallbackIds": ["b"]}]});
    // Answers only once both requests are out, b first.
    let mut held: Vec<Value> = Vec::new();
    let mut on = |m: &Value| -> Vec<Value> {
        if m["request"]["subtype"] != "hook_callback" {
            return vec![];
        }
        held.push(m.clone());
        if held.len() < 2 {
            return vec![];
        }
        let by = |id: &str| held.iter().find(|h| h["request"]["callback_id"] == id).unwrap().clone();
        vec![ok(&by("b"), decision("deny", Some("B-DENY"))), ok(&by("a"), decision("allow", None))]
    };
    let run = drive(&lab, &[], two, json!({}), &mut on);
    assert_eq!(run.tool_results()[0].0["content"], "PreToolUse:mcp__lab__echo hook error: B-DENY");
    assert!(lab.calls("lab").is_empty());
}

#[test]
fn failed_or_unreadable_hook_answers_warn_and_count_as_empty() {
    let lab = Lab::new(NEW, vec![vec![call(0, "lab", "echo", json!({})), call(1, "lab", "write", json!({})), call(2, "other", "echo", json!({}))]]);
    let mut on = |m: &Value| -> Vec<Value> {
        let r = &m["request"];
        match (r["subtype"].as_str(), r["input"]["tool_name"].as_str()) {
            (Some("hook_callback"), Some("mcp__lab__echo")) => {
                vec![json!({"type": "control_response", "response": {"subtype": "error", "request_id": m["request_id"], "error": "BROKE"}})]
            }
            (Some("hook_callback"), Some("mcp__lab__write")) => vec![ok(m, decision("bogus", None))],
            (Some("hook_callback"), _) => {
                vec![ok(m, json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}))]
            }
            (Some("can_use_tool"), _) => vec![ok(m, json!({"behavior": "allow", "updatedInput": r["input"]}))],
            _ => vec![],
        }
    };
    let run = drive(&lab, &[], hooks("mcp__.*", &["hook_7"]), json!({}), &mut on);
    let warnings: Vec<&Value> = run.out.iter().filter(|m| m["subtype"] == "informational").collect();
    assert_eq!(warnings.len(), 2);
    assert_eq!(warnings[0]["content"], "PreToolUse: Hook callback hook_7 failed: the SDK host replied with an error or an invalid answer. Its answer was treated as empty.");
    assert_eq!((warnings[0]["level"].as_str(), warnings[0]["tag"].as_str()), (Some("warning"), Some("hook_callback_failed")));
    assert!(warnings[0].get("written_at").is_none(), "2.1.332 does not stamp it");
    assert_eq!(run.requests("can_use_tool").len(), 2, "both go on to the rules");
    assert_eq!(lab.calls("lab").len(), 2);
    let (block, user) = run.tool_results()[2];
    assert_eq!(block["content"], "PreToolUse hook failed with an unexpected error. The tool call was not executed; other configured hooks may not have completed.");
    assert!(user.get("tool_result_meta").is_none());
    assert_eq!(run.result()["permission_denials"], json!([]));
    assert!(lab.calls("other").is_empty());
}

#[test]
fn continue_false_lets_the_call_run_then_ends_the_turn() {
    let lab = Lab::new(NEW, vec![pair()]);
    let run = drive(&lab, &[], hooks("mcp__lab__echo", &["h"]), json!({}), &mut host_with(|_| json!({"continue": false, "stopReason": "S"})));
    assert_eq!(run.requests("can_use_tool").len(), 1, "only the first call is made");
    assert_eq!(lab.calls("lab").len(), 1);
    let r = run.result();
    assert_eq!((r["subtype"].as_str(), r["result"].as_str(), r["stop_reason"].as_str()), (Some("success"), Some(""), Some("tool_use")));
    assert_eq!(r["terminal_reason"], "hook_stopped");
}

/// Sends `interrupt` when the fake asks `subtype`, and never answers that.
fn interrupt_on(subtype: &'static str) -> impl FnMut(&Value) -> Vec<Value> {
    move |m: &Value| match m["request"]["subtype"].as_str() {
        Some(s) if s == subtype => vec![json!({"type": "control_request", "request_id": "int1", "request": {"subtype": "interrupt"}})],
        Some("hook_callback") => vec![ok(m, json!({}))],
        _ => vec![],
    }
}

#[test]
fn interrupt_while_a_prompt_or_a_hook_waits_cancels_it_and_aborts_the_turn() {
    for (subtype, hooked, listed) in [("can_use_tool", json!({}), 1), ("hook_callback", hooks("mcp__.*", &["h"]), 0)] {
        let lab = Lab::new(NEW, vec![pair()]);
        let run = drive(&lab, &[], hooked, json!({}), &mut interrupt_on(subtype));
        // Its input ending after the aborted turn's error result: exit 1 (measured on both versions).
        assert_eq!(run.code, 1, "{}", run.stderr);
        let asked = run.requests(subtype);
        assert_eq!(asked.len(), 1, "{subtype}");
        let cancel = run.position(|m| m["type"] == "control_cancel_request");
        assert_eq!(run.out[cancel]["request_id"], asked[0]["request_id"]);
        assert_eq!(run.out[cancel + 1]["response"], json!({"subtype": "success", "request_id": "int1", "response": {"still_queued": []}}));
        let (block, user) = run.tool_results()[0];
        assert!(block["content"].as_str().unwrap().contains("STOP what you are doing"), "{block}");
        assert_eq!(user["tool_use_result"], "User rejected tool use");
        assert_eq!(user["tool_result_meta"], json!([{"id": "toolu_fake_0", "non_execution_kind": "user-rejected"}]));
        let r = run.result();
        assert_eq!((r["subtype"].as_str(), r["terminal_reason"].as_str()), (Some("error_during_execution"), Some("aborted_tools")));
        assert_eq!(r["errors"], json!(["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"]));
        assert_eq!(r["permission_denials"].as_array().unwrap().len(), listed, "{subtype}");
        assert!(lab.calls("lab").is_empty() && lab.calls("other").is_empty());
    }
}

#[test]
fn an_error_answer_to_can_use_tool_refuses_the_call_and_the_turn_goes_on() {
    let lab = Lab::new(V334, vec![pair()]);
    let mut on = |m: &Value| -> Vec<Value> {
        let r = &m["request"];
        match (r["subtype"].as_str(), r["tool_name"].as_str()) {
            (Some("can_use_tool"), Some("mcp__lab__echo")) => {
                vec![json!({"type": "control_response", "response": {"subtype": "error", "request_id": m["request_id"], "error": "HOST-FAILED"}})]
            }
            (Some("can_use_tool"), _) => vec![ok(m, json!({"behavior": "allow", "updatedInput": r["input"]}))],
            _ => vec![],
        }
    };
    let run = drive(&lab, &[], json!({}), json!({}), &mut on);
    let (block, user) = run.tool_results()[0];
    assert_eq!(block["content"], "Tool permission request failed: Error: HOST-FAILED");
    assert_eq!(user["tool_result_meta"][0]["permission_decision"], json!({"decision": "reject", "source": "config", "reason_type": "other"}));
    assert_eq!(run.result()["subtype"], "success");
    assert_eq!(run.result()["permission_denials"][0]["tool_name"], "mcp__lab__echo");
    assert_eq!((lab.calls("lab").len(), lab.calls("other").len()), (0, 1));
}

#[test]
fn a_user_message_sent_while_a_prompt_waits_joins_that_turn() {
    let lab = Lab::new(NEW, vec![pair(), vec![call(5, "lab", "write", json!({}))]]);
    let mut sent = false;
    let mut on = |m: &Value| -> Vec<Value> {
        if m["request"]["subtype"] != "can_use_tool" {
            return vec![];
        }
        let mut lines = Vec::new();
        if !std::mem::replace(&mut sent, true) {
            lines.push(json!({"type": "user", "message": {"role": "user", "content": "SECOND"}, "parent_tool_use_id": null, "session_id": ""}));
        }
        lines.push(ok(m, json!({"behavior": "allow", "updatedInput": m["request"]["input"]})));
        lines
    };
    let run = drive(&lab, &[], json!({}), json!({}), &mut on);
    assert_eq!(run.out.iter().filter(|m| m["type"] == "result").count(), 1);
    assert_eq!(run.requests("can_use_tool").len(), 2, "the second prompt plays no turn of its own");
    let joined: Vec<Value> = lab.transcript().into_iter().filter(|e| e["event"] == "user_joined_turn").collect();
    assert_eq!(joined.len(), 1);
    assert_eq!(joined[0]["prompt"], "SECOND");
}

#[test]
fn variables_in_initialize_servers_are_expanded() {
    let lab = Lab::new(NEW, vec![vec![call(0, "lab", "echo", json!({}))]]);
    let mut server = lab.stdio("lab", json!([{"name": "echo"}]));
    let record = lab.recording_path("lab").display().to_string();
    let dir = lab.dir.display().to_string();
    server["args"][4] = json!(record.replace(&dir, "${LAB_DIR}"));
    let mut args = ARGV.to_vec();
    args.push("--allowedTools=mcp__lab");
    let mut child = lab.command(&args).env("LAB_DIR", &dir).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", json!({"type": "control_request", "request_id": "i", "request": {"subtype": "initialize", "mcpServers": {"lab": server}}})).unwrap();
    writeln!(stdin, "{}", json!({"type": "user", "message": {"role": "user", "content": "go"}})).unwrap();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        if line.unwrap().contains("\"type\":\"result\"") {
            break;
        }
    }
    drop(stdin);
    child.wait().unwrap();
    assert_eq!(lab.calls("lab").len(), 1, "the server recorded where ${{LAB_DIR}} points");
}
