//! A tool call's exchanges with the SDK host: its PreToolUse hook
//! callbacks, the `can_use_tool` prompt, an interrupt while either waits,
//! and the ends of a turn they cause. Measured on 2.1.332 and 2.1.334 by
//! writing stream-json lines to the real binaries (2026-12-03).

use serde_json::{json, Value};

use super::can_use_tool::{self, Why};
use super::elicitation;
use super::hooks::{self, CallPlace, Combined, HookAnswer};
use super::host::Stop;
use super::profile;
use super::render::Rendered;
use super::session::{CallOutcome, HookVerdict, Session};
use super::stream;
use super::uuid::new_uuid;
use crate::mcp_client::CallFailure;

impl Session {
    fn server_source(&self, server: &str) -> &'static str {
        self.servers.iter().find(|s| s.config.name == server).map_or("dynamic", |s| s.config.source)
    }

    /// Sends the hook callbacks matching the call, all at once, after the
    /// assistant's tool_use and before any can_use_tool, and reads their
    /// answers together.
    pub(super) fn run_hooks(&mut self, server: &str, name: &str, id: &str, arguments: &Value) -> HookVerdict {
        let Some(host) = self.host.clone() else { return HookVerdict::NoOpinion };
        let callbacks = self.hooks.callbacks_for(name);
        if callbacks.is_empty() {
            return HookVerdict::NoOpinion;
        }
        let transcript_path = self.project_dir.join(format!("{}.jsonl", self.session_id)).display().to_string();
        let cwd = self.cwd.display().to_string();
        let place = CallPlace { session_id: &self.session_id, transcript_path: &transcript_path, cwd: &cwd, prompt_id: &self.prompt_id, permission_mode: &self.mode };
        let source = self.server_source(server);
        let requests = callbacks.iter().map(|cb| hooks::hook_callback(cb, &place, name, arguments, id, server, source)).collect();
        let replies = match host.ask_all(&mut self.out, requests, self.profile.flushes_control_requests()) {
            Ok(replies) => replies,
            Err(Stop::Interrupted) => return HookVerdict::Settled(Box::new(self.interrupted_call(id, false))),
            // The host is gone: the call goes on to the rules, whose wait
            // ends at once.
            Err(Stop::Ended(_)) => return HookVerdict::NoOpinion,
        };
        let mut answers = Vec::new();
        for (i, reply) in &replies {
            self.rec.record(&json!({"event": "hook_callback", "tool_use_id": id, "callback_id": callbacks[*i], "reply": reply}));
            let answer = hooks::parse_answer(reply);
            if answer == HookAnswer::Failed {
                self.hook_failed_warning(&callbacks[*i]);
            }
            self.hook_stopped |= hooks::stops_turn(reply);
            answers.push(answer);
        }
        match hooks::combine(&answers) {
            Combined::NoOpinion => HookVerdict::NoOpinion,
            Combined::Allow { updated_input } => HookVerdict::Allow { updated_input },
            Combined::Ask { reason, asks } => HookVerdict::Ask { reason, asks },
            Combined::Deny { reason } => {
                let text = profile::hook_denial(name, reason.as_deref());
                let mut o = CallOutcome::refused("denied", Rendered::error(text));
                let mut meta = json!({"id": id, "non_execution_kind": "permission-rule"});
                if self.profile.names_refusers() {
                    meta["refused_by"] = json!("hook");
                }
                meta["permission_decision"] = json!({"decision": "reject", "source": "hook", "reason_type": "hook"});
                o.meta = Some(meta);
                HookVerdict::Settled(Box::new(o))
            }
            Combined::WrongEvent => {
                // Measured: no tool_result_meta, not a permission denial.
                let mut o = CallOutcome::refused("denied", Rendered::error(profile::HOOK_UNEXPECTED_ERROR));
                o.denial = false;
                HookVerdict::Settled(Box::new(o))
            }
        }
    }

    /// The warning for a callback the host answered with an error or an
    /// answer the CLI cannot read; the answer then counts as empty.
    fn hook_failed_warning(&mut self, callback_id: &str) {
        let mut event = json!({
            "type": "system", "subtype": "informational", "content": profile::hook_callback_failed(callback_id),
            "level": "warning", "tag": "hook_callback_failed", "uuid": new_uuid(), "session_id": self.session_id,
        });
        if self.profile.stamps_sdk_events() {
            event["written_at"] = json!(stream::timestamp());
        }
        self.out.event(event);
    }

    /// A gated call put to the SDK host as a `can_use_tool` control request.
    pub(super) fn ask_host(&mut self, server: &str, tool: &str, name: &str, id: &str, arguments: &Value, why: Why) -> CallOutcome {
        let request = can_use_tool::can_use_tool(server, self.server_source(server), tool, name, id, arguments, &why);
        self.session_state("requires_action");
        let reply = match self.host.clone() {
            Some(host) => host.ask(&mut self.out, request, false),
            None => Err(Stop::Ended(super::host::Incoming::Eof)),
        };
        self.session_state("running");
        let reply = match reply {
            Err(Stop::Interrupted) => return self.interrupted_call(id, true),
            Err(Stop::Ended(_)) => None,
            Ok(r) => Some(r),
        };
        let answer = can_use_tool::parse_answer(reply.as_ref());
        self.rec.record(&json!({"event": "permission_prompt", "tool_use_id": id, "prompt_tool": "stdio", "reply": reply}));
        let invalid = match reply.as_ref().and_then(can_use_tool::failed_request_text) {
            Some(text) => Rendered::error(text),
            None => Rendered::error(self.profile.invalid_prompt_answer_text()),
        };
        self.settle(answer, invalid, server, tool, id, arguments)
    }

    /// A call whose hook callbacks or can_use_tool the host interrupted:
    /// refused with the standard STOP text, and the turn ends. Only a
    /// cancelled can_use_tool is listed in permission_denials (measured).
    fn interrupted_call(&mut self, id: &str, prompted: bool) -> CallOutcome {
        self.rec.record(&json!({"event": "interrupted", "tool_use_id": id, "while": if prompted { "can_use_tool" } else { "hook_callback" }}));
        let rendered = Rendered { content: json!(profile::REJECTED_STOP), is_error: true, tool_use_result: json!(profile::USER_REJECTED) };
        let mut o = CallOutcome::refused("prompt", rendered);
        o.prompted = prompted;
        o.answer = json!("interrupt");
        o.denial = prompted;
        o.meta = Some(json!({"id": id, "non_execution_kind": "user-rejected"}));
        self.interrupted = true;
        o
    }

    /// A session state change, told only to an SDK host that reads them
    /// (CLAUDE_CODE_SDK_READS_SESSION_STATE non-empty, as both SDKs set it;
    /// read in 2.1.332's source, seen on its wire).
    pub fn session_state(&mut self, state: &str) {
        if let Some(event) = self.session_states()(state) {
            self.out.event(event);
        }
    }

    /// Makes the event [`Session::session_state`] sends for a state, None
    /// when the host reads none; for code that holds `out` itself.
    pub(super) fn session_states(&self) -> impl Fn(&str) -> Option<Value> {
        let reads = self.host.is_some() && self.env.get("CLAUDE_CODE_SDK_READS_SESSION_STATE").is_some_and(|v| !v.is_empty());
        let (stamps, session_id) = (self.profile.stamps_sdk_events(), self.session_id.clone());
        move |state: &str| {
            let mut event = json!({"type": "system", "subtype": "session_state_changed", "state": state, "sdk_host_only": true, "uuid": new_uuid(), "session_id": session_id});
            if stamps {
                event["written_at"] = json!(stream::timestamp());
            }
            reads.then_some(event)
        }
    }

    /// The result of a turn the host ended by denying with interrupt, or by
    /// interrupting a wait: no further model request (measured on 2.1.334
    /// through the TS SDK; `errors` measured for interrupts on both versions).
    pub(super) fn finish_interrupted(&mut self) {
        let mut message = self.result_message("error_during_execution", Value::Null, "tool_use", "aborted_tools");
        message["errors"] = json!([profile::ABORTED_DIAGNOSTIC]);
        // No result text, no API status or latencies, and two more turns
        // than model requests (measured on 2.1.332 and 2.1.334, with and
        // without tool search).
        if let Some(m) = message.as_object_mut() {
            for k in ["result", "api_error_status", "first_content_frame_ms", "time_to_request_ms", "ttft_ms", "ttft_stream_ms"] {
                m.remove(k);
            }
        }
        message["num_turns"] = json!(self.api_calls + 2);
        self.write_result(message);
    }

    /// The result of a turn a hook stopped (`continue: false`): no final
    /// assistant message, an empty result (measured on both versions).
    pub(super) fn finish_hook_stopped(&mut self) {
        self.result("success", json!(""), "tool_use", "hook_stopped");
    }
}

