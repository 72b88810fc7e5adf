//! SDK host mode (`--input-format stream-json`, as the Agent SDKs launch
//! the CLI): the initialize exchange (with the MCP servers the TS SDK sends
//! in it), one scripted turn per user message, gated calls put to the host
//! as `can_use_tool` (`--permission-prompt-tool stdio`), and the real CLI's
//! answers to what it does not handle. Measured on 2.1.332 (the Python SDK's
//! CLI) and, through the TS SDK, on 2.1.334 (SDK-FACTS.md in the shared measurements, beside PROVIDERS.md).

use std::rc::Rc;

use serde_json::{json, Value};

use super::config::{self, ServerConfig};
use super::hooks::Hooks;
use super::host::{self, Host, Incoming};
use super::output::Output;
use super::process::{fail, next_turn, play, Launch};
use super::profile;
use super::resume::State;
use super::sdk_servers;
use super::session::Session;
use crate::script::Script;

pub fn run(launch: Launch, out: Output, mut dynamic: Vec<ServerConfig>, script: Script, mut state: State) -> i32 {
    let rec = launch.rec.clone();
    let host = Rc::new(Host::start(rec.clone()));
    let mut out = Some(out);
    let mut session: Option<Session> = None;
    let mut first = true;
    let code = loop {
        let incoming = host.next();
        if std::mem::take(&mut first) && launch.opts.await_initialize {
            let refused = match &incoming {
                Incoming::Control { subtype, .. } if subtype == "initialize" => None,
                Incoming::Malformed(_) => Some(profile::AWAIT_INIT_NOT_JSON),
                Incoming::Eof => None,
                _ => Some(profile::AWAIT_INIT_OTHER),
            };
            if let Some(message) = refused {
                break fail(&rec, message, 1);
            }
        }
        match incoming {
            Incoming::Eof => break i32::from(session.as_ref().is_some_and(|s| s.last_result_failed)),
            Incoming::Malformed(text) => break fail(&rec, &text, 1),
            Incoming::Control { id, subtype, request } if subtype == "initialize" && session.is_none() => {
                let servers = request.get("mcpServers").filter(|v| !v.is_null());
                if let Some(record) = servers {
                    match config::servers_of_record(record, &launch.env, &launch.profile) {
                        Ok(list) => {
                            for s in list {
                                dynamic.retain(|o| o.name != s.name);
                                dynamic.push(s);
                            }
                        }
                        Err(lines) => break fail(&rec, &profile::invalid_mcp_config(&lines), 1),
                    }
                }
                let (declared, parked) = sdk_servers::from_initialize(&request);
                let mut s = start(&launch, &mut out, &mut dynamic, &host);
                s.hooks = Hooks::from_initialize(request.get("hooks"));
                // SDK servers without a usable manifest get `initialize`
                // before the answer, the rest of the handshake after it.
                let opened = s.open_sdk_servers(declared);
                // The Python SDK sends `"hooks": null` without hooks: none applied (measured on 2.1.332).
                let hooks = request.get("hooks").is_some_and(|h| !h.is_null());
                // An empty `mcpServers` applies nothing (measured on 2.1.332 and 2.1.334).
                let servers_sent = servers.is_some_and(|v| v.as_object().is_none_or(|o| !o.is_empty()));
                let mut response = initialize_response(&launch, servers_sent, hooks);
                if let Some(parked) = parked {
                    response["sdk_mcp_manifests_parked"] = parked;
                }
                let mut reply = host::success(&id, response);
                // Nothing is pending at the start of a session.
                reply["response"]["pending_permission_requests"] = json!([]);
                reply["response"]["pending_user_dialog_requests"] = json!([]);
                s.out.line(&reply);
                s.notify_sdk_servers(opened);
                session = Some(s);
            }
            Incoming::Control { id, subtype, request } => {
                let (reply, status) = idle_control(&id, &subtype, &request, &launch);
                let sink = match session.as_mut() {
                    Some(s) => {
                        if let Some(mode) = status.as_ref().and_then(|e| e["permissionMode"].as_str()) {
                            s.mode = mode.to_string();
                        }
                        &mut s.out
                    }
                    None => out.as_mut().expect("output before the session"),
                };
                sink.line(&reply);
                if let Some(event) = status {
                    sink.event(event);
                }
            }
            Incoming::User(msg) => {
                let s = match session.as_mut() {
                    Some(s) => s,
                    None => {
                        // No initialize: the SDK servers of --mcp-config
                        // connect at once (unmeasured).
                        let mut s = start(&launch, &mut out, &mut dynamic, &host);
                        let opened = s.open_sdk_servers(Vec::new());
                        s.notify_sdk_servers(opened);
                        session.insert(s)
                    }
                };
                let (turn, prompt_number) = next_turn(&script, &mut state, &launch.session_id);
                let prompt = msg.pointer("/message/content").cloned().unwrap_or(Value::Null);
                rec.record(&json!({"event": "turn", "index": turn, "session_id": launch.session_id, "prompt": prompt, "permission_mode": launch.mode}));
                s.prompt_number = prompt_number;
                s.tool_uses = 0;
                s.api_calls = 0;
                s.denials.clear();
                s.interrupted = false;
                s.hook_stopped = false;
                s.prompt_id = super::uuid::new_uuid();
                s.started = std::time::Instant::now();
                s.session_state("running");
                s.list_sdk_servers();
                s.init(launch.opts.tools.as_deref());
                let actions = script.turns.get(turn).map(|t| t.actions.clone()).unwrap_or_default();
                let played = play(s, actions);
                state.keep_loaded(&launch.session_id, &s.loaded, &script);
                if let Err(fatal) = played {
                    break fail(&rec, &fatal, 1);
                }
                if let Some(Incoming::Malformed(text)) = host.ended() {
                    break fail(&rec, &text, 1);
                }
                s.finish();
                s.session_state("idle");
            }
            Incoming::Response { .. } | Incoming::Other(_) => {}
        }
    };
    if let Some(s) = session.as_mut() {
        s.servers.stop();
    }
    code
}

