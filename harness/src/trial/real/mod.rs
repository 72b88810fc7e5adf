//! Running scenarios on the REAL provider binaries: where they are cached,
//! how they are fetched, which scenarios they can play, and the outcome
//! records derived from a real run so the judge reads it exactly like a
//! fake's transcript.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fakes::claude::profile::{model_tool_name, sanitize_name, NOT_GRANTED, NO_SUCH_TOOL};
use fakes::claude::rules::{parse_prompt_answer, PromptAnswer};
use fakes::claude::can_use_tool;
use fakes::script::RequestKind;
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

/// Claude Code versions published only inside the Agent SDK's platform
/// package (`@anthropic-ai/claude-agent-sdk-linux-x64`), not as
/// `@anthropic-ai/claude-code`: the version and the SDK release bundling it
/// (its package.json `claudeCodeVersion`, measured).
pub const SDK_BUNDLED_CLAUDE: &[(Version, &str)] = &[(Version::new(2, 1, 334), "0.3.334")];

/// Where a fetched version's binary sits inside its cache folder.
fn binary_in(provider: Provider, version: Version) -> Option<&'static str> {
    match provider {
        Provider::Codex => Some("package/vendor/x86_64-unknown-linux-musl/bin/codex"),
        Provider::Claude if SDK_BUNDLED_CLAUDE.iter().any(|(v, _)| *v == version) => Some("package/claude"),
        Provider::Claude => Some("node_modules/@anthropic-ai/claude-code-linux-x64/claude"),
        _ => None,
    }
}

/// The cached real binary for a provider version, if fetched.
pub fn cached_binary(provider: Provider, version: Version) -> Option<PathBuf> {
    let path = cache_dir()?.join(provider.as_str()).join(version.to_string()).join(binary_in(provider, version)?);
    path.is_file().then_some(path)
}

