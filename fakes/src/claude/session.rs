//! One session's turn in a `claude -p` process: the init event, each tool
//! call through the permission rules (and the permission prompt tool), and
//! the result.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use serde_json::{json, Value};

use super::cli;
use super::output::Output;
use super::profile::{self, Profile, DEFERRED_BUILTINS, TOOL_SEARCH};
use super::render::{self, BlobDir, Rendered};
use super::rules::{self, ModeDenial, PromptAnswer, Rules, Verdict};
use super::servers::Servers;
use super::stream::{self, Place};
use super::can_use_tool::Why;
use super::hooks::Hooks;
use super::host::Host;
use super::uuid::new_uuid;
use crate::wire::Recorder;

pub struct Session {
    pub profile: Profile,
    pub rec: Recorder,
    pub out: Output,
    pub env: BTreeMap<String, String>,
    pub rules: Rules,
    pub mode: String,
    pub session_id: String,
    pub prompt_tool: Option<String>,
    pub model: String,
    pub servers: Servers,
    pub denials: Vec<Value>,
    /// Model requests so far (num_turns).
    pub api_calls: usize,
    /// This prompt's place in the conversation, and the tool uses the model
    /// has made since it: what the model API names its replies by.
    pub prompt_number: usize,
    pub tool_uses: usize,
    pub started: Instant,
    pub blob_dir: PathBuf,
    /// This working directory's folder under the config dir.
    pub project_dir: PathBuf,
    pub cwd: PathBuf,
    /// Built-in tools the model has (filled by init).
    pub builtins: Vec<&'static str>,
    /// Deferred tools ToolSearch loaded in this process.
    pub loaded: BTreeSet<String>,
    /// The SDK host, when prompts go to it (`--permission-prompt-tool stdio`).
    pub host: Option<std::rc::Rc<Host>>,
    /// The host denied a call with `interrupt: true`, or interrupted a
    /// wait for its answer: the turn ends there.
    pub interrupted: bool,
    /// The last result was an error: an SDK host's CLI then exits 1 when
    /// its input ends (measured after an interrupted turn, 2.1.332 and
    /// 2.1.334).
    pub last_result_failed: bool,
    /// Results this process has written before the current turn's.
    pub results: usize,
    /// The SDK host's PreToolUse hooks (from initialize).
    pub hooks: Hooks,
    /// A hook answered `continue: false`: the turn ends after this call.
    pub hook_stopped: bool,
    /// This prompt's id, as hook inputs name it.
    pub prompt_id: String,
    /// The SDK host's servers from the command line, not connected yet.
    pub sdk_pending: Vec<super::sdk_link::Declared>,
    /// SDK servers initialized but not listed yet (tools/list comes with
    /// the first turn).
    pub sdk_opened: Vec<super::sdk_link::Opened>,
    /// Auto mode's notice (one per process) has been sent.
    pub auto_notice_sent: bool,
    /// This turn's server elicitations: (step of the call whose server
    /// sends one, the request's own step).
    pub raised: Vec<(usize, usize)>,
    /// The step of the call being run.
    pub call_step: usize,
}

/// What a call's hooks leave for the rules.
pub enum HookVerdict {
    /// No hook, or none with an opinion.
    NoOpinion,
    /// Runs without can_use_tool, unless an ask rule covers the tool.
    Allow { updated_input: Option<Value> },
    /// Put to the host as can_use_tool, whatever the rules say.
    Ask { reason: Option<String>, asks: usize },
    /// Refused (or interrupted) before any rule.
    Settled(Box<CallOutcome>),
}

pub(super) struct CallOutcome {
    pub decision: &'static str,
    pub prompted: bool,
    pub answer: Value,
    pub rendered: Rendered,
    pub item_status: &'static str,
    pub mcp_result: Value,
    /// Extra fields of a `permission_denied` system event, if one is sent.
    pub denied_event: Option<Value>,
    /// Goes into the result's permission_denials.
    pub denial: bool,
    pub meta: Option<Value>,
}

impl CallOutcome {
    pub(super) fn refused(decision: &'static str, rendered: Rendered) -> CallOutcome {
        CallOutcome {
            decision,
            prompted: false,
            answer: Value::Null,
            rendered,
            item_status: "none",
            mcp_result: Value::Null,
            denied_event: None,
            denial: true,
            meta: None,
        }
    }
}

