//! The fake `codex app-server` behaves like the measured real one
//! (../shared/PROVIDERS.md): config sources, version-specific approval logic,
//! and wire shapes. Drives the fake directly, without any driver.

mod codex_lab;

use std::time::Duration;

use codex_lab::*;
use serde_json::{json, Value};

#[test]
fn elicitation_has_the_real_shape_per_version() {
    for (version, tool_name, env_id) in [("0.146.0", false, false), ("0.167.2", true, false), ("0.171.0", true, true)] {
        let mut s = start(version, plain(), &["plain"], "", &[]).unwrap();
        let t = thread_id(&s.thread(json!({"approvalPolicy": "on-request"})));
        let (reqs, items) = s.turn(&t, accept);
        assert_eq!(reqs.len(), 1, "{version}");
        let p = &reqs[0]["params"];
        assert_eq!(reqs[0]["method"], "mcpServer/elicitation/request");
        assert_eq!(reqs[0]["id"], json!(0), "real Codex numbers server requests from 0");
        assert_eq!(p["_meta"]["codex_approval_kind"], "mcp_tool_call");
        assert_eq!(p["_meta"]["persist"], json!(["session", "always"]));
        assert_eq!(p["_meta"]["tool_params"], json!({"n": 0}));
        assert_eq!(p["serverName"], "lab");
        assert_eq!(p["mode"], "form");
        assert_eq!(p["message"], "Allow the lab MCP server to run tool \"plain\"?");
        assert_eq!(p["_meta"].get("tool_name").is_some(), tool_name, "{version}");
        assert_eq!(p.get("environmentId").is_some(), env_id, "{version}");
        assert_eq!(items[0]["status"], "completed");
        assert_eq!(s.server_calls(), 1);
    }
}

#[test]
fn decline_error_and_malformed_replies_all_reject() {
    for answer in [json!({"action": "decline"}), json!({}), json!({"action": "maybe"})] {
        let mut s = start("0.171.0", plain(), &["plain"], "", &[]).unwrap();
        let t = thread_id(&s.thread(json!({})));
        let a = answer.clone();
        let (_, items) = s.turn(&t, move |_| a.clone());
        assert_eq!(items[0]["status"], "failed");
        assert_eq!(items[0]["error"]["message"], "user rejected MCP tool call", "{answer}");
        assert_eq!(s.server_calls(), 0);
    }
}

#[test]
fn never_prompts_before_0_148_and_denies_in_cli_after() {
    for (version, prompts) in [("0.147.0", true), ("0.148.0", false), ("0.171.0", false)] {
        let mut s = start(version, plain(), &["plain"], "", &[]).unwrap();
        let t = thread_id(&s.thread(json!({"approvalPolicy": "never", "sandbox": "read-only"})));
        let (reqs, items) = s.turn(&t, accept);
        assert_eq!(!reqs.is_empty(), prompts, "{version}");
        if !prompts {
            assert_eq!(items[0]["error"]["message"], "MCP tool call requires approval, but approval policy is never");
        }
    }
    // Full access: no prompt and no denial.
    let mut s = start("0.171.0", plain(), &["plain"], "", &[]).unwrap();
    let t = thread_id(&s.thread(json!({"approvalPolicy": "never", "sandbox": "danger-full-access"})));
    let (reqs, items) = s.turn(&t, decline);
    assert!(reqs.is_empty());
    assert_eq!(items[0]["status"], "completed");
}

#[test]
fn per_tool_mode_from_each_config_source() {
    let table = "[mcp_servers.lab.tools.plain]\napproval_mode = \"approve\"\n";
    let mut s = start("0.153.4", plain(), &["plain"], table, &[]).unwrap();
    let t = thread_id(&s.thread(json!({})));
    assert!(s.turn(&t, decline).0.is_empty(), "config.toml");

    let mut s = start("0.153.4", plain(), &["plain"], "", &["mcp_servers.lab.tools.plain.approval_mode=\"approve\""]).unwrap();
    let t = thread_id(&s.thread(json!({})));
    assert!(s.turn(&t, decline).0.is_empty(), "-c");

    let mut s = start("0.153.4", plain(), &["plain"], "", &[]).unwrap();
    let t = thread_id(&s.thread(json!({"config": {"mcp_servers.lab.tools.plain.approval_mode": "approve"}})));
    assert!(s.turn(&t, decline).0.is_empty(), "thread/start config");

    // Per-tool wins over the server default, both ways.
    let both = "default_tools_approval_mode = \"approve\"\n[mcp_servers.lab.tools.ro]\napproval_mode = \"prompt\"\n";
    let mut s = start("0.153.4", plain(), &["plain", "ro"], both, &[]).unwrap();
    let t = thread_id(&s.thread(json!({})));
    let (reqs, _) = s.turn(&t, decline);
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0]["params"]["message"].as_str().unwrap().contains("\"ro\""));
}