/// Fetches a real binary from the npm registry into the cache (a no-op when
/// it is there already) and returns its path. The package is unpacked in a
/// scratch folder beside the cache's and renamed into place only when its
/// binary is there, so a failed or interrupted fetch leaves nothing behind.
pub fn fetch(provider: Provider, version: Version) -> Result<PathBuf, String> {
    if let Some(bin) = cached_binary(provider, version) {
        return Ok(bin);
    }
    let inside = binary_in(provider, version).ok_or_else(|| format!("there is no real {} to fetch", provider.as_str()))?;
    let cache = cache_dir().ok_or("no cache directory: set HOME or XDG_CACHE_HOME")?;
    let parent = cache.join(provider.as_str());
    let dest = parent.join(version.to_string());
    std::fs::create_dir_all(&parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let scratch = tempfile::Builder::new().prefix(".fetch-").tempdir_in(&parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let run = |cmd: &mut std::process::Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
        }
    };
    let sdk = SDK_BUNDLED_CLAUDE.iter().find(|(v, _)| *v == version).map(|(_, sdk)| *sdk);
    let packed = match (provider, sdk) {
        (Provider::Codex, _) => Some(format!("@openai/codex@{version}-linux-x64")),
        (Provider::Claude, Some(sdk)) => Some(format!("@anthropic-ai/claude-agent-sdk-linux-x64@{sdk}")),
        _ => None,
    };
    let unpacked = scratch.path().join("v");
    std::fs::create_dir(&unpacked).map_err(|e| e.to_string())?;
    match packed {
        Some(spec) => {
            run(std::process::Command::new("npm").args(["pack", "--silent", &spec]).current_dir(scratch.path()))?;
            let tarball = std::fs::read_dir(scratch.path())
                .map_err(|e| e.to_string())?
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "tgz"))
                .ok_or("npm pack wrote no tarball")?;
            run(std::process::Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(&unpacked))?;
        }
        None => run(std::process::Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", &format!("@anthropic-ai/claude-code@{version}")])
            .current_dir(&unpacked))?,
    }
    if !unpacked.join(inside).is_file() {
        return Err(format!("fetched {} {version}, but its binary is not where expected ({inside})", provider.as_str()));
    }
    // A leftover folder without the binary (an older, non-atomic fetch) makes way.
    if dest.exists() {
        std::fs::remove_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    std::fs::rename(&unpacked, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(dest.join(inside))
}

/// Claude Code's stream-json, relayed: one outcome per tool call step.
/// Whether the permission prompt tool was asked, and what it answered, come
/// from the relay's proxy in front of the driver's bridge; a prompt tool the
/// proxy did not see (a stdio one) leaves them to `tool_result_meta`, which
/// shows the decision from 2.1.332 on and before that only calls that did
/// not run, so some stay unknown (null) and are not judged.
pub fn derive_claude_outcomes(scenario: &Scenario, transcript: &Path, recordings: &BTreeMap<String, PathBuf>) {
    let wire = read_jsonl(transcript).unwrap_or_default();
    let out: Vec<&Value> = wire.iter().filter(|e| e["dir"] == "s2c" && e["event"].is_null()).map(|e| &e["msg"]).collect();
    let calls: Vec<(String, Value)> = recordings
        .iter()
        .flat_map(|(server, path)| {
            read_jsonl(path).unwrap_or_default().into_iter().filter(|e| e["event"] == "tools/call").map(move |e| (server.clone(), e))
        })
        .collect();
    let prompts = prompt_answers(&wire);
    let Ok(rec) = fakes::wire::Recorder::open(transcript) else { return };
    for (i, step) in scenario.steps.iter().enumerate() {
        let Step::ToolCall { server, tool, .. } = step else { continue };
        let id = format!("toolu_fake_{i}");
        // A call the model never made (the turn ended first) has no outcome.
        let made = out.iter().any(|m| {
            m["type"] == "assistant" && m["message"]["content"].as_array().is_some_and(|c| c.iter().any(|b| b["type"] == "tool_use" && b["id"] == json!(id)))
        });
        if !made {
            continue;
        }
        let user = out.iter().find(|m| {
            m["type"] == "user" && m["message"]["content"].as_array().is_some_and(|c| c.iter().any(|b| b["tool_use_id"] == json!(id)))
        });
        let block = user.and_then(|m| m["message"]["content"].as_array()?.iter().find(|b| b["tool_use_id"] == json!(id)).cloned());
        let meta = user.and_then(|m| m["tool_result_meta"].as_array()?.iter().find(|t| t["id"] == json!(id)).cloned());
        let (prompted, answer) = match &prompts {
            Some(asked) => (json!(asked.contains_key(&id)), asked.get(&id).cloned().unwrap_or(Value::Null)),
            None => prompt_from_meta(meta.as_ref(), block.as_ref()),
        };
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
        let mcp_result = if bridged { proxied_result(&wire, server.trim(), &id) } else { recorded_result(recordings.get(server.trim()), &id) };
        rec.record(&json!({
            "event": "outcome", "derived": true, "step": i, "server": server.trim(), "tool": tool.trim(), "call_id": id,
            "prompted": prompted, "answer": answer, "persist": Value::Null, "item_status": status,
            "model_saw": block.as_ref().map(|b| b["content"].clone()).unwrap_or(Value::Null),
            "mcp_result": mcp_result.unwrap_or(Value::Null),
        }));
    }
    for outcome in claude_raised_outcomes(scenario, &wire) {
        rec.record(&outcome);
    }
}

/// The outcome of each `request` step a Claude Code server raises itself:
/// the `elicitation` control request the CLI sent the SDK host after the
/// model's call of that tool, and the host's reply to it. Print mode sends
/// none, so no outcome.
fn claude_raised_outcomes(scenario: &Scenario, wire: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let Step::Request { server: Some(server), .. } = step else { continue };
        let Some(call) = crate::scenario::raising_call(&scenario.steps, i) else { continue };
        let id = json!(format!("toolu_fake_{call}"));
        let sent = |e: &&Value| e["dir"] == "s2c" && e["event"].is_null();
        let Some(start) = wire.iter().position(|e| {
            sent(&e) && e["msg"]["type"] == "assistant" && e["msg"]["message"]["content"].as_array().is_some_and(|c| c.iter().any(|b| b["id"] == id))
        }) else {
            continue;
        };
        // While the call runs: before its tool_result.
        let result = |m: &Value| m["type"] == "user" && m["message"]["content"].as_array().is_some_and(|c| c.iter().any(|b| b["tool_use_id"] == id));
        let asked = wire[start..].iter().filter(sent).map(|e| &e["msg"]).take_while(|m| !result(m)).find(|m| {
            m["type"] == "control_request" && m["request"]["subtype"] == "elicitation" && m["request"]["mcp_server_name"] == server.trim()
        });
        let Some(request_id) = asked.map(|m| m["request_id"].clone()) else { continue };
        let reply = wire.iter().find(|e| e["dir"] == "c2s" && e["msg"]["type"] == "control_response" && e["msg"]["response"]["request_id"] == request_id);
        let answer = fakes::claude::elicitation::answer_word(reply.map(|e| &e["msg"]["response"]));
        out.push(json!({"event": "outcome", "derived": true, "step": i, "method": "elicitation", "prompted": true, "answer": answer}));
    }
    out
}