impl Session {
    /// One tools/call of a stdio or HTTP server whose elicitations go to the
    /// SDK host, if there is one (print mode cancels them); the host's
    /// answer is the outcome of the scenario step that raised it.
    pub(super) fn call_answering_elicitations(&mut self, server: &str, tool: &str, id: &str, arguments: &Value) -> Result<Value, CallFailure> {
        let raised = self.raised.iter().find(|(call, _)| *call == self.call_step).map(|(_, step)| *step);
        let (host, rec, states) = (self.host.clone(), self.rec.clone(), self.session_states());
        let out = &mut self.out;
        let mut elicit = |params: &Value| -> Value {
            let Some(host) = host.as_deref() else {
                return json!({"action": "cancel"});
            };
            // The session waits on the host meanwhile, as for can_use_tool.
            if let Some(event) = states("requires_action") {
                out.event(event);
            }
            let reply = host.ask(out, elicitation::control_request(server, params), false).ok();
            if let Some(event) = states("running") {
                out.event(event);
            }
            if let Some(step) = raised {
                let answer = elicitation::answer_word(reply.as_ref());
                rec.record(&json!({"event": "outcome", "step": step, "method": "elicitation", "prompted": true, "answer": answer, "reply": reply}));
            }
            elicitation::passed_back(reply.as_ref())
        };
        self.servers.call(server, tool, id, arguments, &mut elicit)
    }
}