#[test]
fn bad_mode_in_config_file_fails_thread_start_naming_file_line_col() {
    let mut s = start("0.171.0", plain(), &[], "[mcp_servers.lab.tools.plain]\napproval_mode = \"bogus\"\n", &[]).unwrap();
    let r = s.thread(json!({}));
    assert_eq!(r["error"]["code"], -32600);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.contains("config.toml:5:17"), "{msg}");
}

#[test]
fn bad_mode_in_override_exits_1_before_initialize() {
    let Err((code, stderr)) = start("0.171.0", plain(), &[], "", &["mcp_servers.lab.tools.plain.approval_mode=\"Approve\""]) else {
        panic!("the fake accepted a bad -c value");
    };
    assert_eq!(code, 1);
    assert!(stderr.contains("approval_mode") || stderr.contains("unknown variant"), "{stderr}");
}

#[test]
fn unknown_tool_names_in_config_are_ignored() {
    let mut s = start("0.171.0", plain(), &["plain"], "[mcp_servers.lab.tools.nope]\napproval_mode = \"approve\"\n", &[]).unwrap();
    let t = thread_id(&s.thread(json!({})));
    assert_eq!(s.turn(&t, decline).0.len(), 1);
}

#[test]
fn granular_needs_experimental_api() {
    let gran = json!({"granular": {"mcp_elicitations": false, "sandbox_approval": false, "rules": false, "skill_approval": false, "request_permissions": false}});
    let mut s = start_with("0.171.0", plain(), &["plain"], "", &[], json!({})).unwrap();
    let r = s.thread(json!({"approvalPolicy": gran.clone()}));
    assert_eq!(r["error"]["message"], "askForApproval.granular requires experimentalApi capability");
    let mut s = start("0.171.0", plain(), &["plain"], "", &[]).unwrap();
    let t = thread_id(&s.thread(json!({"approvalPolicy": gran})));
    // mcp_elicitations: false still sends the elicitation (measured).
    assert_eq!(s.turn(&t, accept).0.len(), 1);
}

#[test]
fn persist_session_and_always() {
    let mut s = start("0.171.0", plain(), &["plain", "plain"], "", &[]).unwrap();
    let t = thread_id(&s.thread(json!({})));
    let (reqs, _) = s.turn(&t, |_| json!({"action": "accept", "content": {}, "_meta": {"persist": "session"}}));
    assert_eq!(reqs.len(), 1, "session persist stops the second prompt");

    let mut s = start("0.171.0", plain(), &["plain", "plain"], "", &[]).unwrap();
    let t = thread_id(&s.thread(json!({})));
    let (reqs, _) = s.turn(&t, |_| json!({"action": "accept", "content": {}, "_meta": {"persist": "always"}}));
    assert_eq!(reqs.len(), 1);
    let config = std::fs::read_to_string(s.dir.join("home/config.toml")).unwrap();
    assert!(config.contains("[mcp_servers.lab.tools.plain]\napproval_mode = \"approve\""), "{config}");
}

#[test]
fn float_priority_breaks_before_0_163() {
    let tools = json!([{"name": "prio", "annotations": {"readOnlyHint": true},
                        "result": {"content": [{"type": "text", "text": "x", "annotations": {"priority": 0.5}}]}},
                       {"name": "prio_int", "annotations": {"readOnlyHint": true},
                        "result": {"content": [{"type": "text", "text": "x", "annotations": {"priority": 1}}]}}]);
    for (version, broken) in [("0.162.1", true), ("0.163.0", false)] {
        let mut s = start(version, tools.clone(), &["prio", "prio_int"], "", &[]).unwrap();
        let t = thread_id(&s.thread(json!({})));
        let (_, items) = s.turn(&t, decline);
        assert_eq!(items[0]["status"], if broken { "failed" } else { "completed" }, "{version}");
        assert_eq!(items[1]["status"], "completed", "integer priority is fine on {version}");
        assert_eq!(s.server_calls(), 2, "the server is called either way");
    }
}

