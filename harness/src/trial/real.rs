//! Running scenarios on the REAL provider binaries: where they are cached,
//! how they are fetched, which scenarios they can play, and the outcome
//! records derived from a real run so the judge reads it exactly like a
//! fake's transcript.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fakes::claude::profile::{NOT_GRANTED, NO_SUCH_TOOL};
use fakes::version::Version;
use fakes::wire::{process_of, read_jsonl, PROCESS};
use serde_json::{json, Value};

use crate::scenario::{Provider, Scenario, Step};

/// `${XDG_CACHE_HOME:-~/.cache}/approval-conformance`, where
/// `scripts/fetch-provider.sh` unpacks real binaries.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("approval-conformance"))
}

/// The cached real binary for a provider version, if fetched.
pub fn cached_binary(provider: Provider, version: Version) -> Option<PathBuf> {
    let dir = cache_dir()?;
    let path = match provider {
        Provider::Codex => dir.join(format!("codex/{version}/package/vendor/x86_64-unknown-linux-musl/bin/codex")),
        Provider::Claude => dir.join(format!("claude/{version}/node_modules/@anthropic-ai/claude-code-linux-x64/claude")),
        _ => return None,
    };
    path.is_file().then_some(path)
}

/// Fetches a real binary from the npm registry into the cache (a no-op when
/// it is there already) and returns its path.
pub fn fetch(provider: Provider, version: Version) -> Result<PathBuf, String> {
    if let Some(bin) = cached_binary(provider, version) {
        return Ok(bin);
    }
    let cache = cache_dir().ok_or("no cache directory: set HOME or XDG_CACHE_HOME")?;
    let dest = cache.join(provider.as_str()).join(version.to_string());
    std::fs::create_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let run = |cmd: &mut std::process::Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
        }
    };
    match provider {
        Provider::Codex => {
            let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
            run(std::process::Command::new("npm").args(["pack", "--silent", &format!("@openai/codex@{version}-linux-x64")]).current_dir(tmp.path()))?;
            let tarball = std::fs::read_dir(tmp.path())
                .map_err(|e| e.to_string())?
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "tgz"))
                .ok_or("npm pack wrote no tarball")?;
            run(std::process::Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(&dest))?;
        }
        Provider::Claude => {
            run(std::process::Command::new("npm")
                .args(["install", "--silent", "--no-audit", "--no-fund", &format!("@anthropic-ai/claude-code@{version}")])
                .current_dir(&dest))?;
        }
        other => return Err(format!("there is no real {} to fetch", other.as_str())),
    }
    cached_binary(provider, version).ok_or_else(|| format!("fetched {} {version}, but its binary is not where expected", provider.as_str()))
}

/// Claude Code's stream-json, relayed: one outcome per tool call step. What
/// the permission prompt tool decided shows in `tool_result_meta` from
/// 2.1.332 on; before that `prompted` is unknown (null) and not judged.
pub fn derive_claude_outcomes(scenario: &Scenario, transcript: &Path, recordings: &BTreeMap<String, PathBuf>) {
    let wire = read_jsonl(transcript).unwrap_or_default();
    let out: Vec<&Value> = wire.iter().filter(|e| e["dir"] == "s2c").map(|e| &e["msg"]).collect();
    let calls: Vec<(String, Value)> = recordings
        .iter()
        .flat_map(|(server, path)| {
            read_jsonl(path).unwrap_or_default().into_iter().filter(|e| e["event"] == "tools/call").map(move |e| (server.clone(), e))
        })
        .collect();
    let Ok(rec) = fakes::wire::Recorder::open(transcript) else { return };
    for (i, step) in scenario.steps.iter().enumerate() {
        let Step::ToolCall { server, tool, .. } = step else { continue };
        let id = format!("toolu_fake_{i}");
        let user = out.iter().find(|m| {
            m["type"] == "user" && m["message"]["content"].as_array().is_some_and(|c| c.iter().any(|b| b["tool_use_id"] == json!(id)))
        });
        let block = user.and_then(|m| m["message"]["content"].as_array()?.iter().find(|b| b["tool_use_id"] == json!(id)).cloned());
        let meta = user.and_then(|m| m["tool_result_meta"].as_array()?.iter().find(|t| t["id"] == json!(id)).cloned());
        let source = meta.as_ref().and_then(|m| m.pointer("/permission_decision/source").and_then(Value::as_str).map(String::from));
        let prompted = source.as_ref().map(|s| json!(s != "config")).unwrap_or(Value::Null);
        // The prompt tool's verdict, when it was asked: accept -> allow.
        let decision = meta.as_ref().and_then(|m| m.pointer("/permission_decision/decision").and_then(Value::as_str).map(String::from));
        let mut answer = match (prompted.as_bool(), decision.as_deref()) {
            (Some(true), Some("accept")) => json!("allow"),
            (Some(true), Some(_)) => json!("deny"),
            _ => Value::Null,
        };
        let mut prompted = prompted;
        // Before 2.1.332 only a call that did not run is marked: unless the
        // CLI's own denial or removal text shows, the prompt tool refused it.
        let not_run = meta.as_ref().is_some_and(|m| m["non_execution_kind"].is_string());
        if decision.is_none() && not_run {
            let text = block.as_ref().map(|b| b["content"].to_string()).unwrap_or_default();
            let by_cli = text.contains(NOT_GRANTED) || text.contains(NO_SUCH_TOOL);
            prompted = json!(!by_cli);
            answer = if by_cli { Value::Null } else { json!("deny") };
        }
        // The host's own tools run in the driver, not on a recorded server.
        let bridged = scenario.bridge.as_ref().is_some_and(|b| b.server.trim() == server.trim());
        let ran = bridged && block.is_some()
            || calls.iter().any(|(s, e)| s == server.trim() && e["tool"] == json!(tool.trim()) && e["meta"]["claudecode/toolUseId"] == json!(id));
        let failed = block.as_ref().is_some_and(|b| b["is_error"] == json!(true));
        let denied = meta.as_ref().is_some_and(|m| m["non_execution_kind"].is_string());
        let status = match (ran && !denied, failed) {
            (false, _) => "none",
            (true, true) => "failed",
            (true, false) => "completed",
        };
        rec.record(&json!({
            "event": "outcome", "derived": true, "step": i, "server": server.trim(), "tool": tool.trim(), "call_id": id,
            "prompted": prompted, "answer": answer, "persist": Value::Null, "item_status": status,
            "model_saw": block.as_ref().map(|b| b["content"].clone()).unwrap_or(Value::Null),
            "mcp_result": Value::Null,
        }));
    }
}