/// What the permission prompt tool answered, by tool use id, for every
/// call the relay's proxy saw; `None` when no launch named a prompt tool on
/// a proxied server (nothing to go by). A launch without a prompt tool asks
/// no one, so an empty map.
fn prompt_answers(wire: &[Value]) -> Option<BTreeMap<String, Value>> {
    let mut tools: BTreeMap<String, Option<String>> = BTreeMap::new();
    for e in wire.iter().filter(|e| e["event"] == "launch") {
        let argv: Vec<&str> = e["argv"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        // Both forms: `--permission-prompt-tool T` and the Agent SDK's `=T`.
        let tool = argv.iter().enumerate().find_map(|(i, a)| match a.strip_prefix("--permission-prompt-tool") {
            Some("") => argv.get(i + 1).map(|t| t.to_string()),
            Some(rest) => rest.strip_prefix('=').map(String::from),
            None => None,
        });
        tools.insert(process_of(e).to_string(), tool);
    }
    // `stdio`: the SDK host is asked with can_use_tool on the relayed wire.
    let stdio: BTreeSet<String> = tools.iter().filter(|(_, t)| t.as_deref() == Some("stdio")).map(|(pid, _)| pid.clone()).collect();
    tools.retain(|pid, _| !stdio.contains(pid));
    let proxied: Vec<&Value> = wire.iter().filter(|e| e["event"] == "proxied").collect();
    // The CLI names the prompt tool as it renames every MCP tool.
    let server_of = |e: &Value| sanitize_name(e["server"].as_str().unwrap_or(""));
    let seen = |pid: &str, tool: &str| proxied.iter().any(|e| process_of(e).to_string() == pid && tool.starts_with(&format!("mcp__{}__", server_of(e))));
    if (tools.is_empty() && stdio.is_empty()) || tools.iter().any(|(pid, t)| t.as_deref().is_some_and(|t| !seen(pid, t))) {
        return None;
    }
    let mut answers = host_answers(wire, &stdio);
    for call in proxied.iter().filter(|e| e["dir"] == "c2s" && e["msg"]["method"] == "tools/call") {
        let pid = process_of(call).to_string();
        let name = model_tool_name(call["server"].as_str().unwrap_or(""), call["msg"]["params"]["name"].as_str().unwrap_or(""));
        if tools.get(&pid).and_then(Option::as_deref) != Some(name.as_str()) {
            continue;
        }
        let Some(use_id) = call["msg"]["params"]["arguments"]["tool_use_id"].as_str() else { continue };
        let answer = reply_to(&proxied, call).and_then(|r| r["msg"].get("result")).map_or(PromptAnswer::Invalid, parse_prompt_answer);
        answers.insert(use_id.to_string(), json!(answer.word()));
    }
    Some(answers)
}

/// What SDK hosts answered the `can_use_tool` requests of the processes in
/// `pids` (launched with `--permission-prompt-tool stdio`), by tool use id.
fn host_answers(wire: &[Value], pids: &BTreeSet<String>) -> BTreeMap<String, Value> {
    let mut answers = BTreeMap::new();
    let mine = |e: &&Value| pids.contains(&process_of(e).to_string());
    for ask in wire.iter().filter(mine).filter(|e| e["dir"] == "s2c" && e["msg"]["type"] == "control_request") {
        let request = &ask["msg"]["request"];
        let Some(use_id) = request["tool_use_id"].as_str().filter(|_| request["subtype"] == "can_use_tool") else { continue };
        let reply = wire.iter().find(|r| {
            r["dir"] == "c2s" && process_of(r) == process_of(ask) && r["msg"]["type"] == "control_response" && r["msg"]["response"]["request_id"] == ask["msg"]["request_id"]
        });
        let answer = can_use_tool::parse_answer(reply.map(|r| &r["msg"]["response"]));
        answers.insert(use_id.to_string(), json!(answer.word()));
    }
    answers
}

/// Without the prompt tool's own calls: `tool_result_meta` (2.1.332 on)
/// says who decided; before that only a call that did not run is marked,
/// and unless the CLI's own denial or removal text shows, the prompt tool
/// refused it.
fn prompt_from_meta(meta: Option<&Value>, block: Option<&Value>) -> (Value, Value) {
    let source = meta.and_then(|m| m.pointer("/permission_decision/source").and_then(Value::as_str));
    let decision = meta.and_then(|m| m.pointer("/permission_decision/decision").and_then(Value::as_str));
    let prompted = source.map(|s| json!(s != "config")).unwrap_or(Value::Null);
    let answer = match (prompted.as_bool(), decision) {
        (Some(true), Some("accept")) => json!("allow"),
        (Some(true), Some(_)) => json!("deny"),
        _ => Value::Null,
    };
    let not_run = meta.is_some_and(|m| m["non_execution_kind"].is_string());
    if decision.is_none() && not_run {
        let text = block.map(|b| b["content"].to_string()).unwrap_or_default();
        let by_cli = text.contains(NOT_GRANTED) || text.contains(NO_SUCH_TOOL);
        return (json!(!by_cli), if by_cli { Value::Null } else { json!("deny") });
    }
    (prompted, answer)
}

/// The result a bridged tool call got from the driver's server, as the
/// relay's proxy saw it.
fn proxied_result(wire: &[Value], server: &str, use_id: &str) -> Option<Value> {
    let proxied: Vec<&Value> = wire.iter().filter(|e| e["event"] == "proxied" && e["server"] == server).collect();
    let call = proxied.iter().find(|e| e["dir"] == "c2s" && e["msg"]["params"]["_meta"]["claudecode/toolUseId"] == use_id)?;
    reply_to(&proxied, call)?["msg"].get("result").cloned()
}

/// The proxied answer to `call`: same process and server, same request id
/// (each process numbers its MCP requests afresh).
fn reply_to<'a>(proxied: &[&'a Value], call: &Value) -> Option<&'a Value> {
    proxied.iter().copied().find(|r| r["dir"] == "s2c" && process_of(r) == process_of(call) && r["server"] == call["server"] && r["msg"]["id"] == call["msg"]["id"])
}