#[test]
fn model_output_format_changes_at_0_152_1() {
    for (version, array) in [("0.150.1", false), ("0.152.1", true)] {
        let mut s = start(version, plain(), &["ro"], "", &[]).unwrap();
        let t = thread_id(&s.thread(json!({})));
        s.turn(&t, decline);
        let saw = &s.outcomes()[0]["model_saw"];
        assert_eq!(saw.is_array(), array, "{version}: {saw}");
    }
}

#[test]
fn annotations_decide_under_auto() {
    let tools = json!([
        {"name": "safe", "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}},
        {"name": "rod", "annotations": {"readOnlyHint": true, "destructiveHint": true}},
        {"name": "title", "annotations": {"title": "T"}},
    ]);
    for (version, prompts) in [("0.153.4", 2), ("0.171.0", 1)] {
        let mut s = start(version, tools.clone(), &["safe", "rod", "title"], "", &[]).unwrap();
        let t = thread_id(&s.thread(json!({})));
        assert_eq!(s.turn(&t, decline).0.len(), prompts, "{version}");
    }
}

#[test]
fn call_meta_grows_with_versions() {
    // As the real recordings show: callId from 0.148.0, itemId from 0.153.4,
    // sessionId and windowId in 0.171.0.
    let cases = [("0.147.0", false, false, false), ("0.148.0", true, false, false), ("0.153.4", true, true, false), ("0.171.0", true, true, true)];
    for (version, call_id, item_id, session_id) in cases {
        let mut s = start(version, plain(), &["ro"], "", &[]).unwrap();
        let t = thread_id(&s.thread(json!({})));
        s.turn(&t, decline);
        let rec = fakes::wire::read_jsonl(&s.dir.join("lab.jsonl")).unwrap();
        let meta = &rec.iter().find(|e| e["event"] == "tools/call").unwrap()["meta"];
        // tools/list took progress token 0 on this server.
        assert_eq!((&meta["progressToken"], &meta["threadId"]), (&json!(1), &json!(t)), "{version}");
        assert_eq!(meta.get("callId").is_some(), call_id, "{version}");
        assert_eq!(meta.get("itemId").and_then(Value::as_str).is_some_and(|i| i.starts_with("fc_")), item_id, "{version}");
        assert_eq!(meta.get("sessionId").is_some(), session_id, "{version}");
        assert_eq!(meta.get("windowId"), session_id.then(|| json!(format!("{t}:0"))).as_ref(), "{version}");
        let turn = &meta["x-codex-turn-metadata"];
        assert_eq!((&turn["thread_id"], &turn["session_id"], &turn["model"]), (&json!(t), &json!(t), &json!("mock-model")), "{version}");
    }
}

#[test]
fn resuming_the_loaded_thread_keeps_its_config() {
    // Measured on every MEASURED version: thread/resume of the thread the
    // app-server has loaded rejoins it; the approval policy, config and MCP
    // servers sent with it are not applied.
    for version in ["0.146.0", "0.171.0"] {
        let prompt = json!({"mcp_servers.lab.tools.plain.approval_mode": "prompt"});
        let approve = json!({"mcp_servers.lab.tools.plain.approval_mode": "approve"});
        let mut s = start_turns(version, plain(), &[&["plain"], &["plain"]], "", &[], json!({})).unwrap();
        let t = thread_id(&s.thread(json!({"config": approve})));
        assert!(s.turn(&t, decline).0.is_empty(), "{version}: approved at thread/start");
        let r = s.request("thread/resume", json!({"threadId": t, "approvalPolicy": "never", "config": prompt})).unwrap();
        assert_eq!((&r["result"]["thread"]["id"], &r["result"]["approvalPolicy"]), (&json!(t), &json!("on-request")), "{r}");
        let (requests, items) = s.turn(&t, decline);
        assert!(requests.is_empty(), "{version}: the resume's config was applied: {requests:?}");
        assert_eq!(items[0]["status"], "completed", "{version}");
        assert_eq!(s.server_calls(), 2, "{version}");
        let threads: Vec<Value> =
            fakes::wire::read_jsonl(&s.dir.join("codex.jsonl")).unwrap().into_iter().filter(|e| e["event"] == "thread").collect();
        assert_eq!(threads[1]["rejoined"], true, "{threads:?}");
        // Its history comes back with it; the MCP server is not restarted.
        assert_eq!(r["result"]["thread"]["turns"].as_array().map(Vec::len), Some(1), "{version}");
        assert_eq!(s.notes("thread/goal/cleared").len(), 1, "{version}");
        assert_eq!(s.notes("mcpServer/startupStatus/updated").len(), 2, "{version}: started once");
    }
}

#[test]
fn a_thread_without_turns_cannot_be_resumed() {
    // Real Codex writes the rollout at the first turn (found by the fidelity
    // recordings; the text measured 2026-12-03 on all five versions, also
    // for the thread the same app-server has loaded).
    let mut s = start("0.171.0", plain(), &["ro"], "", &[]).unwrap();
    let fresh = thread_id(&s.thread(json!({})));
    let r = s.request("thread/resume", json!({"threadId": fresh})).unwrap();
    assert_eq!(r["error"], json!({"code": -32600, "message": format!("no rollout found for thread id {fresh}")}), "{r}");
    let t = thread_id(&s.thread(json!({})));
    s.turn(&t, decline);
    let r = s.request("thread/resume", json!({"threadId": t})).unwrap();
    assert_eq!(r["result"]["thread"]["id"], json!(t), "{r}");
}

#[test]
fn stdio_server_handshake_and_exit_as_the_real_client() {
    for (version, experimental) in [("0.153.4", None), ("0.171.0", Some(json!({"codex/auth-change": {}})))] {
        let mut s = start(version, plain(), &["plain"], "", &[]).unwrap();
        let t = thread_id(&s.thread(json!({})));
        s.turn(&t, decline);
        // Closing its input ends the app-server, which kills the server
        // before that server's input closes: no EOF reaches it.
        let Session { mut child, stdin, dir, _dir, .. } = s;
        drop(stdin);
        assert!(child.wait().unwrap().success());
        std::thread::sleep(Duration::from_millis(200));
        let rec = fakes::wire::read_jsonl(&dir.join("lab.jsonl")).unwrap();
        assert!(!rec.iter().any(|e| e["event"] == "eof"), "{version}: {rec:?}");
        let sent: Vec<&Value> = rec.iter().filter(|e| e["dir"] == "in").map(|e| &e["msg"]).collect();
        let init = &sent[0]["params"];
        assert_eq!(init["clientInfo"], json!({"name": "codex-mcp-client", "title": "Codex", "version": version}));
        assert_eq!(init["capabilities"].get("experimental"), experimental.as_ref(), "{version}");
        assert_eq!(sent[1], &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(sent[2]["params"], json!({"_meta": {"progressToken": 0}}));
    }
}

#[test]
fn startup_notices_follow_initialized() {
    // Measured on every MEASURED version: the sandbox warning (only when no
    // bwrap is on PATH) and the remote-control status, once per process.
    let bwrap = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("bwrap").is_file()));
    let mut s = start("0.146.0", plain(), &[], "", &[]).unwrap();
    s.thread(json!({}));
    assert_eq!(s.notes("configWarning").len(), usize::from(!bwrap), "{:?}", s.seen);
    let status = s.notes("remoteControl/status/changed");
    assert_eq!(status.len(), 1, "{:?}", s.seen);
    assert_eq!(status[0]["status"], "disabled");
    let id = std::fs::read_to_string(s.dir.join("home/installation_id")).unwrap();
    assert_eq!(status[0]["installationId"], json!(id));
    let mut s = s.relaunch(json!({}));
    s.thread(json!({}));
    assert_eq!(s.notes("remoteControl/status/changed")[0]["installationId"], json!(id), "kept across launches");
}