/// Appends, to a real run's transcript, one outcome record per tool call
/// step, in the fakes' format, from the recorded wire, the model log and
/// the MCP servers' recordings.
pub fn derive_outcomes(scenario: &Scenario, dir: &Path, transcript: &Path) {
    let wire = read_jsonl(transcript).unwrap_or_default();
    let model = read_jsonl(&dir.join("model.jsonl")).unwrap_or_default();
    // What the model got back, by call id.
    let mut outputs: BTreeMap<String, Value> = BTreeMap::new();
    for req in &model {
        for item in req["body"]["input"].as_array().into_iter().flatten() {
            if item["type"] == "function_call_output" {
                outputs.insert(item["call_id"].as_str().unwrap_or("").to_string(), item["output"].clone());
            }
        }
    }
    let rec = fakes::wire::Recorder::open(transcript).ok();
    let mut threads = Vec::new();
    for e in wire.iter().filter(|e| e["dir"] == "c2s") {
        let m = &e["msg"]["method"];
        if m == "thread/start" || m == "thread/resume" {
            threads.push(json!({"event": "thread", "approvalPolicy": e["msg"]["params"]["approvalPolicy"].clone(), "derived": true,
                                PROCESS: process_of(e)}));
        }
    }
    let mut outcomes = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let Step::ToolCall { server, tool, .. } = step else { continue };
        let call_id = format!("call_{i}");
        let (process, prompt, reply, item) = match call_in_wire(&wire, &call_id) {
            Some(c) => (c.process, c.prompt, c.reply, Some(c.item)),
            None => (Value::Null, None, None, None),
        };
        let answer = reply.map(|r| classify_elicitation_reply(&r["msg"]));
        let persist = reply.and_then(|r| r["msg"].pointer("/result/_meta/persist").cloned()).unwrap_or(Value::Null);
        outcomes.push(json!({
            "event": "outcome", "derived": true, "step": i, "server": server.trim(), "tool": tool.trim(), "call_id": call_id,
            "prompted": prompt.is_some(), "answer": answer, "persist": persist,
            "item_status": item.as_ref().map(|it| it["status"].clone()).unwrap_or(Value::Null),
            "model_saw": outputs.get(&call_id).cloned().unwrap_or(Value::Null),
            "mcp_result": item.as_ref().map(|it| it["result"].clone()).unwrap_or(Value::Null),
            PROCESS: process,
        }));
    }
    if let Some(rec) = rec {
        threads.iter().chain(outcomes.iter()).for_each(|e| rec.record(e));
    }
}

/// One MCP tool call as the wire shows it, all in the provider process that
/// ran it: its completed item, the approval prompt sent while it ran, and
/// the client's reply to that prompt.
struct WireCall<'a> {
    process: Value,
    item: Value,
    prompt: Option<&'a Value>,
    reply: Option<&'a Value>,
}

/// Finds call `call_id` in a transcript several provider processes append
/// to. Request ids are per process (a relaunched app-server counts from 0
/// again), so the prompt and its reply are looked up only among the lines
/// of the process whose item it is.
fn call_in_wire<'a>(wire: &'a [Value], call_id: &str) -> Option<WireCall<'a>> {
    let is_item = |e: &Value, method: &str| e["dir"] == "s2c" && e["msg"]["method"] == method && e["msg"]["params"]["item"]["id"] == json!(call_id);
    let completed = wire.iter().position(|e| is_item(e, "item/completed"))?;
    let process = process_of(&wire[completed]);
    let own: Vec<&Value> = wire.iter().filter(|e| process_of(e) == process).collect();
    let completed = own.iter().position(|e| is_item(e, "item/completed"))?;
    let started = own[..completed].iter().rposition(|e| is_item(e, "item/started"));
    // The approval prompt for this call comes between its item's start and end.
    let prompt_at = started.and_then(|s| {
        (s..completed).find(|&k| own[k]["dir"] == "s2c" && own[k]["msg"]["method"] == "mcpServer/elicitation/request")
    });
    let prompt = prompt_at.map(|k| own[k]);
    let reply = prompt_at.and_then(|k| {
        let id = &own[k]["msg"]["id"];
        own[k..].iter().copied().find(|e| e["dir"] == "c2s" && e["msg"]["id"] == *id && e["msg"].get("method").is_none())
    });
    Some(WireCall { item: own[completed]["msg"]["params"]["item"].clone(), process, prompt, reply })
}

fn classify_elicitation_reply(msg: &Value) -> &'static str {
    if msg.get("error").is_some() {
        return "error";
    }
    match msg.pointer("/result/action").and_then(Value::as_str) {
        Some("accept") => "accept",
        Some("decline") => "decline",
        Some("cancel") => "cancel",
        _ => "malformed",
    }
}

#[cfg(test)]
mod tests {
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
        line(pid, "s2c", json!({"id": id, "method": "mcpServer/elicitation/request", "params": {}}))
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
}
