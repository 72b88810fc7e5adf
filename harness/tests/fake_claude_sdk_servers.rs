//! The fake Claude Code's SDK servers (in-process MCP servers of the SDK
//! host, reached through `mcp_message`), driven as an SDK host would: the
//! TS SDK's manifests (parked or not), the full handshake (no manifest, and
//! the Python SDK's `--mcp-config` entry), tools/call ids and `_meta`,
//! gating, the host's errors and answers the CLI cannot use. Expected
//! shapes are those measured on 2.1.332 and 2.1.334 (SDK-FACTS.md A and C).

mod claude_lab;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use claude_lab::*;
use serde_json::{json, Value};

const V334: &str = "2.1.334";
const ARGV: [&str; 6] = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--permission-prompt-tool=stdio"];

struct Run {
    out: Vec<Value>,
    code: i32,
    stderr: String,
    took: Duration,
}

impl Run {
    fn requests(&self, subtype: &str) -> Vec<&Value> {
        self.out.iter().filter(|m| m["type"] == "control_request" && m["request"]["subtype"] == subtype).collect()
    }

    fn mcp(&self, method: &str) -> Vec<&Value> {
        self.requests("mcp_message").into_iter().filter(|m| m["request"]["message"]["method"] == method).collect()
    }

    fn tool_results(&self) -> Vec<&Value> {
        let blocks = self.out.iter().filter(|m| m["type"] == "user").filter_map(|m| m["message"]["content"].as_array()).flatten();
        blocks.filter(|b| b["type"] == "tool_result").collect()
    }

    fn position(&self, pred: impl Fn(&Value) -> bool) -> usize {
        self.out.iter().position(pred).unwrap_or(usize::MAX)
    }

    fn init_response(&self) -> &Value {
        let m = self.out.iter().find(|m| m["type"] == "control_response" && m["response"]["request_id"] == "init1");
        &m.unwrap_or_else(|| panic!("no initialize answer: {:?}", self.out))["response"]["response"]
    }

    fn init_event(&self) -> &Value {
        self.out.iter().find(|m| m["type"] == "system" && m["subtype"] == "init").unwrap_or_else(|| panic!("no init: {:?}", self.out))
    }
}

const PING: fn() -> Value = || json!({"name": "ping", "description": "in-process ping", "inputSchema": {"type": "object"}});

fn manifest(protocol: &str) -> Value {
    json!({"insdk": {
        "initializeResult": {"protocolVersion": protocol, "capabilities": {"tools": {}}, "serverInfo": {"name": "insdk", "version": "0.0.1"}},
        "toolsListResult": {"tools": [PING()]},
    }})
}

/// The lab's `srv` (stdio, `echo`) as an initialize `mcpServers` record.
fn srv(lab: &Lab) -> Value {
    json!({"srv": lab.stdio("srv", json!([{"name": "echo"}]))})
}

/// A host's default answer to an `mcp_message`, as drive.py gave them.
fn serve(m: &Value) -> Value {
    let msg = &m["request"]["message"];
    let id = msg["id"].clone();
    let response = match msg["method"].as_str() {
        Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "insdk", "version": "0.0.1"}}}),
        Some("notifications/initialized") => json!({"jsonrpc": "2.0", "result": {}, "id": 0}),
        Some("tools/list") => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [PING()]}}),
        Some("tools/call") => match msg["params"]["arguments"]["text"].as_str() {
            Some("rpcerr") => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "SDK-TOOL-BROKE"}}),
            Some("iserr") => json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "SDK-ISERROR"}], "isError": true}}),
            Some("ctlerr") => return json!({"type": "control_response", "response": {"subtype": "error", "request_id": m["request_id"], "error": "CONTROL-ERROR-FOR-MCP"}}),
            Some("wrongid") => json!({"jsonrpc": "2.0", "id": 999, "result": {"content": [{"type": "text", "text": "WRONG-ID"}]}}),
            _ => json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": format!("pong:{}", msg["params"]["arguments"])}]}}),
        },
        _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "nope"}}),
    };
    ok(m, json!({"mcp_response": response}))
}

fn ok(msg: &Value, response: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"], "response": response}})
}