/// The result a fake MCP server sent for a call, from its recording.
fn recorded_result(recording: Option<&PathBuf>, use_id: &str) -> Option<Value> {
    let lines = read_jsonl(recording?).ok()?;
    let at = lines.iter().position(|e| e["dir"] == "in" && e["msg"]["params"]["_meta"]["claudecode/toolUseId"] == use_id)?;
    let request_id = &lines[at]["msg"]["id"];
    lines[at..].iter().find(|e| e["dir"] == "out" && e["msg"]["id"] == *request_id)?["msg"].get("result").cloned()
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
        let Step::ToolCall { server, tool, arguments, .. } = step else { continue };
        let call_id = format!("call_{i}");
        let (process, prompt, reply, item) = match call_in_wire(&wire, &call_id) {
            Some(c) => (c.process, c.prompt, c.reply, Some(c.item)),
            None => match exec_item(&wire, server.trim(), tool.trim(), &crate::scenario::call_arguments(i, arguments.as_ref())) {
                Some((process, item)) => (process, None, None, Some(item)),
                None => (Value::Null, None, None, None),
            },
        };
        // A call neither the CLI nor the model saw was never made (the
        // driver refused to launch, or the turn ended before it).
        if item.is_none() && !outputs.contains_key(&call_id) {
            continue;
        }
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
    outcomes.extend(raised_outcomes(scenario, &wire));
    outcomes.extend(shell_request_outcomes(scenario, &wire, &outputs));
    if let Some(rec) = rec {
        threads.iter().chain(outcomes.iter()).for_each(|e| rec.record(e));
    }
}

