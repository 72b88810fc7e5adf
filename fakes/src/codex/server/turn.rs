//! One turn of the scripted model: its actions in order, each MCP tool call
//! through Codex's approval decision, and what the model sees of it.

use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};

use super::call_meta::CallMeta;
use super::channel::{classify_elicitation, classify_raw, recorded, Channel, Reply};
use super::notices::{self, random_uuid};
use super::shapes::{self, now_ms, ToolFacts, ToolItem};
use super::thread::{State, Thread};
use crate::codex::approval::{self, Decision};
use crate::codex::config::ApprovalMode;
use crate::codex::profile::{self, Profile};
use crate::model::openai_message_id;
use crate::script::{Action, RequestKind, Script};
use crate::wire::Recorder;

/// What a turn works with, borrowed from the app-server for its length.
pub struct Turn<'a> {
    pub profile: Profile,
    pub script: &'a Script,
    /// CODEX_HOME, where an `always` approval is written.
    pub home: &'a Path,
    pub rec: &'a Recorder,
    pub channel: &'a mut Channel,
    pub thread: &'a mut Thread,
    /// What this turn's tools/call `_meta` says; set when the turn starts.
    pub call_meta: CallMeta,
    /// The client opted into experimental notifications.
    pub experimental_api: bool,
    /// This turn's elicitations its MCP servers send themselves: (step of
    /// the call that raises it, its request step).
    pub raised: Vec<(usize, usize)>,
    /// Files this turn's accepted patches added (`patch.rs`), in order.
    pub patched: Vec<String>,
}

/// How a command request ended for the turn (`command.rs`).
pub(crate) enum Ended {
    /// The model got the output (or the refusal) and the turn goes on.
    Answered,
    /// The client cancelled: the turn is interrupted.
    Cancelled,
}

pub(crate) enum Outcome {
    Completed(Value),
    Failed(String),
}