/// Runs the fake as a host: writes initialize (`hooks`, `init` fields) and a
/// prompt at once, answers what it prints with `on` (or the defaults:
/// `serve`, allow, `{}`), and closes stdin after the first result (or when
/// `on` answers `close`).
fn drive(lab: &Lab, args: &[&str], init: Value, on: &mut dyn FnMut(&Value) -> Option<Vec<Value>>) -> Run {
    let mut all = ARGV.to_vec();
    all.extend_from_slice(args);
    let started = Instant::now();
    let mut child = lab.command(&all).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take();
    let mut request = json!({"subtype": "initialize", "hooks": {}});
    if let (Some(r), Some(x)) = (request.as_object_mut(), init.as_object()) {
        r.extend(x.clone());
    }
    let user = json!({"type": "user", "message": {"role": "user", "content": "go"}, "parent_tool_use_id": null, "session_id": ""});
    for line in [json!({"type": "control_request", "request_id": "init1", "request": request}), user] {
        writeln!(stdin.as_mut().unwrap(), "{line}").unwrap();
    }
    let mut out = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let msg: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let replies = on(&msg).unwrap_or_else(|| match msg["request"]["subtype"].as_str() {
            _ if msg["type"] != "control_request" => vec![],
            Some("mcp_message") => vec![serve(&msg)],
            Some("can_use_tool") => vec![ok(&msg, json!({"behavior": "allow", "updatedInput": msg["request"]["input"]}))],
            _ => vec![ok(&msg, json!({}))],
        });
        for reply in replies {
            if reply == json!("close") {
                stdin = None;
            } else if let Some(s) = stdin.as_mut() {
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
    Run { out, code: output.status.code().unwrap_or(-1), stderr: String::from_utf8_lossy(&output.stderr).to_string(), took: started.elapsed() }
}

fn ping(step: usize, text: &str) -> Value {
    call(step, "insdk", "ping", json!({"text": text}))
}

fn defaults(_: &Value) -> Option<Vec<Value>> {
    None
}

#[test]
fn a_manifest_for_2025_11_25_is_parked_and_only_tools_call_goes_out() {
    for version in [NEW, V334] {
        let lab = Lab::new(version, vec![vec![ping(0, "ok"), call(1, "srv", "echo", json!({"text": "after"}))]]);
        let init = json!({"mcpServers": srv(&lab), "sdkMcpServers": ["insdk"], "sdkMcpServerManifests": manifest("2025-11-25")});
        let run = drive(&lab, &["--await-initialize", "--allowedTools=mcp__insdk__ping,mcp__srv__echo"], init, &mut defaults);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.init_response()["sdk_mcp_manifests_parked"], json!({"insdk": "parked"}));
        let sent = run.requests("mcp_message");
        assert_eq!(sent.len(), 1, "{version}: {sent:?}");
        let call = sent[0];
        assert_eq!(call["request"]["server_name"], "insdk");
        assert_eq!(call["request"]["message"], json!({
            "method": "tools/call", "jsonrpc": "2.0", "id": 2,
            "params": {"name": "ping", "arguments": {"text": "ok"}, "_meta": {"claudecode/toolUseId": "toolu_fake_0", "progressToken": 2}},
        }));
        assert_eq!(call.get("flush"), if version == V334 { Some(&json!(true)) } else { None }, "{version}");
        // SDK servers are listed last, with their source.
        let init = run.init_event();
        assert_eq!(init["mcp_servers"].as_array().unwrap().last(), Some(&json!({"name": "insdk", "status": "connected", "source": "sdk"})));
        assert!(init["tools"].as_array().unwrap().contains(&json!("mcp__insdk__ping")));
        let results = run.tool_results();
        assert_eq!(results[0]["content"], json!([{"type": "text", "text": "pong:{\"text\":\"ok\"}"}]));
        assert!(run.requests("can_use_tool").is_empty());
        // The transcript has the call, as the harness counts it.
        let recorded: Vec<Value> = lab.transcript().into_iter().filter(|e| e["event"] == "sdk_server_call").collect();
        assert_eq!(recorded.len(), 1);
        assert_eq!((&recorded[0]["server"], &recorded[0]["tool"], &recorded[0]["arguments"]), (&json!("insdk"), &json!("ping"), &json!({"text": "ok"})));
        assert_eq!(recorded[0]["meta"]["progressToken"], 2);
        assert_eq!(lab.calls("srv").len(), 1);
    }
}

#[test]
fn without_a_usable_manifest_initialize_comes_before_the_answer_and_the_handshake_after() {
    let cases = [(None, None), (Some(manifest("2025-06-18")), Some("protocol_version_mismatch")), (Some(json!({"insdk": {"nope": 1}})), Some("malformed"))];
    for (manifests, status) in cases {
        let lab = Lab::new(V334, vec![vec![ping(0, "ok")]]);
        let mut init = json!({"mcpServers": srv(&lab), "sdkMcpServers": ["insdk"]});
        if let Some(m) = manifests {
            init["sdkMcpServerManifests"] = m;
        }
        let run = drive(&lab, &["--await-initialize", "--allowedTools=mcp__insdk__ping"], init, &mut defaults);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.init_response().get("sdk_mcp_manifests_parked"), status.map(|s| json!({"insdk": s})).as_ref());
        let methods: Vec<&str> = run.requests("mcp_message").iter().map(|m| m["request"]["message"]["method"].as_str().unwrap_or("")).collect();
        assert_eq!(methods, ["initialize", "notifications/initialized", "tools/list", "tools/call"]);
        let initialize = &run.mcp("initialize")[0]["request"]["message"];
        assert_eq!((&initialize["id"], &initialize["params"]["protocolVersion"], &initialize["params"]["capabilities"]), (&json!(0), &json!("2025-11-25"), &json!({})));
        assert_eq!(initialize["params"]["clientInfo"]["version"], V334);
        assert_eq!(run.mcp("notifications/initialized")[0]["request"]["message"], json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(run.mcp("tools/list")[0]["request"]["message"], json!({"method": "tools/list", "jsonrpc": "2.0", "id": 1}));
        assert_eq!(run.mcp("tools/call")[0]["request"]["message"]["id"], 2);
        let answered = run.position(|m| m["type"] == "control_response" && m["response"]["request_id"] == "init1");
        let at = |method: &str| run.position(|m| m["request"]["message"]["method"] == method);
        assert!(at("initialize") < answered && answered < at("notifications/initialized"), "{:?}", run.out);
        assert!(at("tools/list") < run.position(|m| m["subtype"] == "init"));
        assert_eq!(run.tool_results().len(), 1, "the prompt sent during the handshake is played");
    }
}

#[test]
fn the_python_sdks_mcp_config_entry_gets_the_full_handshake() {
    let lab = Lab::new(NEW, vec![vec![ping(0, "ok"), call(1, "srv", "echo", json!({}))]]);
    let config = json!({"mcpServers": {"srv": lab.stdio("srv", json!([{"name": "echo"}])), "insdk": {"type": "sdk", "name": "insdk"}}}).to_string();
    let run = drive(&lab, &["--allowedTools", "mcp__insdk__ping,mcp__srv__echo", "--mcp-config", &config], json!({"hooks": null}), &mut defaults);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.init_response().get("sdk_mcp_manifests_parked").is_none());
    let methods: Vec<&str> = run.requests("mcp_message").iter().map(|m| m["request"]["message"]["method"].as_str().unwrap_or("")).collect();
    assert_eq!(methods, ["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    assert!(run.requests("mcp_message").iter().all(|m| m.get("flush").is_none()), "no flush on 2.1.332");
    let servers = &run.init_event()["mcp_servers"];
    assert_eq!(servers, &json!([{"name": "srv", "status": "connected", "source": "dynamic"}, {"name": "insdk", "status": "connected", "source": "sdk"}]));
    assert_eq!(run.tool_results().len(), 2);
}

#[test]
fn the_hosts_errors_reach_the_model_as_measured() {
    let lab = Lab::new(NEW, vec![vec![ping(0, "rpcerr"), ping(1, "iserr"), ping(2, "ctlerr"), ping(3, "ok")]]);
    let init = json!({"sdkMcpServers": ["insdk"], "sdkMcpServerManifests": manifest("2025-11-25")});
    let run = drive(&lab, &["--allowedTools=mcp__insdk__ping"], init, &mut defaults);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let results = run.tool_results();
    let shown: Vec<(&Value, &Value)> = results.iter().map(|b| (&b["content"], &b["is_error"])).collect();
    assert_eq!(shown[..3], [(&json!("SDK-TOOL-BROKE"), &json!(true)), (&json!("SDK-ISERROR"), &json!(true)), (&json!("CONTROL-ERROR-FOR-MCP"), &json!(true))]);
    let uses: Vec<&Value> = run.out.iter().filter(|m| m["type"] == "user").map(|m| &m["tool_use_result"]).collect();
    assert_eq!(uses[..3], [&json!("Error: SDK-TOOL-BROKE"), &json!("Error: SDK-ISERROR"), &json!("Error: CONTROL-ERROR-FOR-MCP")]);
    // The calls keep counting: progressToken 2, 3, 4, 5.
    let tokens: Vec<&Value> = run.mcp("tools/call").iter().map(|m| &m["request"]["message"]["params"]["_meta"]["progressToken"]).collect();
    assert_eq!(tokens, [&json!(2), &json!(3), &json!(4), &json!(5)]);
    assert_eq!(results[3]["is_error"], Value::Null);
}

#[test]
fn sdk_tools_are_gated_like_any_other() {
    let lab = Lab::new(V334, vec![vec![ping(0, "a"), ping(1, "b")]]);
    let hooks = json!({"PreToolUse": [{"matcher": "mcp__.*", "hookCallbackIds": ["hook_0"]}]});
    let init = json!({"hooks": hooks, "sdkMcpServers": ["insdk"], "sdkMcpServerManifests": manifest("2025-11-25")});
    let mut first = true;
    let mut on = |m: &Value| -> Option<Vec<Value>> {
        if m["request"]["subtype"] != "can_use_tool" {
            return None;
        }
        let deny = std::mem::take(&mut first);
        let answer = if deny { json!({"behavior": "deny", "message": "NO-SDK"}) } else { json!({"behavior": "allow", "updatedInput": m["request"]["input"]}) };
        Some(vec![ok(m, answer)])
    };
    let run = drive(&lab, &["--await-initialize"], init, &mut on);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let hook = run.requests("hook_callback")[0];
    assert_eq!(hook["request"]["input"]["mcp_server"], json!({"name": "insdk", "source": "sdk"}));
    let asked = run.requests("can_use_tool");
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0]["request"]["mcp_server"], json!({"name": "insdk", "source": "sdk"}));
    // The denied call never reaches the host's server; the allowed one does.
    let calls = run.mcp("tools/call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["request"]["message"]["params"]["arguments"], json!({"text": "b"}));
    assert_eq!(run.tool_results()[0]["content"], "NO-SDK");
}

#[test]
fn an_answer_the_cli_cannot_use_waits_until_the_host_ends_it() {
    // The real CLI waits for ever (heartbeat every 30 s); the fake too, but
    // the host's interrupt or its input ending stops the wait.
    let lab = Lab::new(V334, vec![vec![ping(0, "wrongid"), ping(1, "ok")]]);
    let init = json!({"sdkMcpServers": ["insdk"], "sdkMcpServerManifests": manifest("2025-11-25")});
    let mut on = |m: &Value| -> Option<Vec<Value>> {
        (m["request"]["message"]["params"]["arguments"]["text"] == "wrongid").then(|| vec![serve(m), json!("close")])
    };
    let run = drive(&lab, &["--allowedTools=mcp__insdk__ping"], init.clone(), &mut on);
    assert!(run.took < Duration::from_secs(20), "{:?}", run.took);
    assert_eq!(run.mcp("tools/call").len(), 1, "the turn goes no further");
    let unanswered = lab.transcript().into_iter().filter(|e| e["event"] == "sdk_server_unanswered").count();
    assert_eq!(unanswered, 1);

    let lab = Lab::new(V334, vec![vec![ping(0, "noresult"), ping(1, "ok")]]);
    let interrupt = json!({"type": "control_request", "request_id": "int1", "request": {"subtype": "interrupt"}});
    let mut on = |m: &Value| -> Option<Vec<Value>> {
        (m["request"]["message"]["params"]["arguments"]["text"] == "noresult").then(|| vec![ok(m, json!({})), interrupt.clone()])
    };
    let run = drive(&lab, &["--allowedTools=mcp__insdk__ping"], init, &mut on);
    let answered = run.out.iter().find(|m| m["type"] == "control_response" && m["response"]["request_id"] == "int1");
    assert_eq!(answered.map(|m| &m["response"]["response"]), Some(&json!({"still_queued": []})));
    let result = run.out.iter().find(|m| m["type"] == "result").expect("a result");
    assert_eq!(result["terminal_reason"], "aborted_tools");
    assert_eq!(run.mcp("tools/call").len(), 1);
}
