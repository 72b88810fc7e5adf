//! The wire shapes of threads, turns and items, with the fields of the
//! simulated version (measured on the real CLI of each MEASURED version).

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::rollout::{cursor, History};
use crate::codex::profile::Profile;

/// The model every thread reports (the one the harness configures).
pub const MODEL: &str = "mock-model";

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// A thread object; `path` is its rollout file, `originator` the client's
/// `clientInfo.name`.
pub fn thread_object(profile: &Profile, id: &str, cwd: &str, originator: &str, path: &str) -> Value {
    let now = now_ms() / 1000;
    let mut t = json!({
        "id": id, "extra": null, "sessionId": id, "forkedFromId": null, "parentThreadId": null,
        "preview": "", "ephemeral": false, "historyMode": if profile.thread_history_paginated() { "paginated" } else { "legacy" },
        "modelProvider": "mock", "createdAt": now, "updatedAt": now, "recencyAt": now,
        "status": {"type": "idle"}, "path": path, "cwd": cwd, "cliVersion": profile.version.to_string(),
        "source": "vscode", "canAcceptDirectInput": true, "threadSource": null, "agentNickname": null,
        "agentRole": null, "gitInfo": null, "name": null, "turns": [],
    });
    if profile.thread_has_section() {
        t["section"] = Value::Null;
        t["sectionEnteredAt"] = Value::Null;
    } else {
        t["isPinned"] = json!(false);
    }
    if profile.thread_has_project_id() {
        t["projectId"] = Value::Null;
    }
    if profile.thread_names_model() {
        t["model"] = json!(MODEL);
        t["reasoningEffort"] = Value::Null;
    }
    if profile.thread_has_environments() {
        t["environments"] = json!([{"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}]);
        t["originator"] = json!(originator);
        t["daybreakEnabled"] = Value::Null;
    }
    if profile.thread_has_attached_to_thread_id() {
        t["attachedToThreadId"] = Value::Null;
    }
    t
}

/// The result of thread/start and thread/resume.
pub fn thread_opened(profile: &Profile, thread: &Value, cwd: &str, policy: &Value, sandbox: &str) -> Value {
    let mut result = json!({
        "thread": thread, "model": MODEL, "modelProvider": "mock", "serviceTier": null,
        "cwd": cwd, "runtimeWorkspaceRoots": [cwd], "instructionSources": [],
        "approvalPolicy": policy, "approvalsReviewer": "user", "sandbox": sandbox_policy(sandbox),
        "activePermissionProfile": null, "reasoningEffort": null, "multiAgentMode": "explicitRequestOnly",
    });
    if profile.thread_start_lists_disabled_plugins() {
        result["disabledPluginIds"] = json!([]);
    }
    result
}

/// What thread/resume adds to [`thread_opened`]: the thread's past turns,
/// its preview, where paging back starts, and (0.171.0) its collaboration mode.
pub fn thread_resumed(profile: &Profile, mut result: Value, history: &History) -> Value {
    let id = result["thread"]["id"].as_str().unwrap_or("").to_string();
    result["thread"]["preview"] = json!(history.preview);
    result["thread"]["turns"] = json!(history.turns);
    result["initialTurnsPage"] = Value::Null;
    let paged = profile.thread_history_paginated();
    let at = |o: Option<usize>| if paged { o } else { None };
    result["itemsBackwardsCursor"] = cursor(&id, at(history.items_ordinal), "itemsByCreatedAtOrdinal");
    result["turnsBackwardsCursor"] = cursor(&id, at(history.turns_ordinal), "turns");
    if profile.resume_reports_collaboration_mode() {
        result["collaborationMode"] = json!({"mode": "default",
            "settings": {"model": MODEL, "reasoning_effort": null, "developer_instructions": null}});
    }
    result
}

/// The thread's sandbox policy as thread/start reports it.
fn sandbox_policy(mode: &str) -> Value {
    match mode {
        "danger-full-access" => json!({"type": "dangerFullAccess"}),
        "workspace-write" => json!({"type": "workspaceWrite", "networkAccess": false}),
        _ => json!({"type": "readOnly", "networkAccess": false}),
    }
}

/// The params of mcpServer/startupStatus/updated.
pub fn startup_status(profile: &Profile, thread_id: &str, name: &str, status: &str, error: Value) -> Value {
    let mut p = json!({"threadId": thread_id, "name": name, "status": status, "error": error, "failureReason": null});
    if profile.startup_status_has_environment_id() {
        p["environmentId"] = Value::Null;
    }
    p
}

/// A turn object; `times` are startedAt and completedAt (seconds) and durationMs.
pub fn turn_object(profile: &Profile, id: &str, items: Value, status: &str, times: [Value; 3]) -> Value {
    let [started, completed, duration] = times;
    // An interrupted turn's items are not loaded either (measured on a cancelled command).
    let view = if matches!(status, "inProgress" | "interrupted") { "notLoaded" } else { "summary" };
    let mut t = json!({"id": id, "items": items, "itemsView": view, "status": status, "error": null,
                       "startedAt": started, "completedAt": completed, "durationMs": duration});
    if profile.turn_has_root_turn_id() {
        t["rootTurnId"] = json!(id);
    }
    t
}

pub fn agent_message(profile: &Profile, id: String, text: &str) -> Value {
    let mut m = json!({"type": "agentMessage", "id": id, "text": text, "phase": null, "memoryCitation": null});
    if profile.agent_message_has_delivery() {
        m["delivery"] = Value::Null;
    }
    if profile.agent_message_has_questions() {
        m["questions"] = Value::Null;
    }
    if profile.agent_message_has_moderation() {
        m["moderation"] = Value::Null;
    }
    m
}

/// The userMessage item of a turn's input, as sent with turn/start.
pub fn user_message(id: String, input: &Value) -> Value {
    json!({"type": "userMessage", "id": id, "clientId": null, "content": input})
}

/// One mcpToolCall item, at each of its states.
pub struct ToolItem<'a> {
    pub profile: &'a Profile,
    pub call_id: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments: &'a Value,
    /// The tool's `readOnlyHint` annotation, null if it has none.
    pub read_only: Value,
}

impl ToolItem<'_> {
    pub fn at(&self, status: &str, result: Value, error: Value, duration: Value) -> Value {
        let mut it = json!({"type": "mcpToolCall", "id": self.call_id, "server": self.server, "tool": self.tool,
               "status": status, "arguments": self.arguments, "appContext": null, "pluginId": null, "result": result,
               "error": error, "durationMs": duration});
        if self.profile.tool_item_has_read_only_hint() {
            it["readOnlyHint"] = self.read_only.clone();
        }
        if self.profile.tool_item_has_app_ui() {
            it["mcpAppUi"] = Value::Null;
        }
        if self.profile.tool_item_has_environment() {
            it["environmentId"] = Value::Null;
        }
        it
    }
}

/// A tools/call result as an mcpToolCall item shows it: its content,
/// structuredContent and _meta only.
pub fn item_result(r: &Value) -> Value {
    let field = |k: &str| r.get(k).cloned().unwrap_or(Value::Null);
    json!({"content": r.get("content").cloned().unwrap_or(json!([])), "structuredContent": field("structuredContent"), "_meta": field("_meta")})
}

/// The params of item/started; `ctx` holds threadId and turnId.
pub fn item_started(profile: &Profile, ctx: &Value, mut item: Value, started_ms: u64) -> Value {
    if profile.items_have_timestamps() {
        item["startedAtMs"] = json!(started_ms);
        item["completedAtMs"] = Value::Null;
    }
    json!({"item": item, "threadId": ctx["threadId"], "turnId": ctx["turnId"], "startedAtMs": started_ms})
}

/// The params of item/completed; `ctx` holds threadId and turnId.
pub fn item_completed(profile: &Profile, ctx: &Value, mut item: Value, started_ms: u64) -> Value {
    let now = now_ms();
    let mut params = json!({"threadId": ctx["threadId"], "turnId": ctx["turnId"], "completedAtMs": now});
    if profile.items_have_timestamps() {
        item["startedAtMs"] = json!(started_ms);
        item["completedAtMs"] = json!(now);
    }
    if profile.item_completed_has_token_count() {
        params["contentTokenCount"] = Value::Null;
    }
    params["item"] = item;
    params
}

/// What the approval request says of the tool.
pub struct ToolFacts<'a> {
    pub description: Option<&'a str>,
    pub annotations: Option<&'a Value>,
    /// Its approval mode (its own or the server's default) is `prompt`: it
    /// asks every time, so no approval can be remembered (`_meta.persist`
    /// is left out; measured on all five versions and on 0.171.0 for the
    /// server default).
    pub always_prompts: bool,
}