impl Turn<'_> {
    /// Answers turn/start `id`, then plays the script's next turn.
    pub fn play(mut self, id: &Value, params: &Value) {
        let thread_id = self.thread.id.clone();
        let mut state: State = self.script.load_state();
        let index = state.next_turn;
        state.next_turn += 1;
        let (shown, kept): (Vec<_>, Vec<_>) = state.aborted.drain(..).partition(|(t, _)| *t == thread_id);
        state.aborted = kept;
        self.script.save_state(&state);
        // Real Codex puts a cancelled command's or patch's output in the
        // thread's history as "aborted by user": the model sees it when next asked.
        for (_, step) in shown {
            self.rec.record(&json!({"event": "model_saw", "step": step, "model_saw": self.profile.aborted_by_user()}));
        }
        let turn_id = format!("turn-{index}");
        let first_unread = self.thread.first_turn.get_or_insert_with(|| turn_id.clone()).clone();
        self.rec.record(&json!({"event": "turn", "index": index, "turn_id": turn_id, "input": params.get("input")}));
        let pending = shapes::turn_object(&self.profile, &turn_id, json!([]), "inProgress", [Value::Null, Value::Null, Value::Null]);
        self.channel.respond(id, Ok(json!({"turn": pending})));
        // The mock model has no metadata in Codex's catalog.
        self.channel.notify("warning", json!({"threadId": thread_id, "message": profile::no_model_metadata(shapes::MODEL)}));
        let ctx = json!({"threadId": thread_id, "turnId": turn_id});
        self.call_meta = CallMeta::new(&thread_id, &turn_id, &self.thread.sandbox, now_ms());
        let started = Instant::now();
        let started_at = json!(now_ms() / 1000);
        self.channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": []}}));
        let running = shapes::turn_object(&self.profile, &turn_id, json!([]), "inProgress", [started_at.clone(), Value::Null, Value::Null]);
        self.channel.notify("turn/started", json!({"threadId": thread_id, "turn": running}));
        self.begin_rollout(&running, params);
        let input = params.get("input").cloned().unwrap_or(json!([]));
        let user = shapes::user_message(random_uuid(), &input);
        let user_started = now_ms();
        self.item_started(&ctx, user.clone(), user_started);
        self.item_completed(&ctx, user, user_started);
        let actions = self.script.turns.get(index).map(|t| t.actions.clone()).unwrap_or_default();
        // The model answers each tool call's output with one more response.
        let calls = actions
            .iter()
            .filter(|a| matches!(a, Action::ToolCall { .. } | Action::Request { request: RequestKind::Command | RequestKind::FileChange | RequestKind::UserInput | RequestKind::Permissions, raised_by: None, .. }))
            .count();
        self.raised = crate::script::raised_elicitations(&actions);
        for action in actions {
            if self.channel.closed() {
                return;
            }
            match action {
                Action::ToolCall { step, server, tool, arguments } => self.tool_call(&ctx, step, &server, &tool, &arguments),
                // The model's own command or patch: a cancelled prompt ends the turn.
                Action::Request { step, request: request @ (RequestKind::Command | RequestKind::FileChange), raised_by: None, .. } => {
                    let ended = match request {
                        RequestKind::Command => self.command_request(&ctx, step),
                        _ => self.patch_request(&ctx, step),
                    };
                    if let Ended::Cancelled = ended {
                        let times = [started_at, json!(now_ms() / 1000), json!(started.elapsed().as_millis() as u64)];
                        return self.interrupted(&ctx, times);
                    }
                }
                Action::Request { step, request: RequestKind::UserInput, raised_by: None, .. } => self.user_input_request(&ctx, step),
                Action::Request { step, request: RequestKind::Permissions, raised_by: None, .. } => self.permissions_request(&ctx, step),
                // A server's own elicitation comes from its tool's call.
                Action::Request { raised_by: Some(_), .. } => {}
                Action::Request { step, request, server, raised_by: None } => self.provider_request(&ctx, step, request, server.as_deref()),
                Action::Raw { step, method, params } => {
                    let reply = self.channel.ask_marked(&thread_id, &method, params, true);
                    self.record_answer(step, &method, &reply, classify_raw(&reply));
                }
            }
        }
        let msg = shapes::agent_message(&self.profile, openai_message_id(index, calls), "Done.");
        let msg_started = now_ms();
        self.item_started(&ctx, msg.clone(), msg_started);
        let msg = self.item_completed(&ctx, msg, msg_started);
        self.model_item(json!({"type": "message", "role": "assistant"}));
        self.response_done(&ctx, true);
        if self.experimental_api && self.profile.reports_read_state() {
            let state = json!({"firstUnread": {"type": "turn", "turnId": first_unread}, "revision": random_uuid()});
            self.channel.notify("thread/readState/changed", json!({"threadId": thread_id, "readState": state}));
        }
        self.channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "idle"}}));
        let times = [started_at, json!(now_ms() / 1000), json!(started.elapsed().as_millis() as u64)];
        let done = shapes::turn_object(&self.profile, &turn_id, json!([msg]), "completed", times);
        self.thread.rollout.event("task_complete", json!({"turn": done}));
        self.channel.notify("turn/completed", json!({"threadId": thread_id, "turn": done}));
    }

    /// Ends the turn cut short by the client: no agent message, no model
    /// response, the turn `interrupted` with its items not loaded.
    fn interrupted(&mut self, ctx: &Value, times: [Value; 3]) {
        let thread_id = self.thread.id.clone();
        self.channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "idle"}}));
        let done = shapes::turn_object(&self.profile, ctx["turnId"].as_str().unwrap_or(""), json!([]), "interrupted", times);
        // Real Codex notes the interruption for the model as a user message.
        self.thread.rollout.write("response_item", json!({"type": "message", "role": "user"}));
        self.thread.rollout.event("turn_aborted", json!({"turn": done}));
        self.channel.notify("turn/completed", json!({"threadId": thread_id, "turn": done}));
    }

    /// Starts the turn's part of the rollout: the file's header and the
    /// model's initial context at the thread's first turn, then the turn's
    /// context and the user's input.
    fn begin_rollout(&mut self, turn: &Value, params: &Value) {
        let r = &self.thread.rollout;
        let first = !r.exists();
        if first {
            r.write("session_meta", json!({"id": self.thread.id, "cli_version": self.profile.version.to_string()}));
        }
        r.event("task_started", json!({"turn": turn}));
        if first {
            r.write("response_item", json!({"type": "message", "role": "developer"}));
            r.write("response_item", json!({"type": "message", "role": "user"}));
            r.write("world_state", json!({"full": true}));
        }
        r.write("turn_context", json!({"approval_policy": self.thread.approval_policy, "sandbox": self.thread.sandbox}));
        if first && self.profile.rollout_records_thread_settings() {
            r.event("thread_settings_applied", json!({}));
        }
        r.write("response_item", json!({"type": "message", "role": "user", "content": params.get("input")}));
    }

    /// The item a model response ends with (a call or the final message).
    /// Codex records the response's usage right after it, before running
    /// any call (measured on 0.153.0, where it starts recording it).
    pub(super) fn model_item(&self, item: Value) {
        self.thread.rollout.write("response_item", item);
        if self.profile.rollout_records_token_usage() {
            self.thread.rollout.write("token_usage_record", json!({}));
        }
    }

    /// What follows each model response once its calls are answered: its
    /// token count and the account's rate limits.
    pub(super) fn model_responded(&mut self, ctx: &Value) {
        let (thread_id, turn_id) = (ctx["threadId"].as_str().unwrap_or(""), ctx["turnId"].as_str().unwrap_or(""));
        self.thread.rollout.event("token_count", json!({}));
        self.channel.notify("thread/tokenUsage/updated", notices::token_usage(thread_id, turn_id));
        self.channel.notify("account/rateLimits/updated", notices::rate_limits(&self.profile));
    }

    pub(super) fn item_started(&mut self, ctx: &Value, item: Value, started_ms: u64) {
        let params = shapes::item_started(&self.profile, ctx, item, started_ms);
        self.channel.notify("item/started", params);
    }

    /// Sends item/completed; returns the item as sent.
    pub(super) fn item_completed(&mut self, ctx: &Value, item: Value, started_ms: u64) -> Value {
        let params = shapes::item_completed(&self.profile, ctx, item, started_ms);
        let item = params["item"].clone();
        // A command is kept in the rollout only once it ran (measured on
        // 0.151.0: a declined or cancelled one leaves no item line; one whose
        // approval failed is no history either, recordings/labs/codex/<V>/
        // request-kinds.json command_error_resumed).
        if item["type"] != "commandExecution" || item["status"] == "completed" {
            self.thread.rollout.event("item_completed", json!({"item": item}));
        }
        self.channel.notify("item/completed", params);
        item
    }

    fn record_answer(&self, step: usize, method: &str, reply: &Option<Reply>, answer: &str) {
        self.rec.record(&json!({"event": "outcome", "step": step, "method": method, "prompted": true, "answer": answer, "reply": recorded(reply)}));
    }

    fn provider_request(&mut self, ctx: &Value, step: usize, kind: RequestKind, server: Option<&str>) {
        let mut params = ctx.clone();
        let extra = match kind {
            // Played as the model's own calls (command.rs, patch.rs, user_input.rs, permissions.rs).
            RequestKind::Command | RequestKind::FileChange | RequestKind::UserInput | RequestKind::Permissions => return,
            RequestKind::UrlElicitation => json!({"serverName": server.unwrap_or(""), "mode": "url", "elicitationId": format!("el-{step}"), "url": "https://example.invalid/consent", "message": "Open this page to sign in", "_meta": null}),
            RequestKind::FormElicitation => json!({"serverName": server.unwrap_or(""), "mode": "form", "message": "Please enter your API key", "requestedSchema": {"type": "object", "properties": {"api_key": {"type": "string"}}}, "_meta": null}),
        };
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        let method = "mcpServer/elicitation/request";
        self.call_meta.asked_user();
        let reply = self.channel.ask(&self.thread.id, method, params);
        self.record_answer(step, method, &reply, classify_elicitation(&reply));
    }

    fn tool_call(&mut self, ctx: &Value, step: usize, server: &str, tool: &str, arguments: &Value) {
        let call_id = format!("call_{step}");
        let thread_id = ctx["threadId"].clone();
        // The model only sees tools of servers that started; anything else is
        // an unsupported call that never becomes an MCP item.
        let known = match self.thread.servers.get(server) {
            Some(Ok(conn)) => conn.tool(tool).map(|t| (t.annotations.clone(), t.description.clone())),
            _ => None,
        };
        self.model_item(json!({"type": "function_call", "call_id": call_id, "name": tool}));
        let Some((annotations, description)) = known else {
            let text = profile::unsupported_call(server, tool);
            self.rec.record(&json!({"event": "outcome", "step": step, "prompted": false, "item_status": null, "model_saw": text, "server": server, "tool": tool}));
            self.call_answered(ctx, &call_id);
            return;
        };
        let read_only = annotations.as_ref().and_then(|a| a.get("readOnlyHint")).cloned().unwrap_or(Value::Null);
        let profile = self.profile;
        let item = ToolItem { profile: &profile, call_id: &call_id, server, tool, arguments, read_only };
        let started = Instant::now();
        let started_ms = now_ms();
        self.item_started(ctx, item.at("inProgress", Value::Null, Value::Null, Value::Null), started_ms);
        let thread = &*self.thread;
        let mode = thread.settings.mcp_servers.get(server).map(|s| s.mode_for(tool)).unwrap_or(ApprovalMode::Auto);
        let session_ok = thread.approved_for_session.contains(&(server.to_string(), tool.to_string()));
        let decision = approval::decide(&self.profile, &thread.approval_policy, &thread.sandbox, mode, annotations.as_ref(), session_ok);
        let mut prompted = false;
        let mut answer = Value::Null;
        let mut persist = Value::Null;
        // `mcp_result`: what the provider got from the server, before any rendering.
        let (outcome, mcp_result) = match decision {
            Decision::DenyNever => (Outcome::Failed(profile::NEVER_DENIAL.into()), Value::Null),
            Decision::Run => self.run_tool(ctx, step, server, tool, arguments),
            Decision::Prompt => {
                prompted = true;
                self.call_meta.asked_user();
                self.channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": ["waitingOnApproval"]}}));
                let facts = ToolFacts { description: description.as_deref(), annotations: annotations.as_ref(), always_prompts: mode == ApprovalMode::Prompt };
                let params = shapes::approval_request(&self.profile, ctx, server, tool, &facts, arguments);
                let reply = self.channel.ask(&self.thread.id, "mcpServer/elicitation/request", params);
                self.channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": []}}));
                answer = json!(classify_elicitation(&reply));
                persist = reply.as_ref().and_then(|r| r.result.as_ref()).and_then(|r| r.pointer("/_meta/persist")).cloned().unwrap_or(Value::Null);
                match answer.as_str() {
                    Some("accept") => {
                        // Persistence not offered is not honoured either.
                        if !facts.always_prompts {
                            self.thread.remember_approval(server, tool, &persist, self.home, self.rec);
                        }
                        self.run_tool(ctx, step, server, tool, arguments)
                    }
                    Some("cancel") => (Outcome::Failed(profile::CANCELLED.into()), Value::Null),
                    _ => (Outcome::Failed(profile::REJECTED.into()), Value::Null),
                }
            }
        };
        let (status, result, error) = match &outcome {
            Outcome::Completed(r) => ("completed", shapes::item_result(r), Value::Null),
            Outcome::Failed(e) => ("failed", Value::Null, json!({"message": e})),
        };
        let duration = json!(started.elapsed().as_millis() as u64);
        self.item_completed(ctx, item.at(status, result, error, duration), started_ms);
        let model_saw = model_output(&self.profile, &outcome);
        self.rec.record(&json!({
            "event": "outcome", "step": step, "server": server, "tool": tool, "call_id": call_id,
            "decision": format!("{decision:?}"), "prompted": prompted, "answer": answer, "persist": persist,
            "item_status": status, "model_saw": model_saw, "mcp_result": mcp_result,
        }));
        self.call_answered(ctx, &call_id);
    }

    /// The call's output goes back to the model, which responds.
    pub(super) fn call_answered(&mut self, ctx: &Value, call_id: &str) {
        self.thread.rollout.write("response_item", json!({"type": "function_call_output", "call_id": call_id}));
        self.response_done(ctx, false);
    }

    /// A model response the turn goes on from (`last`: the turn's final
    /// one): its usage, then the turn's diff once a patch was applied.
    fn response_done(&mut self, ctx: &Value, last: bool) {
        self.model_responded(ctx);
        if !self.patched.is_empty() && (last || self.profile.turn_diff_after_each_response()) {
            self.turn_diff(ctx);
        }
    }

    /// The call's outcome, and the server's result as the provider got it
    /// (null when there was none).
    fn run_tool(&mut self, ctx: &Value, step: usize, server: &str, tool: &str, arguments: &Value) -> (Outcome, Value) {
        let meta = self.call_meta.for_call(&self.profile, &format!("call_{step}"));
        let raised = self.raised.iter().find(|(call, _)| *call == step).map(|(_, request)| *request);
        let policy = self.thread.approval_policy.clone();
        let (profile, rec, thread_id) = (self.profile, self.rec, self.thread.id.clone());
        let channel = &mut *self.channel;
        let Some(Ok(conn)) = self.thread.servers.get_mut(server) else {
            return (Outcome::Failed(profile::unknown_server(server)), Value::Null);
        };
        // The server's own elicitation (measured 2026-12-06 on 0.146.1..0.171.0):
        // declined in the CLI under `never` (or granular without
        // mcp_elicitations), else forwarded to the client like an approval
        // prompt but with the server's `_meta`, its answer passed back.
        let mut elicitation = |method: &str, params: &Value| -> Value {
            if method != "elicitation/create" {
                return json!({});
            }
            let refused = policy.as_str() == Some("never") || policy.pointer("/granular/mcp_elicitations") == Some(&json!(false));
            if refused {
                return json!({"action": "decline"});
            }
            let mut ask = json!({"threadId": ctx["threadId"], "turnId": ctx["turnId"], "serverName": server, "mode": "form",
                                 "_meta": params.get("_meta").cloned().unwrap_or(Value::Null), "message": params["message"]});
            if params["mode"] == "url" {
                ask["mode"] = json!("url");
                ask["url"] = params["url"].clone();
                ask["elicitationId"] = params["elicitationId"].clone();
            } else {
                ask["requestedSchema"] = params["requestedSchema"].clone();
            }
            if profile.elicitation_has_environment_id() {
                ask["environmentId"] = Value::Null;
            }
            // Unlike an approval, later calls' _meta does not say the user was asked.
            channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": ["waitingOnApproval"]}}));
            let reply = channel.ask(&thread_id, "mcpServer/elicitation/request", ask);
            channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": []}}));
            let answer = classify_elicitation(&reply);
            if let Some(step) = raised {
                let raw = recorded(&reply);
                rec.record(&json!({"event": "outcome", "step": step, "method": "mcpServer/elicitation/request", "prompted": true, "answer": answer, "reply": raw}));
            }
            passed_back(answer, reply.as_ref().and_then(|r| r.result.as_ref()))
        };
        match conn.call_answering(tool, arguments, meta, Some(&mut elicitation)) {
            Ok(result) if self.profile.float_priority_breaks() && has_float_priority(&result) => {
                (Outcome::Failed(profile::unexpected_response_type(server, tool)), result)
            }
            Ok(result) => (Outcome::Completed(result.clone()), result),
            Err(e) => (Outcome::Failed(profile::tool_call_error(&e)), Value::Null),
        }
    }
}

