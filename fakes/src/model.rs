//! A mock model API on loopback for running the REAL provider CLIs: OpenAI
//! Responses (SSE) for Codex, Anthropic Messages (SSE) for Claude Code. It
//! plays a script's turns of tool calls, choosing the call ids itself
//! (`call_<step>`, `toolu_fake_<step>`) so recordings can be matched to
//! steps, loading a deferred Claude Code tool with ToolSearch first
//! (`toolu_search_<step>`), and logs every request body (what the model saw).

use std::io;
use std::sync::Mutex;

use loopback_http::{sse, Handler, Request, Response, Server};
use serde_json::{json, Value};

use crate::claude::profile::TOOL_SEARCH;
use crate::codex::profile::model_name;
use crate::script::{Action, RequestKind, Turn};
use crate::wire::Recorder;

pub struct MockModel {
    server: Server,
}

impl MockModel {
    /// Base URL for Codex's `model_providers.<id>.base_url` (`.../v1`).
    pub fn openai_base(&self) -> String {
        self.server.url_for("/v1")
    }

    /// Base URL for ANTHROPIC_BASE_URL.
    pub fn anthropic_base(&self) -> String {
        self.server.url_for("")
    }
}

struct Model {
    turns: Vec<Turn>,
    log: Recorder,
    /// Codex: index of the turn in progress (a request ending in a user
    /// message starts the next one).
    openai_turn: Mutex<Option<usize>>,
}

/// Starts the mock; `turns` are the scenario's turns (only tool calls matter).
pub fn start(turns: Vec<Turn>, log: Recorder) -> io::Result<MockModel> {
    let model = Model { turns, log, openai_turn: Mutex::new(None) };
    Ok(MockModel { server: loopback_http::serve(model)? })
}

impl Handler for Model {
    fn handle(&self, req: &Request) -> Response {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let path = req.path().to_string();
        self.log.record(&json!({"method": req.method, "path": path, "body": body}));
        if req.method == "GET" && path.ends_with("/models") {
            return Response::json(200, &json!({"models": [], "data": []}));
        }
        if req.method != "POST" {
            return Response::empty(404);
        }
        if path.ends_with("/responses") {
            sse(self.openai(&body))
        } else if path.ends_with("/messages/count_tokens") {
            Response::json(200, &json!({"input_tokens": 1}))
        } else if path.ends_with("/messages") {
            sse(self.anthropic(&body))
        } else {
            Response::empty(404)
        }
    }
}

/// A function call the mock model makes: an MCP tool (step, server, tool,
/// arguments), or on Codex the shell command of a `command` request step,
/// the patch of a `file_change` one, whose approval prompt the CLI then
/// sends, the question of a `user_input` one, which it passes on, or the
/// request_permissions call of a `permissions` one, which it asks about.
enum Call {
    Tool(usize, String, String, Value),
    Command(usize),
    Patch(usize),
    UserInput(usize),
    Permissions(usize),
}

fn calls(turn: Option<&Turn>, commands: bool) -> Vec<Call> {
    turn.map(|t| {
        t.actions
            .iter()
            .filter_map(|a| match a {
                Action::ToolCall { step, server, tool, arguments } => Some(Call::Tool(*step, server.clone(), tool.clone(), arguments.clone())),
                Action::Request { step, request: RequestKind::Command, raised_by: None, .. } if commands => Some(Call::Command(*step)),
                Action::Request { step, request: RequestKind::FileChange, raised_by: None, .. } if commands => Some(Call::Patch(*step)),
                Action::Request { step, request: RequestKind::UserInput, raised_by: None, .. } if commands => Some(Call::UserInput(*step)),
                Action::Request { step, request: RequestKind::Permissions, raised_by: None, .. } if commands => Some(Call::Permissions(*step)),
                _ => None,
            })
            .collect()
    })
    .unwrap_or_default()
}

/// The `exec_command` call of a command request (every release 0.146.1..
/// 0.171.0 offers it with these parameters): asking for a run outside the
/// sandbox is what makes Codex ask the client first.
pub fn command_call_arguments() -> Value {
    json!({"cmd": COMMAND, "sandbox_permissions": "require_escalated", "justification": COMMAND_REASON})
}