/// The answer to a control request between turns, and the status event
/// that follows it (2.1.332, measured): `interrupt` with nothing running,
/// `set_permission_mode`; any other subtype is unsupported.
fn idle_control(id: &str, subtype: &str, request: &Value, launch: &Launch) -> (Value, Option<Value>) {
    match subtype {
        "interrupt" => (host::success(id, json!({"still_queued": []})), None),
        "set_permission_mode" => {
            let mode = request["mode"].as_str().unwrap_or("");
            if !profile::SDK_PERMISSION_MODES.contains(&mode) {
                let error = format!("Cannot set permission mode: must be one of {}", profile::SDK_PERMISSION_MODES.join(", "));
                let reply = json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": error, "error_code": "invalid_mode"}});
                return (reply, None);
            }
            let mut status = json!({"type": "system", "subtype": "status", "status": null, "permissionMode": mode, "uuid": super::uuid::new_uuid(), "session_id": launch.session_id});
            if launch.profile.stamps_sdk_events() {
                status["written_at"] = json!(super::stream::timestamp());
            }
            (host::success(id, json!({"mode": mode})), Some(status))
        }
        _ => (host::unsupported(id, subtype), None),
    }
}

/// Connects the servers but the SDK host's own and makes the session
/// whose gated calls go to the host; the SDK servers of `--mcp-config`
/// (or of initialize's `mcpServers`) are left for `open_sdk_servers`.
fn start(launch: &Launch, out: &mut Option<Output>, dynamic: &mut Vec<ServerConfig>, host: &Rc<Host>) -> Session {
    let out = out.take().expect("one session per process");
    let mut configured = std::mem::take(dynamic);
    let sdk = sdk_servers::take_configured(&mut configured);
    let mut s = launch.connect(out, configured);
    s.host = Some(Rc::clone(host));
    s.sdk_pending = sdk;
    s
}

/// The initialize answer (2.1.332 as measured, without the command, agent
/// and model lists' descriptions). `mcp_servers_applied` only when the
/// request carried servers (the TS SDK ends the session if it is missing
/// then), `hooks_applied` only when it carried hooks.
fn initialize_response(launch: &Launch, servers_sent: bool, hooks_sent: bool) -> Value {
    let p = launch.profile;
    let commands: Vec<Value> = p.slash_commands().iter().map(|c| json!({"name": c, "description": "", "argumentHint": ""})).collect();
    let agents: Vec<Value> = profile::AGENTS.iter().map(|a| json!({"name": a, "description": ""})).collect();
    let api_key_source = if launch.env.contains_key("ANTHROPIC_API_KEY") { "ANTHROPIC_API_KEY" } else { "none" };
    let mut r = json!({
        "commands": commands, "agents": agents, "output_style": "default",
        "models": [{"value": "default", "resolvedModel": p.default_model(), "displayName": "Default (recommended)", "description": ""}],
        "account": {"tokenSource": "none", "apiKeySource": api_key_source, "apiProvider": "firstParty"},
        "pid": std::process::id(), "claude_code_version": p.version.to_string(), "current_permission_mode": launch.mode,
        "analytics_disabled": true,
        "fast_mode_state": "off", "fast_mode_disabled_reason": profile::FAST_MODE_DISABLED_REASON,
        "session_state": "idle", "capabilities": p.initialize_capabilities(),
        "available_output_styles": ["default", "Proactive", "Concise", "Explanatory", "Learning"],
        "user_output_styles_dir": launch.locations.config_dir.join("output-styles").display().to_string(),
        "feedback_mode": {"kind": "disabled"}, "hook_on_failure_supported": true, "hooks_when_unanswered_kept": 0,
        "other_hook_ask_outranks_host": true, "ide_rc_auto_enable_gate": false,
        "remote_control_auto_connect_default": false, "remote_control_auto_enable": false,
        "remote_control_auto_on_by_default": false, "remote_control_available": false,
    });
    if p.init_session_fields().contains(&"sandbox_enabled") {
        r["sandbox_enabled"] = json!(false);
    }
    if hooks_sent {
        r["hooks_applied"] = json!(true);
    }
    if servers_sent {
        r["mcp_servers_applied"] = json!(true);
    }
    r
}