/// One MCP tool call as the wire shows it, all in the provider process that
/// ran it: its completed item, the approval prompt sent while it ran, and
/// the client's reply to that prompt; the same for an elicitation its
/// server sent meanwhile.
struct WireCall<'a> {
    process: Value,
    item: Value,
    prompt: Option<&'a Value>,
    reply: Option<&'a Value>,
    elicitation: Option<&'a Value>,
    elicitation_reply: Option<&'a Value>,
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
    // The approval prompt for this call comes between its item's start and
    // end; an elicitation its server sends meanwhile has no approval kind.
    let asked = |approval: bool| {
        let at = started.and_then(|s| {
            (s..completed).find(|&k| own[k]["dir"] == "s2c" && own[k]["msg"]["method"] == "mcpServer/elicitation/request" && is_approval(&own[k]["msg"]) == approval)
        })?;
        let id = &own[at]["msg"]["id"];
        let reply = own[at..].iter().copied().find(|e| e["dir"] == "c2s" && e["msg"]["id"] == *id && e["msg"].get("method").is_none());
        Some((own[at], reply))
    };
    let ((prompt, reply), (elicitation, elicitation_reply)) = (asked(true).unzip(), asked(false).unzip());
    Some(WireCall { item: own[completed]["msg"]["params"]["item"].clone(), process, prompt, reply: reply.flatten(), elicitation, elicitation_reply: elicitation_reply.flatten() })
}

fn is_approval(msg: &Value) -> bool {
    msg["params"]["_meta"]["codex_approval_kind"] == "mcp_tool_call"
}

/// The outcome of each `request` step its server raises itself: the
/// elicitation, not an approval, sent while its turn's call of that tool
/// (the nearest one before it) ran, answered by the client's reply in the
/// same process. A call that never reached the server raised nothing.
fn raised_outcomes(scenario: &Scenario, wire: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let Step::Request { server: Some(server), .. } = step else { continue };
        let Some(call) = crate::scenario::raising_call(&scenario.steps, i) else { continue };
        let Some(c) = call_in_wire(wire, &format!("call_{call}")) else { continue };
        if !c.elicitation.is_some_and(|a| a["msg"]["params"]["serverName"] == server.trim()) {
            continue;
        }
        let answer = c.elicitation_reply.map_or("none", |r| classify_elicitation_reply(&r["msg"]));
        out.push(json!({"event": "outcome", "derived": true, "step": i, "method": "mcpServer/elicitation/request", "prompted": true,
                        "answer": answer, PROCESS: c.process}));
    }
    out
}