/// The `exec_command` call of a file_change request: `apply_patch` as a
/// shell command, which Codex takes over as a patch (no release 0.146.1..
/// 0.171.0 offers the mock model an apply_patch tool). The patch adds
/// [`patch_file`]; writing under a read-only sandbox is what makes Codex
/// ask the client first.
pub fn patch_call_arguments(step: usize) -> Value {
    let patch = format!("*** Begin Patch\n*** Add File: {}\n+{PATCH_LINE}\n*** End Patch\n", patch_file(step));
    json!({"cmd": format!("apply_patch <<'EOF'\n{patch}EOF\n")})
}

/// The `request_user_input` call of a user_input request step: one question
/// with two options. Every release 0.146.1..0.171.0 offers the tool; in a
/// Default-mode turn it answers "unavailable" unless config's `[features]
/// default_mode_request_user_input` is on (recordings/labs/codex/<V>/
/// request-kinds.json).
pub fn user_input_call_arguments() -> Value {
    json!({"questions": [{"id": "branch", "header": "Branch", "question": "Which branch?",
        "options": [{"label": "main (Recommended)", "description": "the default"}, {"label": "dev", "description": "the other"}]}]})
}

/// The `request_permissions` call of a permissions request step: network
/// access, with a reason. Codex offers the tool only with config's
/// `[features] request_permissions_tool` on, and then asks the client
/// (recordings/labs/codex/<V>/request-kinds.json permissions_feature).
pub fn permissions_call_arguments() -> Value {
    json!({"reason": PERMISSIONS_REASON, "permissions": {"network": {"enabled": true}}})
}

pub const PERMISSIONS_REASON: &str = "needs network";

/// The file a file_change request step adds (relative to the thread's cwd):
/// one per step, so no patch finds its file already there.
pub fn patch_file(step: usize) -> String {
    format!("step-{step}.txt")
}

/// The one line of the file a patch adds.
pub const PATCH_LINE: &str = "approved";

/// The command a command request step runs once accepted: harmless, and
/// its output known.
pub const COMMAND: &str = "echo approved";
pub const COMMAND_OUTPUT: &str = "approved";
pub const COMMAND_REASON: &str = "print a word";

/// The whole stream in one body: the providers read it as it arrives either way.
fn sse(events: Vec<(String, Value)>) -> Response {
    let body: String = events.iter().map(|(name, data)| sse::event(name, &data.to_string())).collect();
    Response::bytes(200, "text/event-stream", body.into_bytes())
}

impl Model {
    fn openai(&self, body: &Value) -> Vec<(String, Value)> {
        let input = body["input"].as_array().cloned().unwrap_or_default();
        let last_user = input.iter().rposition(|i| i["type"] == "message" && i["role"] == "user");
        let turn = {
            let mut t = self.openai_turn.lock().unwrap_or_else(|e| e.into_inner());
            if last_user.is_some() && last_user == input.len().checked_sub(1) {
                *t = Some(t.map_or(0, |n| n + 1));
            }
            t.unwrap_or(0)
        };
        let done = input[last_user.map_or(0, |i| i + 1)..].iter().filter(|i| i["type"] == "function_call_output").count();
        let calls = calls(self.turns.get(turn), true);
        let id = openai_response_id(turn, done);
        let item = match calls.get(done) {
            Some(Call::Command(step)) => json!({"type": "function_call", "call_id": format!("call_{step}"), "name": "exec_command",
                                                "arguments": command_call_arguments().to_string()}),
            Some(Call::Patch(step)) => json!({"type": "function_call", "call_id": format!("call_{step}"), "name": "exec_command",
                                              "arguments": patch_call_arguments(*step).to_string()}),
            Some(Call::UserInput(step)) => json!({"type": "function_call", "call_id": format!("call_{step}"), "name": "request_user_input",
                                                  "arguments": user_input_call_arguments().to_string()}),
            Some(Call::Permissions(step)) => json!({"type": "function_call", "call_id": format!("call_{step}"), "name": "request_permissions",
                                                    "arguments": permissions_call_arguments().to_string()}),
            Some(Call::Tool(step, server, tool, arguments)) => {
                let (namespace, name) = resolve_openai_tool(&body["tools"], server, tool);
                let mut item = json!({"type": "function_call", "call_id": format!("call_{step}"), "name": name,
                                      "arguments": arguments.to_string()});
                if let Some(ns) = namespace {
                    item["namespace"] = json!(ns);
                }
                item
            }
            None => json!({"type": "message", "role": "assistant", "id": openai_message_id(turn, done),
                           "content": [{"type": "output_text", "text": "Done."}]}),
        };
        let usage = json!({"input_tokens": 0, "input_tokens_details": null, "output_tokens": 0,
                           "output_tokens_details": null, "total_tokens": 0});
        vec![
            ("response.created".into(), json!({"type": "response.created", "response": {"id": id}})),
            ("response.output_item.done".into(), json!({"type": "response.output_item.done", "item": item})),
            ("response.completed".into(), json!({"type": "response.completed", "response": {"id": id, "usage": usage}})),
        ]
    }

