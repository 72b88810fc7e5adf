//! Tests of the real-run derivation: outcomes read from recorded wires.

use std::path::Path;

use serde_json::json;

use super::*;

fn scenario_text() -> String {
    crate::scenario::sample("write_file", "prompt", "{ prompted = true }", "[[steps]]\nkind = \"resume\"\n\n[[steps]]\nkind = \"tool_call\"\nserver = \"files\"\ntool = \"write_file\"\nexpect = { prompted = true }\n")
}

fn line(pid: u32, dir: &str, msg: Value) -> Value {
    json!({"dir": dir, "pid": pid, "msg": msg})
}

fn item(pid: u32, method: &str, call: &str) -> Value {
    line(pid, "s2c", json!({"method": method, "params": {"item": {"id": call, "status": "completed", "result": null}}}))
}

fn prompt(pid: u32, id: u64) -> Value {
    line(pid, "s2c", json!({"id": id, "method": "mcpServer/elicitation/request", "params": {"_meta": {"codex_approval_kind": "mcp_tool_call"}}}))
}

fn answer(pid: u32, id: u64, action: &str) -> Value {
    line(pid, "c2s", json!({"id": id, "result": {"action": action}}))
}

#[test]
fn each_outcome_reads_the_answer_its_own_provider_process_got() {
    // The driver relaunched: the second app-server numbers its prompt 0
    // again, and starts before the first has exited.
    let wire = [
        json!({"event": "launch", "pid": 10}),
        item(10, "item/started", "call_0"),
        prompt(10, 0),
        answer(10, 0, "decline"),
        item(10, "item/completed", "call_0"),
        json!({"event": "launch", "pid": 11}),
        item(11, "item/started", "call_2"),
        prompt(11, 0),
        json!({"event": "exit", "pid": 10, "code": 0}),
        answer(11, 0, "accept"),
        item(11, "item/completed", "call_2"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("provider.jsonl");
    let text: String = wire.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text).unwrap();
    let scenario = Scenario::parse(Path::new("t.toml"), &scenario_text()).unwrap();
    derive_outcomes(&scenario, dir.path(), &transcript);
    let outcomes: Vec<Value> = read_jsonl(&transcript).unwrap().into_iter().filter(|e| e["event"] == "outcome").collect();
    let got: Vec<(Value, Value, Value)> =
        outcomes.iter().map(|o| (o["step"].clone(), o["answer"].clone(), o[PROCESS].clone())).collect();
    assert_eq!(got, [(json!(0), json!("decline"), json!(10)), (json!(2), json!("accept"), json!(11))]);
}

#[test]
fn a_servers_own_elicitation_is_its_request_step_not_the_calls_prompt() {
    let asks = |id: u64| line(10, "s2c", json!({"id": id, "method": "mcpServer/elicitation/request", "params": {"serverName": "deploy", "mode": "form", "_meta": null}}));
    let wire = [
        json!({"event": "launch", "pid": 10}),
        item(10, "item/started", "call_0"),
        asks(0),
        answer(10, 0, "decline"),
        item(10, "item/completed", "call_0"),
        item(10, "item/started", "call_2"),
        asks(1),
        answer(10, 1, "accept"),
        item(10, "item/completed", "call_2"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("provider.jsonl");
    std::fs::write(&transcript, wire.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let text = include_str!("../../../../scenarios/server-elicitation-goes-to-host.toml");
    let scenario = Scenario::parse(Path::new("s.toml"), text).unwrap();
    derive_outcomes(&scenario, dir.path(), &transcript);
    let outcomes: Vec<Value> = read_jsonl(&transcript).unwrap().into_iter().filter(|e| e["event"] == "outcome").collect();
    let got: Vec<(Value, Value, Value)> = outcomes.iter().map(|o| (o["step"].clone(), o["prompted"].clone(), o["answer"].clone())).collect();
    assert_eq!(
        got,
        [
            (json!(0), json!(false), Value::Null),
            (json!(2), json!(false), Value::Null),
            (json!(1), json!(true), json!("decline")),
            (json!(3), json!(true), json!("accept")),
        ]
    );
    // The first call asked nothing (say it was refused): the one
    // elicitation is the second call's, not the first request step's.
    let wire: Vec<Value> = wire.iter().filter(|e| e["msg"]["id"] != json!(0)).cloned().collect();
    std::fs::write(&transcript, wire.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    derive_outcomes(&scenario, dir.path(), &transcript);
    let outcomes: Vec<Value> = read_jsonl(&transcript).unwrap().into_iter().filter(|e| e["event"] == "outcome" && e["method"].is_string()).collect();
    let got: Vec<(Value, Value)> = outcomes.iter().map(|o| (o["step"].clone(), o["answer"].clone())).collect();
    assert_eq!(got, [(json!(3), json!("accept"))]);
}

#[test]
fn a_command_steps_outcome_is_its_own_approval_and_what_the_model_saw() {
    let asks = |id: u64, call: &str| line(10, "s2c", json!({"id": id, "method": "item/commandExecution/requestApproval", "params": {"itemId": call}}));
    let decides = |id: u64, decision: Value| line(10, "c2s", json!({"id": id, "result": {"decision": decision}}));
    let ended = |call: &str, status: &str| line(10, "s2c", json!({"method": "item/completed", "params": {"item": {"id": call, "status": status}}}));
    // Steps 0, 2 and 3 are commands (decline, accept, cancel); step 2 is
    // asked first, so replies are matched by id, not by order.
    let wire = [
        json!({"event": "launch", "pid": 10}),
        asks(0, "call_2"),
        asks(1, "call_0"),
        decides(1, json!("decline")),
        ended("call_0", "declined"),
        decides(0, json!({"acceptWithExecpolicyAmendment": {}})),
        ended("call_2", "completed"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("provider.jsonl");
    std::fs::write(&transcript, wire.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let model = json!({"body": {"input": [{"type": "function_call_output", "call_id": "call_0", "output": "rejected"}]}});
    std::fs::write(dir.path().join("model.jsonl"), format!("{model}\n")).unwrap();
    let text = include_str!("../../../../scenarios/command-requests-go-to-host.toml");
    let scenario = Scenario::parse(Path::new("s.toml"), text).unwrap();
    derive_outcomes(&scenario, dir.path(), &transcript);
    let outcomes: Vec<Value> = read_jsonl(&transcript).unwrap().into_iter().filter(|e| e["method"] == "item/commandExecution/requestApproval").collect();
    let got: Vec<(Value, Value, Value, Value)> =
        outcomes.iter().map(|o| (o["step"].clone(), o["answer"].clone(), o["item_status"].clone(), o["model_saw"].clone())).collect();
    assert_eq!(
        got,
        [
            (json!(0), json!("decline"), json!("declined"), json!("rejected")),
            (json!(2), json!("accept-with-amendment"), json!("completed"), Value::Null),
        ]
    );
}

fn proxied(pid: u32, dir: &str, msg: Value) -> Value {
    json!({"event": "proxied", "server": "bridge", "dir": dir, "pid": pid, "msg": msg})
}

fn prompt_call(pid: u32, id: u64, use_id: &str) -> Value {
    proxied(pid, "c2s", json!({"id": id, "method": "tools/call", "params": {"name": "permission_prompt", "arguments": {"tool_use_id": use_id}}}))
}

fn prompt_reply(pid: u32, id: u64, behavior: &str) -> Value {
    let text = json!({"behavior": behavior, "message": "m", "updatedInput": {}}).to_string();
    proxied(pid, "s2c", json!({"id": id, "result": {"content": [{"type": "text", "text": text}]}}))
}

#[test]
fn prompt_answers_come_from_the_proxied_prompt_tool_per_process() {
    let launch = |pid: u32| json!({"event": "launch", "pid": pid, "argv": ["-p", "x", "--permission-prompt-tool", "mcp__bridge__permission_prompt"]});
    // A relaunch numbers its MCP requests from 0 again.
    let wire = [launch(10), prompt_call(10, 2, "toolu_a"), prompt_reply(10, 2, "deny"), launch(11), prompt_call(11, 2, "toolu_b"), prompt_reply(11, 2, "allow")];
    let got = prompt_answers(&wire).expect("the prompt tool's server was proxied");
    assert_eq!(got, BTreeMap::from([("toolu_a".to_string(), json!("deny")), ("toolu_b".to_string(), json!("allow"))]));
    // A prompt tool on a server the proxy never saw: nothing to go by.
    let unseen = [launch(10)];
    assert_eq!(prompt_answers(&unseen), None);
    // A bridge whose name the CLI renames (`my.bridge` -> `my_bridge`).
    let renamed = |e: Value| { let mut e = e; e["server"] = json!("my.bridge"); e };
    let launch = json!({"event": "launch", "pid": 12, "argv": ["--permission-prompt-tool", "mcp__my_bridge__permission_prompt"]});
    let wire = [launch, renamed(prompt_call(12, 1, "toolu_c")), renamed(prompt_reply(12, 1, "allow"))];
    assert_eq!(prompt_answers(&wire), Some(BTreeMap::from([("toolu_c".to_string(), json!("allow"))])));
    // No prompt tool at all: the CLI asked no one.
    assert_eq!(prompt_answers(&[json!({"event": "launch", "pid": 10, "argv": ["-p", "x"]})]), Some(BTreeMap::new()));
}

#[test]
fn a_bridged_result_is_the_reply_to_its_own_call() {
    let call = |id: u64, use_id: &str| proxied(10, "c2s", json!({"id": id, "method": "tools/call", "params": {"name": "report", "_meta": {"claudecode/toolUseId": use_id}}}));
    let reply = |id: u64, text: &str| proxied(10, "s2c", json!({"id": id, "result": {"content": [{"type": "text", "text": text}]}}));
    let wire = [call(3, "toolu_a"), call(4, "toolu_b"), reply(4, "B"), reply(3, "A")];
    assert_eq!(proxied_result(&wire, "bridge", "toolu_a"), Some(json!({"content": [{"type": "text", "text": "A"}]})));
    assert_eq!(proxied_result(&wire, "other", "toolu_a"), None);
}