/// What the server gets for the client's answer to its elicitation: accept
/// with the content (`{}` if none) and any `_meta`; decline without content;
/// cancel; and decline for an error or anything else.
fn passed_back(answer: &str, result: Option<&Value>) -> Value {
    match (answer, result) {
        ("accept", Some(r)) => {
            let mut back = json!({"action": "accept", "content": r.get("content").cloned().unwrap_or(json!({}))});
            if let Some(meta) = r.get("_meta") {
                back["_meta"] = meta.clone();
            }
            back
        }
        ("cancel", _) => json!({"action": "cancel"}),
        _ => json!({"action": "decline"}),
    }
}

/// What the model receives as the function call output.
pub(crate) fn model_output(profile: &Profile, outcome: &Outcome) -> Value {
    let header = profile::OUTPUT_HEADER;
    let (text_parts, raw_blocks): (Vec<String>, Value) = match outcome {
        // Failures reach the model as a text block too (up to 0.150.x
        // that block is shown as JSON, as a result would be).
        Outcome::Failed(e) => (vec![e.clone()], json!([{"type": "text", "text": e}])),
        Outcome::Completed(r) => {
            let blocks = r.get("content").cloned().unwrap_or(json!([]));
            let texts = blocks
                .as_array()
                .map(|a| a.iter().map(|b| b.get("text").and_then(Value::as_str).map(String::from).unwrap_or_else(|| b.to_string())).collect())
                .unwrap_or_default();
            (texts, blocks)
        }
    };
    if profile.output_as_input_text_array() {
        let mut parts = vec![json!({"type": "input_text", "text": header})];
        parts.extend(text_parts.into_iter().map(|t| json!({"type": "input_text", "text": t})));
        Value::Array(parts)
    } else {
        let body = match raw_blocks {
            Value::String(s) => s,
            Value::Array(blocks) => format!("[{}]", blocks.iter().map(block_json).collect::<Vec<_>>().join(",")),
            other => other.to_string(),
        };
        json!(format!("{header}\n{body}"))
    }
}

/// A content block as the real CLI serializes it: Rust field order, `type`
/// first, not serde_json's sorted keys.
fn block_json(block: &Value) -> String {
    const ORDER: [&str; 10] = ["type", "text", "data", "mimeType", "uri", "name", "description", "resource", "annotations", "_meta"];
    let Some(map) = block.as_object() else { return block.to_string() };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by_key(|k| (ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()), k.as_str()));
    let fields: Vec<String> = keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), map[*k])).collect();
    format!("{{{}}}", fields.join(","))
}

fn has_float_priority(result: &Value) -> bool {
    result.get("content").and_then(Value::as_array).is_some_and(|blocks| {
        blocks.iter().any(|b| b.pointer("/annotations/priority").is_some_and(|p| p.is_f64()))
    })
}