#[test]
fn a_turn_reports_its_input_usage_and_the_models_message() {
    // Two calls (one to a tool the model was not given): three model
    // responses, each followed by token usage and rate limits.
    let mut s = start("0.171.0", plain(), &["ro", "nope"], "", &[]).unwrap();
    let t = thread_id(&s.thread(json!({})));
    s.turn(&t, accept);
    assert_eq!(s.notes("warning").len(), 1);
    assert_eq!(s.notes("thread/tokenUsage/updated").len(), 3);
    assert_eq!(s.notes("account/rateLimits/updated").len(), 3);
    assert!(s.notes("account/rateLimits/updated")[0]["rateLimits"].get("normalModelSlug").is_some());
    let items: Vec<Value> = s.notes("item/completed").into_iter().map(|p| p["item"].clone()).collect();
    let kinds: Vec<&str> = items.iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(kinds, ["userMessage", "mcpToolCall", "agentMessage"]);
    assert_eq!(items[0]["content"], json!([]), "the turn's input as sent");
    assert_eq!(items[2]["id"], "msg_resp_0_2", "named as the mock model names it");
}

#[test]
fn a_resumed_thread_carries_its_history_from_the_rollout() {
    for (version, paged) in [("0.146.0", false), ("0.171.0", true)] {
        let mut s = start_turns(version, plain(), &[&["ro"], &["ro"]], "", &[], json!({})).unwrap();
        let r = s.thread(json!({}));
        let t = thread_id(&r);
        let path = r["result"]["thread"]["path"].as_str().unwrap().to_string();
        assert!(path.starts_with(&s.dir.join("home/sessions").display().to_string()) && path.ends_with(&format!("-{t}.jsonl")), "{path}");
        assert!(!std::path::Path::new(&path).exists(), "{version}: written from the first turn on");
        s.turn(&t, accept);
        assert!(std::path::Path::new(&path).is_file(), "{version}");
        assert_eq!(s.notes("thread/started").len(), 1, "{version}");
        let mut s = s.relaunch(json!({}));
        let r = s.request("thread/resume", json!({"threadId": t})).unwrap();
        let res = &r["result"];
        assert_eq!((&res["thread"]["path"], &res["thread"]["preview"]), (&json!(path), &json!("")), "{version}");
        let turns = res["thread"]["turns"].as_array().unwrap();
        assert_eq!((turns.len(), &turns[0]["itemsView"]), (1, &json!("full")), "{version}");
        let ids: Vec<&Value> = turns[0]["items"].as_array().unwrap().iter().map(|i| &i["id"]).collect();
        if paged {
            assert_eq!(ids[1..], [&json!("call_0"), &json!("msg_resp_0_1")], "{version}");
            // Ordinals of the real rollout (relaunch-keeps-policies, 0.171.0).
            assert!(res["itemsBackwardsCursor"].as_str().unwrap().contains("\"rolloutOrdinal\":14,"), "{res}");
            assert!(res["turnsBackwardsCursor"].as_str().unwrap().contains("\"rolloutOrdinal\":1,"), "{res}");
        } else {
            assert_eq!(ids, [&json!("item-1"), &json!("call_0"), &json!("item-2")], "{version}: legacy history renumbers messages");
            assert_eq!(res["itemsBackwardsCursor"], Value::Null);
        }
        assert_eq!(res.get("collaborationMode").is_some(), version == "0.171.0", "{version}");
        assert_eq!(s.notes("deprecationNotice").len(), usize::from(paged), "{version}");
        assert_eq!(s.notes("thread/status/changed"), [json!({"threadId": t, "status": {"type": "idle"}})], "{version}");
        s.turn(&t, accept);
        assert!(s.notes("thread/started").is_empty(), "{version}: only a new thread is announced");
        assert_eq!(s.notes("thread/goal/cleared").len(), 1, "{version}");
        assert_eq!(s.notes("thread/tokenUsage/updated")[0]["turnId"], turns[0]["id"], "{version}: the last turn's usage restored");
    }
}

