//! The fake `codex app-server` behaves like the measured real one
//! (../shared/PROVIDERS.md): config sources, version-specific approval logic,
//! and wire shapes. Drives the fake directly, without any driver.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

const FAKE_CODEX: &str = env!("CARGO_BIN_EXE_fake-codex");
const FAKE_MCP: &str = env!("CARGO_BIN_EXE_fake-mcp");

struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
    _dir: tempfile::TempDir,
    dir: PathBuf,
}

/// A run directory with one stdio MCP server `lab` exposing `tools`, a
/// script whose first turn calls `calls` in order, and `config` appended to
/// config.toml.
fn start(version: &str, tools: Value, calls: &[&str], config: &str, overrides: &[&str]) -> Result<Session, (i32, String)> {
    start_with(version, tools, calls, config, overrides, json!({"experimentalApi": true}))
}

fn start_with(
    version: &str,
    tools: Value,
    calls: &[&str],
    config: &str,
    overrides: &[&str],
    capabilities: Value,
) -> Result<Session, (i32, String)> {
    start_turns(version, tools, &[calls], config, overrides, capabilities)
}

/// [`start_with`], the script playing one turn per entry of `turns`.
fn start_turns(
    version: &str,
    tools: Value,
    turns: &[&[&str]],
    config: &str,
    overrides: &[&str],
    capabilities: Value,
) -> Result<Session, (i32, String)> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    std::fs::write(dir.join("lab.json"), json!({"server": "lab", "tools": tools}).to_string()).unwrap();
    let mut step = 0;
    let turns: Vec<Value> = turns
        .iter()
        .map(|calls| {
            let actions: Vec<Value> = calls
                .iter()
                .map(|t| {
                    step += 1;
                    json!({"kind": "tool_call", "step": step - 1, "server": "lab", "tool": t, "arguments": {"n": step - 1}})
                })
                .collect();
            json!({"actions": actions})
        })
        .collect();
    let script = json!({"version": version, "transcript": dir.join("codex.jsonl"), "state": dir.join("state.json"),
                        "turns": turns});
    std::fs::write(dir.join("script.json"), script.to_string()).unwrap();
    let toml = format!(
        "[mcp_servers.lab]\ncommand = {:?}\nargs = [\"stdio\", \"--catalog\", {:?}, \"--record\", {:?}]\n{config}",
        FAKE_MCP,
        dir.join("lab.json").display().to_string(),
        dir.join("lab.jsonl").display().to_string()
    );
    std::fs::write(dir.join("home/config.toml"), toml).unwrap();
    let mut cmd = Command::new(FAKE_CODEX);
    cmd.arg("--run").arg(dir.join("script.json"));
    for o in overrides {
        cmd.arg("-c").arg(o);
    }
    let mut child = cmd
        .arg("app-server")
        .env("CODEX_HOME", dir.join("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let mut s = Session { child, stdin, lines, next_id: 0, _dir: tmp, dir };
    match s.request("initialize", json!({"clientInfo": {"name": "t", "version": "0"}, "capabilities": capabilities})) {
        Some(_) => {
            s.send(json!({"method": "initialized"}));
            Ok(s)
        }
        None => {
            let status = s.child.wait().unwrap();
            let mut err = String::new();
            std::io::Read::read_to_string(s.child.stderr.as_mut().unwrap(), &mut err).unwrap();
            Err((status.code().unwrap_or(-1), err))
        }
    }
}

impl Session {
    fn send(&mut self, msg: Value) {
        let _ = writeln!(self.stdin, "{msg}");
    }

    fn next(&mut self) -> Option<Value> {
        self.lines.recv_timeout(Duration::from_secs(10)).ok()
    }

    /// Sends a request and returns its response (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Option<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"id": id, "method": method, "params": params}));
        loop {
            let m = self.next()?;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return Some(m);
            }
        }
    }

    fn thread(&mut self, params: Value) -> Value {
        self.request("thread/start", params).unwrap()
    }

    /// Runs the scripted turn, answering each server request with `answer`;
    /// returns (server requests seen, completed mcpToolCall items).
    fn turn(&mut self, thread_id: &str, answer: impl Fn(&Value) -> Value) -> (Vec<Value>, Vec<Value>) {
        self.request("turn/start", json!({"threadId": thread_id, "input": []})).unwrap();
        let (mut requests, mut items) = (Vec::new(), Vec::new());
        loop {
            let m = self.next().expect("turn did not complete");
            match (m.get("method").and_then(Value::as_str), m.get("id")) {
                (Some("turn/completed"), _) => return (requests, items),
                (Some("item/completed"), None) if m["params"]["item"]["type"] == "mcpToolCall" => items.push(m["params"]["item"].clone()),
                (Some(_), Some(id)) => {
                    let id = id.clone();
                    self.send(json!({"id": id, "result": answer(&m)}));
                    requests.push(m);
                }
                _ => {}
            }
        }
    }

    fn outcomes(&self) -> Vec<Value> {
        fakes::wire::read_jsonl(&self.dir.join("codex.jsonl")).unwrap().into_iter().filter(|e| e["event"] == "outcome").collect()
    }

    fn server_calls(&self) -> usize {
        fakes::wire::read_jsonl(&self.dir.join("lab.jsonl")).unwrap_or_default().iter().filter(|e| e["event"] == "tools/call").count()
    }
}

fn plain() -> Value {
    json!([{"name": "plain"}, {"name": "ro", "annotations": {"readOnlyHint": true}}])
}

fn accept(_: &Value) -> Value {
    json!({"action": "accept", "content": {}})
}

fn decline(_: &Value) -> Value {
    json!({"action": "decline"})
}

fn thread_id(r: &Value) -> String {
    r["result"]["thread"]["id"].as_str().unwrap().to_string()
}

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