/// The params of an mcpServer/elicitation/request asking to approve a call.
pub fn approval_request(profile: &Profile, ctx: &Value, server: &str, tool: &str, facts: &ToolFacts, arguments: &Value) -> Value {
    let display: Vec<Value> = arguments
        .as_object()
        .map(|o| o.iter().map(|(k, v)| json!({"name": k, "value": v, "display_name": k})).collect())
        .unwrap_or_default();
    let mut meta = json!({
        "codex_approval_kind": "mcp_tool_call",
        "tool_params": arguments,
        "tool_params_display": display,
    });
    if !facts.always_prompts {
        meta["persist"] = json!(["session", "always"]);
    }
    if let Some(d) = facts.description {
        meta["tool_description"] = json!(d);
    }
    if profile.elicitation_has_tool_name() {
        meta["tool_name"] = json!(tool);
    }
    if profile.elicitation_has_tool_annotations() {
        // The hints only, without the display title: a tool annotated with
        // nothing but a title gets `{}` (measured 2026-12-03 on 0.171.0).
        if let Some(a) = facts.annotations.and_then(Value::as_object) {
            let hints: serde_json::Map<String, Value> = a.iter().filter(|(k, _)| *k != "title").map(|(k, v)| (k.clone(), v.clone())).collect();
            meta["tool_annotations"] = Value::Object(hints);
        }
    }
    let mut params = json!({
        "threadId": ctx["threadId"], "turnId": ctx["turnId"], "serverName": server, "mode": "form",
        "_meta": meta,
        "message": format!("Allow the {server} MCP server to run tool \"{tool}\"?"),
        "requestedSchema": {"type": "object", "properties": {}},
    });
    if profile.elicitation_has_environment_id() {
        params["environmentId"] = Value::Null;
    }
    params
}