#[test]
fn the_approval_request_describes_the_tool() {
    // Measured 2026-12-03 (0.171.0, and the recordings of every version).
    let tools = json!([{"name": "plain"}, {"name": "doc", "description": "Docs", "annotations": {"title": "Doc", "readOnlyHint": false}},
                       {"name": "titled", "annotations": {"title": "T"}}]);
    let modes = "default_tools_approval_mode = \"prompt\"\n[mcp_servers.lab.tools.plain]\napproval_mode = \"auto\"\n";
    for (version, annotated) in [("0.153.4", false), ("0.171.0", true)] {
        let mut s = start(version, tools.clone(), &["plain", "doc", "titled"], modes, &[]).unwrap();
        let t = thread_id(&s.thread(json!({})));
        let (reqs, _) = s.turn(&t, accept);
        let meta: Vec<&Value> = reqs.iter().map(|r| &r["params"]["_meta"]).collect();
        let (plain, doc) = (meta[0], meta[1]);
        assert_eq!(plain["persist"], json!(["session", "always"]), "{version}");
        assert!(plain.get("tool_description").is_none() && plain.get("tool_annotations").is_none(), "{version}: {plain}");
        assert!(doc.get("persist").is_none(), "{version}: a prompt tool's approval cannot be remembered: {doc}");
        assert_eq!(doc["tool_description"], "Docs", "{version}");
        let annotations = |m: &Value| m.get("tool_annotations").cloned();
        let expected = annotated.then(|| (json!({"readOnlyHint": false}), json!({})));
        assert_eq!(annotations(doc).zip(annotations(meta[2])), expected, "{version}");
    }
    // A persist the prompt tool was not offered does not stop it asking.
    let mut s = start("0.146.0", tools, &["doc", "doc"], modes, &[]).unwrap();
    let t = thread_id(&s.thread(json!({})));
    let (reqs, _) = s.turn(&t, |_| json!({"action": "accept", "content": {}, "_meta": {"persist": "always"}}));
    assert_eq!(reqs.len(), 2);
    assert!(!std::fs::read_to_string(s.dir.join("home/config.toml")).unwrap().contains("tools.doc"), "nothing persisted");
}