    fn anthropic(&self, body: &Value) -> Vec<(String, Value)> {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        // A prompt is a user message without tool results, or one whose tool
        // results carry the next prompt too: after the host interrupts a
        // turn (SDK deny with interrupt), Claude Code puts the refused call's
        // result, "[Request interrupted ...]" and the next prompt in one
        // message (measured 2026-12-06 on 2.1.334). Other text beside tool
        // results ("Tool loaded.") is no prompt.
        let is_prompt = |m: &Value| {
            let blocks = m["content"].as_array().map(Vec::as_slice).unwrap_or_default();
            let interrupted = blocks.iter().position(|b| b["text"].as_str().is_some_and(|t| t.starts_with("[Request interrupted")));
            let prompt_after_interrupt = interrupted.is_some_and(|i| blocks[i + 1..].iter().any(|b| b["type"] == "text"));
            m["role"] == "user" && (!blocks.iter().any(|b| b["type"] == "tool_result") || prompt_after_interrupt)
        };
        let prompts = messages.iter().filter(|m| is_prompt(m)).count();
        let last_prompt = messages.iter().rposition(is_prompt).map_or(0, |i| i + 1);
        let uses: Vec<Value> = messages[last_prompt..]
            .iter()
            .filter(|m| m["role"] == "assistant")
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_use")
            .collect();
        let done = uses.iter().filter(|b| b["name"] != TOOL_SEARCH).count();
        let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        let calls = if has_tools { calls(self.turns.get(prompts.saturating_sub(1)), false) } else { Vec::new() };
        let (block, stop) = match calls.get(done) {
            Some(Call::Tool(step, server, tool, arguments)) => {
                let name = crate::claude::profile::model_tool_name(server, tool);
                let search_id = format!("toolu_search_{step}");
                let searched = uses.iter().any(|b| b["id"] == json!(search_id));
                let block = if !searched && is_deferred(&body["tools"], &name) {
                    json!({"type": "tool_use", "id": search_id, "name": TOOL_SEARCH, "input": {"query": format!("select:{name}")}})
                } else {
                    json!({"type": "tool_use", "id": format!("toolu_fake_{step}"), "name": name, "input": arguments})
                };
                (block, "tool_use")
            }
            // Side requests (titles, probes) and the end of a turn.
            _ => (json!({"type": "text", "text": if has_tools { "Done." } else { "OK" }}), "end_turn"),
        };
        let usage = json!({"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
        let model = body["model"].as_str().unwrap_or("claude-mock");
        let start = match block["type"].as_str() {
            Some("tool_use") => json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            _ => json!({"type": "text", "text": ""}),
        };
        let delta = match block["type"].as_str() {
            Some("tool_use") => json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            _ => json!({"type": "text_delta", "text": block["text"]}),
        };
        vec![
            ("message_start".into(), json!({"type": "message_start", "message": {"id": anthropic_message_id(prompts, uses.len()), "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}})),
            ("content_block_start".into(), json!({"type": "content_block_start", "index": 0, "content_block": start})),
            ("content_block_delta".into(), json!({"type": "content_block_delta", "index": 0, "delta": delta})),
            ("content_block_stop".into(), json!({"type": "content_block_stop", "index": 0})),
            ("message_delta".into(), json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 1}})),
            ("message_stop".into(), json!({"type": "message_stop"})),
        ]
    }
}

/// The id of the response to a turn's request after `done` tool calls.
pub fn openai_response_id(turn: usize, done: usize) -> String {
    format!("resp_{turn}_{done}")
}

/// The id of the message that ends turn `turn` after `done` tool calls (the
/// fake Codex, playing the model itself, names its agent message so too).
pub fn openai_message_id(turn: usize, done: usize) -> String {
    format!("msg_{}", openai_response_id(turn, done))
}

/// The id of the reply to a conversation's `prompts`-th prompt after `uses`
/// tool uses (the fake Claude Code, playing the model itself, names its
/// replies so too).
pub fn anthropic_message_id(prompts: usize, uses: usize) -> String {
    format!("msg_mock_{prompts}_{uses}")
}

/// Claude Code defers a tool when it offers ToolSearch and leaves the tool
/// out of `tools` (named only in a system message): a model must load it
/// with ToolSearch before calling it, as a real one does.
fn is_deferred(tools: &Value, name: &str) -> bool {
    let names: Vec<&str> = tools.as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    names.contains(&TOOL_SEARCH) && !names.contains(&name)
}

/// How Codex exposed `server`'s `tool`: a namespace `mcp__<server>` holding
/// the function, or a flat function, both renamed for the model; unknown
/// tools are called flat anyway (the provider then reports an unsupported
/// call, as it would).
fn resolve_openai_tool(tools: &Value, server: &str, tool: &str) -> (Option<String>, String) {
    let (server, tool) = (&model_name(server), &model_name(tool));
    let flat = [format!("mcp__{server}__{tool}"), format!("{server}__{tool}")];
    let tools = tools.as_array().cloned().unwrap_or_default();
    for t in &tools {
        if t["type"] == "function" && flat.iter().any(|f| t["name"] == json!(f)) {
            return (None, t["name"].as_str().unwrap_or("").to_string());
        }
    }
    for t in &tools {
        let ns = t["name"].as_str().unwrap_or("");
        if t["type"] == "namespace" && ns.trim_end_matches('_') == format!("mcp__{server}") {
            if let Some(sub) = t["tools"].as_array().and_then(|s| s.iter().find(|s| s["name"] == json!(tool))) {
                return (Some(ns.to_string()), sub["name"].as_str().unwrap_or(tool).to_string());
            }
        }
    }
    (None, format!("mcp__{server}__{tool}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_merged_into_an_interrupted_calls_result_starts_the_next_turn() {
        let dir = tempfile::tempdir().unwrap();
        let call = |step| Turn { actions: vec![Action::ToolCall { step, server: "alpha".into(), tool: "read_file".into(), arguments: json!({}) }] };
        let model = Model { turns: vec![call(0), call(2)], log: Recorder::open(&dir.path().join("m.jsonl")).unwrap(), openai_turn: Mutex::new(None) };
        let text = |t: &str| json!({"type": "text", "text": t});
        let result = json!({"type": "tool_result", "tool_use_id": "toolu_fake_0", "content": "refused"});
        let reply = |messages: Value| {
            let events = model.anthropic(&json!({"messages": messages, "tools": [{"name": "mcp__alpha__read_file"}]}));
            (events[0].1["message"]["id"].clone(), events[1].1["content_block"]["id"].clone())
        };
        let first = json!({"role": "user", "content": [text("<system-reminder>x"), text("turn 1")]});
        let used = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_fake_0", "name": "mcp__alpha__read_file"}]});
        let next = json!({"role": "user", "content": [result, text("[Request interrupted by user for tool use]"), text("turn 2")]});
        assert_eq!(reply(json!([first, used, next])), (json!("msg_mock_2_0"), json!("toolu_fake_2")));
        // Text beside a tool result is no prompt otherwise: the turn goes on.
        let loaded = json!({"role": "user", "content": [result, text("Tool loaded.")]});
        assert_eq!(reply(json!([first, used, loaded])).0, json!("msg_mock_1_1"));
    }

    #[test]
    fn codex_tools_are_found_under_their_renamed_names() {
        let tools = json!([{"type": "namespace", "name": "mcp__my_srv", "tools": [{"type": "function", "name": "notes_append"}]}]);
        assert_eq!(resolve_openai_tool(&tools, "my-srv", "notes.append"), (Some("mcp__my_srv".to_string()), "notes_append".to_string()));
        let flat = json!([{"type": "function", "name": "mcp__notes__notes_append"}]);
        assert_eq!(resolve_openai_tool(&flat, "notes", "notes.append"), (None, "mcp__notes__notes_append".to_string()));
    }

    #[test]
    fn a_tool_is_deferred_when_only_tool_search_can_load_it() {
        let deferred = json!([{"name": "ToolSearch"}, {"name": "DeferredToolPlaceholder", "defer_loading": true}]);
        assert!(is_deferred(&deferred, "mcp__s__t"));
        let loaded = json!([{"name": "ToolSearch"}, {"name": "mcp__s__t", "defer_loading": true}]);
        assert!(!is_deferred(&loaded, "mcp__s__t"));
        assert!(!is_deferred(&json!([{"name": "Read"}]), "mcp__s__t"), "inlined tools: no ToolSearch to call");
    }
}