/// The outcome of each `command`, `file_change`, `user_input` or
/// `permissions` request step: the approval (or question) Codex asked for
/// the mock model's command, patch, request_user_input or
/// request_permissions `call_<step>`, the client's reply in
/// the same process, the item's end (a question has none) and what the
/// model was told.
fn shell_request_outcomes(scenario: &Scenario, wire: &[Value], outputs: &BTreeMap<String, Value>) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let decision = fakes::codex::decision_answer;
        let (method, judge): (&str, fn(&Value) -> Option<&'static str>) = match step {
            Step::Request { request: RequestKind::Command, raised_by: None, .. } => ("item/commandExecution/requestApproval", decision),
            Step::Request { request: RequestKind::FileChange, raised_by: None, .. } => ("item/fileChange/requestApproval", decision),
            Step::Request { request: RequestKind::UserInput, raised_by: None, .. } => ("item/tool/requestUserInput", fakes::codex::user_input_answer),
            Step::Request { request: RequestKind::Permissions, raised_by: None, .. } => ("item/permissions/requestApproval", fakes::codex::permissions_answer),
            _ => continue,
        };
        let call_id = format!("call_{i}");
        let is_item = |e: &&Value| e["dir"] == "s2c" && e["msg"]["method"] == "item/completed" && e["msg"]["params"]["item"]["id"] == json!(call_id);
        let asked = |e: &&Value| e["dir"] == "s2c" && e["msg"]["method"] == method && e["msg"]["params"]["itemId"] == json!(call_id);
        let ended = wire.iter().find(is_item);
        let ask = wire.iter().find(asked);
        // A command or patch the model never asked for (the turn ended first) has no outcome.
        if ended.is_none() && ask.is_none() && !outputs.contains_key(&call_id) {
            continue;
        }
        let process = ask.or(ended).map_or(Value::Null, process_of);
        let answer = ask.map(|ask| {
            let reply = wire.iter().find(|e| process_of(e) == process && e["dir"] == "c2s" && e["msg"]["id"] == ask["msg"]["id"] && e["msg"].get("method").is_none());
            reply.map_or("none", |r| reply_answer(&r["msg"], judge))
        });
        out.push(json!({"event": "outcome", "derived": true, "step": i, "method": method, "prompted": ask.is_some(),
                        "answer": answer, "item_status": ended.map_or(Value::Null, |e| e["msg"]["params"]["item"]["status"].clone()),
                        "model_saw": outputs.get(&call_id).cloned().unwrap_or(Value::Null), PROCESS: process}));
    }
    out
}

/// A `codex exec` call: its completed `mcp_tool_call` event. exec's item
/// ids do not carry the model's call id, so the call is found by server,
/// tool and the step's own arguments.
fn exec_item(wire: &[Value], server: &str, tool: &str, arguments: &Value) -> Option<(Value, Value)> {
    wire.iter().find_map(|e| {
        let item = &e["msg"]["item"];
        let this = e["dir"] == "s2c" && e["msg"]["type"] == "item.completed" && item["type"] == "mcp_tool_call";
        (this && item["server"] == server && item["tool"] == tool && item["arguments"] == *arguments).then(|| (process_of(e), item.clone()))
    })
}

/// A client's reply to a server request, read as the fake Codex reads it:
/// a JSON-RPC error, what `judge` makes of the result, or malformed.
fn reply_answer(msg: &Value, judge: fn(&Value) -> Option<&'static str>) -> &'static str {
    if msg.get("error").is_some() {
        return "error";
    }
    msg.get("result").and_then(judge).unwrap_or("malformed")
}

fn classify_elicitation_reply(msg: &Value) -> &'static str {
    reply_answer(msg, fakes::codex::elicitation_answer)
}

#[cfg(test)]
mod tests;