#[test]
fn read_state_goes_to_experimental_clients_from_0_171() {
    for (version, experimental, sent) in [("0.171.0", true, 1), ("0.171.0", false, 0), ("0.153.4", true, 0)] {
        let mut s = start_with(version, plain(), &["ro"], "", &[], json!({"experimentalApi": experimental})).unwrap();
        let t = thread_id(&s.thread(json!({})));
        s.turn(&t, accept);
        let states = s.notes("thread/readState/changed");
        assert_eq!(states.len(), sent, "{version} {experimental}");
        if sent == 1 {
            assert_eq!(states[0]["readState"]["firstUnread"]["turnId"], s.notes("turn/started")[0]["turn"]["id"]);
        }
    }
}

/// A server's own elicitation belongs to the call it ran in: after a refused
/// call of the same tool (which ran nothing and asked nothing), the next
/// call's elicitation and its answer are that call's request step, not the
/// first pending one of that tool in the turn.
#[test]
fn a_refused_call_then_the_same_tool_accepted_in_one_turn_raises_one_elicitation() {
    let tools = json!([{"name": "deploy", "elicits": "Which environment?"}]);
    let call = |step: usize| json!({"kind": "tool_call", "step": step, "server": "lab", "tool": "deploy", "arguments": {"n": step}});
    let raised_by = |step: usize, call: usize| json!({"kind": "request", "step": step, "request": "form_elicitation", "server": "lab", "raised_by": call});
    // The refused call's request step waits for a question that never comes.
    let actions = json!([call(0), raised_by(1, 0), call(2), raised_by(3, 2)]);
    let tmp = tempfile::tempdir().unwrap();
    write_run(tmp.path(), "0.171.0", tools, vec![json!({"actions": actions})], "");
    let mut s = launch(tmp, &[], json!({"experimentalApi": true})).unwrap();
    let t = thread_id(&s.thread(json!({"approvalPolicy": "on-request"})));
    let approvals = std::cell::Cell::new(0);
    let (reqs, items) = s.turn(&t, |m| {
        if m["params"]["_meta"]["codex_approval_kind"] == "mcp_tool_call" {
            approvals.set(approvals.get() + 1);
            if approvals.get() == 1 {
                return decline(m);
            }
            return accept(m);
        }
        json!({"action": "accept", "content": {"answer": "staging"}})
    });
    let asked: Vec<&Value> = reqs.iter().filter(|r| r["params"]["message"] == "Which environment?").collect();
    assert_eq!(asked.len(), 1, "one server elicitation, from the accepted call: {reqs:?}");
    assert_eq!(items[0]["status"], "failed");
    assert_eq!(items[1]["status"], "completed");
    assert_eq!(s.server_calls(), 1);
    let raised: Vec<Value> = s.outcomes().into_iter().filter(|o| o["method"] == "mcpServer/elicitation/request").collect();
    assert_eq!(raised.len(), 1);
    assert_eq!(raised[0]["step"], 3, "the answer is the request step raised by call 2, not the refused call's");
    assert_eq!(raised[0]["answer"], "accept");
    let back = items[1]["result"]["content"].to_string();
    assert!(back.contains("staging"), "the server got the host's content: {back}");
}