impl Session {
    pub fn init(&mut self, tools: Option<&[String]>) {
        let all = self.profile.builtin_tools();
        let mut builtin: Vec<&'static str> = match tools.map(cli::split_tool_list) {
            None => all.to_vec(),
            Some(list) if list.iter().any(|t| t == "default") => all.to_vec(),
            Some(list) => all.iter().copied().filter(|b| list.iter().any(|t| t == b)).collect(),
        };
        if self.defers_tools() {
            // In name order after Task, as init lists it.
            let at = builtin.iter().skip(1).position(|b| *b > TOOL_SEARCH).map_or(builtin.len(), |i| i + 1);
            builtin.insert(at, TOOL_SEARCH);
        }
        builtin.retain(|b| !self.rules.denies(b));
        self.builtins = builtin.clone();
        let mut names: Vec<String> = builtin.into_iter().map(String::from).collect();
        names.extend(self.model_mcp_tools());
        let with_source = self.profile.init_names_server_source();
        let servers: Vec<Value> = self
            .servers
            .iter()
            .map(|s| {
                let mut v = json!({"name": s.config.name, "status": if s.conn.is_ok() { "connected" } else { "failed" }});
                if with_source {
                    v["source"] = json!(s.config.source);
                }
                v
            })
            .collect();
        let api_key_source = if self.env.contains_key("ANTHROPIC_API_KEY") { "ANTHROPIC_API_KEY" } else { "none" };
        let mut event = json!({
            "type": "system", "subtype": "init", "cwd": self.cwd.display().to_string(), "session_id": self.session_id,
            "tools": names, "mcp_servers": servers, "model": self.model,
            "permissionMode": self.mode, "apiKeySource": api_key_source,
            "claude_code_version": self.profile.version.to_string(), "output_style": "default", "uuid": new_uuid(),
        });
        let place = Place { cwd: &self.cwd, project_dir: &self.project_dir };
        if let Some(e) = event.as_object_mut() {
            e.extend(stream::init_fields(&self.profile, &place));
        }
        self.out.event(event);
    }

    /// The MCP tools the model is given: the permission prompt tool is the
    /// CLI's own, never the model's.
    fn model_mcp_tools(&self) -> Vec<String> {
        let mut tools = self.servers.mcp_tools(&self.rules);
        tools.retain(|t| Some(t) != self.prompt_tool.as_ref());
        tools
    }

    /// One scripted model reply; `meta` names the MCP tools it calls.
    fn assistant(&mut self, content: Value, meta: Option<Value>) {
        self.api_calls += 1;
        // Named as the mock model names its replies: the fake plays the model.
        let id = crate::model::anthropic_message_id(self.prompt_number, self.tool_uses);
        self.tool_uses += content.as_array().map_or(0, |c| c.iter().filter(|b| b["type"] == "tool_use").count());
        let mut msg = json!({
            "type": "assistant",
            "message": {
                "id": id, "type": "message", "role": "assistant",
                "model": stream::api_model(&self.model), "content": content, "stop_reason": null, "stop_sequence": null,
                "usage": stream::message_usage(), "context_management": null,
            },
            "parent_tool_use_id": null, "session_id": self.session_id, "timestamp": stream::timestamp(), "uuid": new_uuid(),
        });
        if let Some(meta) = meta {
            msg["tool_use_meta"] = json!([meta]);
        }
        self.out.event(msg);
    }

    /// A tool result message for the model.
    fn user(&mut self, block: Value, tool_use_result: Value, meta: Option<Value>) {
        let mut user = json!({
            "type": "user", "message": {"role": "user", "content": [block]}, "parent_tool_use_id": null,
            "session_id": self.session_id, "timestamp": stream::timestamp(), "uuid": new_uuid(), "tool_use_result": tool_use_result,
        });
        if let Some(meta) = meta {
            user["tool_result_meta"] = json!([meta]);
        }
        self.out.event(user);
    }

    /// With tool search, an MCP tool the model has not loaded yet is only
    /// named to it: it loads it with ToolSearch first (`select:NAME`), one
    /// more model request.
    fn search_tool(&mut self, step: usize, name: &str) {
        if !self.defers_tools() || self.loaded.contains(name) {
            return;
        }
        let id = format!("toolu_search_{step}");
        let query = format!("select:{name}");
        self.assistant(json!([{"type": "tool_use", "id": id, "name": TOOL_SEARCH, "input": {"query": query}}]), None);
        self.auto_mode_notice(false);
        let mcp = self.model_mcp_tools();
        let deferred = self.builtins.iter().filter(|b| DEFERRED_BUILTINS.contains(b)).count() + mcp.len();
        let matches: Vec<&String> = mcp.iter().filter(|t| *t == name).collect();
        let content = if matches.is_empty() {
            json!(profile::NO_DEFERRED_MATCH)
        } else {
            json!(matches.iter().map(|t| json!({"type": "tool_reference", "tool_name": t})).collect::<Vec<_>>())
        };
        let block = json!({"type": "tool_result", "tool_use_id": id, "content": content});
        let result = json!({"matches": matches, "query": query, "total_deferred_tools": deferred});
        let meta = self.profile.reports_permission_decision().then(|| json!({"id": id, "permission_decision": {"decision": "accept", "source": "config"}}));
        self.user(block, result, meta);
        self.loaded.extend(matches.into_iter().cloned());
    }

    /// The display names of a call to `server`'s `tool`, if it has it.
    fn tool_use_meta(&self, server: &str, tool: &str, id: &str) -> Option<Value> {
        let Some(s) = self.servers.iter().find(|s| s.config.name == server) else {
            // No such server in the session: named from the tool alone
            // (every release 2.1.266..2.1.334).
            return Some(json!({"id": id, "display_name": stream::display_name(tool)}));
        };
        let (_, greeting) = s.conn.as_ref().ok()?;
        let entry = greeting.tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(tool))?;
        let info = greeting.initialize.get("serverInfo").cloned().unwrap_or(Value::Null);
        Some(stream::tool_use_meta(&self.profile, id, tool, Some(entry), &info))
    }

    /// One scripted tool call. Err: the process must stop (exit 1) with
    /// this stderr line, as the real CLI does for a missing prompt tool.
    pub fn tool_call(&mut self, step: usize, server: &str, tool: &str, arguments: &Value) -> Result<(), String> {
        let id = format!("toolu_fake_{step}");
        self.call_step = step;
        let name = rules::tool_name(server, tool);
        self.search_tool(step, &name);
        let meta = self.tool_use_meta(server, tool, &id);
        self.assistant(json!([{"type": "tool_use", "id": id, "name": name, "input": arguments}]), meta);
        self.auto_mode_notice(false);
        let (outcome, fatal) = self.decide_and_run(server, tool, &name, &id, arguments);
        if let Some(extra) = &outcome.denied_event {
            let mut event = json!({"type": "system", "subtype": "permission_denied", "tool_name": name, "tool_use_id": id});
            if let (Some(e), Some(x)) = (event.as_object_mut(), extra.as_object()) {
                e.extend(x.clone());
            }
            event["message"] = outcome.rendered.content.clone();
            event["uuid"] = json!(new_uuid());
            event["session_id"] = json!(self.session_id);
            self.out.event(event);
        }
        let block = if outcome.rendered.is_error {
            json!({"type": "tool_result", "content": outcome.rendered.content, "is_error": true, "tool_use_id": id})
        } else {
            json!({"tool_use_id": id, "type": "tool_result", "content": outcome.rendered.content})
        };
        self.user(block, outcome.rendered.tool_use_result.clone(), outcome.meta.clone());
        if self.interrupted {
            let text = json!({"type": "text", "text": profile::INTERRUPTED_FOR_TOOL_USE});
            let msg = json!({
                "type": "user", "message": {"role": "user", "content": [text]}, "parent_tool_use_id": null,
                "session_id": self.session_id, "timestamp": stream::timestamp(), "uuid": new_uuid(),
            });
            self.out.event(msg);
        }
        if outcome.denial {
            self.denials.push(json!({"tool_name": name, "tool_use_id": id, "tool_input": arguments}));
        }
        self.rec.record(&json!({
            "event": "outcome", "step": step, "server": server, "tool": tool, "call_id": id,
            "decision": outcome.decision, "prompted": outcome.prompted, "answer": outcome.answer, "persist": null,
            "item_status": outcome.item_status, "model_saw": outcome.rendered.content, "is_error": outcome.rendered.is_error,
            "mcp_result": outcome.mcp_result,
        }));
        match fatal {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    fn decide_and_run(&mut self, server: &str, tool: &str, name: &str, id: &str, arguments: &Value) -> (CallOutcome, Option<String>) {
        // The model calls the renamed name; the server gets its own tool name.
        let Some(tool) = self.servers.resolve(server, tool).filter(|_| !self.rules.denies(name)) else {
            // A deferred tool this session loaded earlier, whose server is gone.
            let text = if self.defers_tools() && self.loaded.contains(name) { profile::no_such_tool_left(name) } else { profile::no_such_tool(name) };
            let mut o = CallOutcome::refused("removed", Rendered::error(text));
            o.denial = false;
            return (o, None);
        };
        let tool = tool.as_str();
        let reports = self.profile.reports_permission_decision();
        // Hooks come before the rules (measured in default mode only): a
        // deny beats an allow rule, an allow skips can_use_tool unless an
        // ask rule covers the tool, an ask asks even for a listed tool.
        match self.run_hooks(server, name, id, arguments) {
            HookVerdict::Settled(o) => return (*o, None),
            HookVerdict::Ask { reason, asks } => return (self.ask_host(server, tool, name, id, arguments, Why::Hook { reason, asks }), None),
            HookVerdict::Allow { updated_input } if !self.rules.asks(server, tool) => {
                let input = updated_input.clone().unwrap_or_else(|| arguments.clone());
                let mut o = self.run_tool(server, tool, id, &input);
                let mut meta = json!({"id": id});
                if self.profile.marks_changed_input() && updated_input.is_some_and(|u| u != *arguments) {
                    meta["input_changed"] = json!(true);
                }
                meta["permission_decision"] = json!({"decision": "accept", "source": "hook", "reason_type": "hook"});
                o.meta = Some(meta);
                return (o, None);
            }
            HookVerdict::Allow { .. } | HookVerdict::NoOpinion => {}
        }
        match rules::decide(&self.rules, &self.mode, server, tool) {
            Verdict::Allowed { reason, source } => {
                let mut o = self.run_tool(server, tool, id, arguments);
                o.decision = "allowed";
                o.meta = reports.then(|| self.decision_meta(id, json!({"decision": "accept", "source": source, "reason_type": reason})));
                (o, None)
            }
            Verdict::ModeDenied(kind) => {
                let (text, extra, meta) = match kind {
                    ModeDenial::Plan => (
                        profile::plan_denial(name),
                        json!({"decision_reason_type": "mode"}),
                        self.rejected_meta(id, "user-rejected", json!({"decision": "reject", "source": "config"})),
                    ),
                    ModeDenial::DontAsk => (
                        profile::dont_ask_denial(name),
                        json!({"decision_reason_type": "mode"}),
                        self.rejected_meta(id, "permission-rule", json!({"decision": "reject", "source": "config", "reason_type": "mode"})),
                    ),
                    ModeDenial::Auto => {
                        self.auto_mode_notice(true);
                        let text = self.profile.auto_mode_denial(name, &self.model);
                        let mut meta = self.rejected_meta(id, "automode-unavailable", json!({"decision": "reject", "source": "config", "reason_type": "classifier"}));
                        if self.profile.names_refusers() {
                            meta["refused_by"] = json!("auto_mode");
                        }
                        // No permission_denied event: none is sent in auto mode.
                        (text, Value::Null, meta)
                    }
                };
                let mut o = CallOutcome::refused("denied", Rendered::error(text));
                // Null: no permission_denied event (auto mode).
                o.denied_event = (!extra.is_null()).then_some(extra);
                o.meta = Some(meta);
                (o, None)
            }
            Verdict::Gated if self.host.is_some() && self.prompt_tool.as_deref() == Some("stdio") => {
                let why = self.rules.asking(server, tool).map_or(Why::Unlisted, |r| Why::Rule(r.source.settings_name()));
                (self.ask_host(server, tool, name, id, arguments, why), None)
            }
            Verdict::Gated => match self.prompt_tool.clone() {
                None => {
                    let mut o = CallOutcome::refused("denied", Rendered::error(profile::not_granted(name)));
                    o.denied_event = Some(json!({}));
                    o.meta = Some(self.rejected_meta(id, "user-rejected", json!({"decision": "reject", "source": "config"})));
                    (o, None)
                }
                Some(prompt_tool) => self.ask_prompt_tool(&prompt_tool, server, tool, name, id, arguments),
            },
        }
    }

    /// A gated call put to the permission prompt tool (`--permission-prompt-tool mcp__S__T`).
    fn ask_prompt_tool(&mut self, prompt_tool: &str, server: &str, tool: &str, name: &str, id: &str, arguments: &Value) -> (CallOutcome, Option<String>) {
        let available = self.servers.mcp_tools(&self.rules);
        let Some((p_server, p_tool)) = available.contains(&prompt_tool.to_string()).then(|| self.servers.split_name(prompt_tool)).flatten() else {
            let message = profile::prompt_tool_not_found(prompt_tool, &available);
            let o = CallOutcome {
                denial: false,
                ..CallOutcome::refused("prompt", Rendered::error(profile::tool_use_error(name, &message)))
            };
            return (o, Some(message));
        };
        let request = json!({"tool_name": name, "input": arguments, "tool_use_id": id});
        let reply = self.servers.call(&p_server, &p_tool, id, &request, &mut |_| json!({"action": "cancel"}));
        let answer = match &reply {
            Ok(result) => rules::parse_prompt_answer(result),
            Err(_) => PromptAnswer::Invalid,
        };
        self.rec.record(&json!({"event": "permission_prompt", "tool_use_id": id, "prompt_tool": prompt_tool, "reply": match &reply {
            Ok(r) => r.clone(),
            Err(e) => json!({"failure": format!("{e:?}")}),
        }}));
        let invalid = match &reply {
            Err(e) => Rendered::error(profile::tool_use_error(name, &format!("Error: {}", profile::failure_text(&p_server, &p_tool, e, 0.0)))),
            Ok(_) => Rendered::error(self.profile.invalid_prompt_answer_text()),
        };
        (self.settle(answer, invalid, server, tool, id, arguments), None)
    }

    /// What an answer to a permission prompt (the prompt tool's or the SDK
    /// host's) does to the gated call; `invalid` is what the model sees of an
    /// answer the CLI cannot take.
    pub(super) fn settle(&mut self, answer: PromptAnswer, invalid: Rendered, server: &str, tool: &str, id: &str, arguments: &Value) -> CallOutcome {
        let word = answer.word();
        let mut o = match answer {
            PromptAnswer::Allow { updated_input } => {
                let changed = updated_input.as_ref().is_some_and(|u| u != arguments);
                let input = updated_input.unwrap_or_else(|| arguments.clone());
                let mut o = self.run_tool(server, tool, id, &input);
                o.meta = self.profile.reports_permission_decision().then(|| self.decision_meta(id, json!({"decision": "accept", "source": "user_temporary"})));
                // An SDK host's edit is marked like a hook's (measured on 2.1.334).
                if let Some(meta) = o.meta.as_mut().filter(|_| changed && self.host.is_some() && self.profile.marks_changed_input()) {
                    meta["input_changed"] = json!(true);
                }
                o
            }
            PromptAnswer::Deny { message, interrupt: false } => {
                let mut o = CallOutcome::refused("prompt", Rendered::error(message));
                o.meta = Some(self.rejected_meta(id, "permission-rule", json!({"decision": "reject", "source": "user_reject"})));
                o
            }
            // With interrupt the host's message is not used, and the call is
            // the user's rejection, as for an interrupted wait (measured on
            // 2.1.332 and 2.1.334).
            PromptAnswer::Deny { interrupt: true, .. } => {
                let rendered = Rendered { content: json!(profile::REJECTED_STOP), is_error: true, tool_use_result: json!(profile::USER_REJECTED) };
                let mut o = CallOutcome::refused("prompt", rendered);
                o.meta = Some(json!({"id": id, "non_execution_kind": "user-rejected"}));
                self.interrupted = true;
                o
            }
            PromptAnswer::Invalid => {
                let mut o = CallOutcome::refused("prompt", invalid);
                o.meta = Some(self.rejected_meta(id, "permission-rule", json!({"decision": "reject", "source": "config", "reason_type": "other"})));
                o
            }
        };
        o.answer = json!(word);
        o.decision = "prompt";
        o.prompted = true;
        o
    }

    /// `_meta` of a call the CLI let through, with its permission decision
    /// where the version reports one.
    fn decision_meta(&self, id: &str, decision: Value) -> Value {
        let mut m = json!({"id": id});
        if self.profile.reports_permission_decision() {
            m["permission_decision"] = decision;
        }
        m
    }

    /// Auto mode's one notice per process, before the tool result it comes
    /// with: the billing notice at the first tool use (2.1.278..2.1.318),
    /// the no-server-side-check notice at the first call the classifier must
    /// judge (`gated`, from 2.1.319).
    fn auto_mode_notice(&mut self, gated: bool) {
        if self.mode != "auto" || self.auto_notice_sent {
            return;
        }
        // What the CLI names as the API's host: ANTHROPIC_BASE_URL's authority.
        let base = self.env.get("ANTHROPIC_BASE_URL").map(String::as_str).unwrap_or("http://127.0.0.1:0");
        let host = base.split("://").nth(1).unwrap_or(base).split('/').next().unwrap_or_default().to_string();
        let Some((at_gated, mut event)) = self.profile.auto_mode_notice(&host) else { return };
        if at_gated != gated {
            return;
        }
        self.auto_notice_sent = true;
        event["session_id"] = json!(self.session_id);
        event["timestamp"] = json!(stream::timestamp());
        event["uuid"] = json!(new_uuid());
        self.out.event(event);
    }

    /// `_meta` of a call the CLI did not run, and why.
    pub(super) fn rejected_meta(&self, id: &str, kind: &str, decision: Value) -> Value {
        let mut m = json!({"id": id, "non_execution_kind": kind});
        if self.profile.reports_permission_decision() {
            m["permission_decision"] = decision;
        }
        m
    }

    pub(super) fn run_tool(&mut self, server: &str, tool: &str, id: &str, arguments: &Value) -> CallOutcome {
        if self.on_host(server) {
            return self.run_sdk_tool(server, tool, id, arguments);
        }
        let timeout_ms = self.servers.timeout_ms(server);
        let reply = self.call_answering_elicitations(server, tool, id, arguments);
        let (rendered, item_status, mcp_result) = match reply {
            Ok(result) => {
                let (rendered, status) = self.render_result(server, tool, &result);
                (rendered, status, result)
            }
            Err(e) => (Rendered::error(profile::failure_text(server, tool, &e, timeout_ms)), "failed", Value::Null),
        };
        CallOutcome {
            decision: "allowed",
            prompted: false,
            answer: Value::Null,
            rendered,
            item_status,
            mcp_result,
            denied_event: None,
            denial: false,
            meta: None,
        }
    }

    /// What the model sees of a server's result, and the call's status.
    pub(super) fn render_result(&self, server: &str, tool: &str, result: &Value) -> (Rendered, &'static str) {
        let name = rules::tool_name(server, tool);
        let is_error = result.get("isError") == Some(&json!(true));
        let hint = if is_error && self.defers_tools() { self.servers.input_schema(server, tool) } else { None };
        let blobs = BlobDir { dir: &self.blob_dir };
        let rendered = render::render(server, &name, result, hint.as_ref(), &blobs);
        (rendered, if is_error { "failed" } else { "completed" })
    }

    fn defers_tools(&self) -> bool {
        self.profile.defers_mcp_tools() && self.env.get("ENABLE_TOOL_SEARCH").map(String::as_str) != Some("false")
    }

    pub fn finish(&mut self) {
        if self.interrupted {
            return self.finish_interrupted();
        }
        if self.hook_stopped {
            return self.finish_hook_stopped();
        }
        let text = "Done.";
        self.assistant(json!([{"type": "text", "text": text}]), None);
        self.result("success", json!(text), "end_turn", "completed");
    }

    /// The turn's `result` message.
    pub(super) fn result(&mut self, subtype: &str, result: Value, stop_reason: &str, terminal_reason: &str) {
        let message = self.result_message(subtype, result, stop_reason, terminal_reason);
        self.write_result(message);
    }

    /// Writes a turn's result, keeping whether it failed and how many this
    /// process has written.
    pub(super) fn write_result(&mut self, message: Value) {
        self.last_result_failed = message["subtype"] != "success";
        self.results += 1;
        self.out.result(message);
    }

    pub(super) fn result_message(&self, subtype: &str, result: Value, stop_reason: &str, terminal_reason: &str) -> Value {
        let mut message = json!({
            "type": "result", "subtype": subtype, "is_error": subtype != "success",
            "duration_ms": self.started.elapsed().as_millis() as u64,
            "num_turns": self.api_calls, "result": result, "stop_reason": stop_reason, "session_id": self.session_id,
            "permission_denials": self.denials, "terminal_reason": terminal_reason, "uuid": new_uuid(),
        });
        if let Some(r) = message.as_object_mut() {
            r.extend(stream::result_fields(&self.profile, &self.model, self.api_calls));
        }
        // An SDK host's long-lived process numbers its results (measured on
        // 2.1.332 and 2.1.334: the second turn's is 1).
        if message.get("result_index").is_some() {
            message["result_index"] = json!(self.results);
        }
        message
    }
}
