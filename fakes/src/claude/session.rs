//! One `claude -p` process: checks the command line and config like the real
//! CLI, connects the MCP servers, plays this process's turn of the script
//! and prints the chosen output format.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::cli::{self, Options};
use super::config::{self, Locations, ServerConfig, ServerTransport, SettingsInput};
use super::profile::{self, Profile};
use super::render::{self, BlobDir, Rendered};
use super::rules::{self, ModeDenial, PromptAnswer, Rule, RuleSource, Rules, Verdict};
use crate::codex::script::{Action, Script};
use crate::mcp_client::{CallFailure, Greeting, Handshake, McpConnection, ServerTarget};
use crate::wire::Recorder;

/// Built-in tools listed in init (the fake runs none of them).
const BUILTIN_TOOLS: [&str; 11] =
    ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "NotebookEdit", "WebFetch", "WebSearch", "TodoWrite"];

/// Default tool timeout: 1e8 ms, as measured.
const DEFAULT_TOOL_TIMEOUT_MS: f64 = 100_000_000.0;

/// Longest prompt read from stdin.
const MAX_STDIN_PROMPT: u64 = 16 * 1024 * 1024;

pub fn run(profile: Profile, script: Script, rec: Recorder, argv: &[String]) -> i32 {
    let opts = match cli::parse(argv) {
        Ok(o) => o,
        Err(e) => return fail(&rec, &e, 1),
    };
    let format = opts.output_format.clone().unwrap_or_else(|| "text".into());
    let mut out = Output { rec: rec.clone(), format, stdout: std::io::stdout() };
    if opts.version {
        out.text(&profile.version_line());
        return 0;
    }
    if opts.help {
        out.text("Usage: claude [options] [command] [prompt]\n\nClaude Code (fake) - print mode only: claude -p PROMPT");
        return 0;
    }
    if !opts.print {
        return fail(&rec, "fake-claude: only print mode (-p/--print) is simulated", 2);
    }
    if opts.input_format.as_deref() == Some("stream-json") {
        return fail(&rec, "fake-claude: --input-format stream-json (SDK host mode) is not simulated", 2);
    }
    if out.format == "stream-json" && !opts.verbose {
        return fail(&rec, profile::STREAM_JSON_NEEDS_VERBOSE, 1);
    }
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let locations = Locations::new(&env);
    let global_config: Value = std::fs::read_to_string(&locations.global_config)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));

    let dynamic = match config::load_mcp_configs(&opts.mcp_configs, &cwd, &env, &profile) {
        Ok(s) => s,
        Err(lines) => return fail(&rec, &profile::invalid_mcp_config(&lines), 1),
    };
    let sources = match config::parse_setting_sources(opts.setting_sources.as_deref()) {
        Ok(s) => s,
        Err(e) => return fail(&rec, &e, 1),
    };
    let settings = match config::load_settings(&SettingsInput {
        flag: opts.settings.as_deref(),
        sources: &sources,
        cwd: &cwd,
        locations: &locations,
        global_config: &global_config,
        profile: &profile,
    }) {
        Ok(s) => s,
        Err(e) => return fail(&rec, &e, 1),
    };
    for w in &settings.warnings {
        warn(&rec, w);
    }
    let mut rules = settings.rules.clone();
    rules.allow.extend(cli::split_tool_list(&opts.allowed_tools).into_iter().map(|r| Rule::new(r, RuleSource::Cli)));
    rules.deny.extend(cli::split_tool_list(&opts.disallowed_tools).into_iter().map(|r| Rule::new(r, RuleSource::Cli)));
    let mode = permission_mode(&opts, settings.default_mode.as_deref());
    if mode == "bypassPermissions" && is_root() && env.get("IS_SANDBOX").map(String::as_str) != Some("1") {
        return fail(&rec, profile::ROOT_SKIPS_PERMISSIONS, 1);
    }

    let mut state = State::load(&script.state);
    let session_id = match resolve_session(&opts, &state) {
        Ok(id) => id,
        Err(SessionError { message, result_session }) => {
            let code = fail(&rec, &message, 1);
            if let Some(id) = result_session {
                out.error_result(&id, &message);
            }
            return code;
        }
    };
    let prompt = match opts.positionals.first() {
        Some(p) => p.clone(),
        None => {
            let mut text = String::new();
            let _ = std::io::stdin().take(MAX_STDIN_PROMPT).read_to_string(&mut text);
            text
        }
    };
    if prompt.trim().is_empty() {
        return fail(&rec, profile::NO_PROMPT, 1);
    }

    let turn = state.next_turn;
    state.next_turn += 1;
    if !state.sessions.contains(&session_id) {
        state.sessions.push(session_id.clone());
    }
    state.save(&script.state);
    rec.record(&json!({"event": "turn", "index": turn, "session_id": session_id, "prompt": prompt, "permission_mode": mode}));

    let mut servers: Vec<ServerConfig> = Vec::new();
    if !opts.strict_mcp_config {
        servers.extend(config::user_servers(&global_config, &cwd, &env, &profile));
    }
    for s in dynamic {
        servers.retain(|o| o.name != s.name);
        servers.push(s);
    }
    let blob_dir = locations.config_dir.join("projects").join(cwd.display().to_string().replace(['/', '.'], "-")).join(&session_id).join("tool-results");
    let mut session = Session {
        profile,
        rec: rec.clone(),
        out,
        env,
        rules,
        mode,
        session_id,
        prompt_tool: opts.permission_prompt_tool.clone(),
        model: opts.model.clone().unwrap_or_else(|| profile.default_model().to_string()),
        servers: Vec::new(),
        denials: Vec::new(),
        api_calls: 0,
        started: Instant::now(),
        blob_dir,
        cwd,
    };
    session.connect(servers);
    session.init(opts.tools.as_deref());
    let actions = script.turns.get(turn).map(|t| t.actions.clone()).unwrap_or_default();
    for action in actions {
        match action {
            Action::ToolCall { step, server, tool, arguments } => {
                if let Err(fatal) = session.tool_call(step, &server, &tool, &arguments) {
                    return fail(&rec, &fatal, 1);
                }
            }
            Action::Request { step, request, .. } => {
                rec.record(&json!({"event": "unsupported", "step": step, "kind": "request", "request": request}));
            }
            Action::Raw { step, method, .. } => {
                rec.record(&json!({"event": "unsupported", "step": step, "kind": "raw", "method": method}));
            }
        }
    }
    session.finish();
    0
}

/// Prints a message on stderr, records it, and gives the exit code.
fn fail(rec: &Recorder, message: &str, code: i32) -> i32 {
    warn(rec, message);
    code
}

fn warn(rec: &Recorder, message: &str) {
    eprintln!("{message}");
    rec.record(&json!({"event": "stderr", "text": message}));
}

/// `--dangerously-skip-permissions`, else `--permission-mode`, else the
/// settings' `defaultMode`; "manual" is reported as "default".
fn permission_mode(opts: &Options, default_mode: Option<&str>) -> String {
    let valid = |m: &str| m == "default" || cli::PERMISSION_MODES.contains(&m);
    let mode = if opts.dangerously_skip_permissions {
        "bypassPermissions".to_string()
    } else if let Some(m) = &opts.permission_mode {
        m.clone()
    } else {
        default_mode.filter(|m| valid(m)).unwrap_or("default").to_string()
    };
    if mode == "manual" {
        "default".into()
    } else {
        mode
    }
}

/// Effective uid 0: /proc/self belongs to the process's effective user.
fn is_root() -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        false
    }
}

struct SessionError {
    message: String,
    /// Session id of the error result the real CLI prints on stdout.
    result_session: Option<String>,
}

fn resolve_session(opts: &Options, state: &State) -> Result<String, SessionError> {
    let err = |m: String, s: Option<String>| SessionError { message: m, result_session: s };
    if (opts.resume.is_some() || opts.continue_session) && opts.session_id.is_some() && !opts.fork_session {
        return Err(err(profile::SESSION_ID_NEEDS_FORK.into(), None));
    }
    if let Some(id) = &opts.session_id {
        if !is_uuid(id) {
            return Err(err(profile::INVALID_SESSION_ID.into(), None));
        }
        if state.sessions.contains(id) {
            return Err(err(profile::session_id_in_use(id), None));
        }
    }
    let fresh = || opts.session_id.clone().unwrap_or_else(new_uuid);
    let resumed = if let Some(r) = &opts.resume {
        if !is_uuid(r) {
            return Err(err(profile::resume_not_uuid(r), Some(new_uuid())));
        }
        if !state.sessions.contains(r) {
            return Err(err(profile::no_conversation(r), Some(r.clone())));
        }
        r.clone()
    } else if opts.continue_session {
        match state.sessions.last() {
            Some(s) => s.clone(),
            None => return Err(err(profile::NOTHING_TO_CONTINUE.into(), None)),
        }
    } else {
        return Ok(fresh());
    };
    Ok(if opts.fork_session { fresh() } else { resumed })
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() })
}

fn new_uuid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut seed = nanos ^ ((std::process::id() as u64) << 32) ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let (a, b) = (next(), next());
    let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// Per-run state kept across the driver's `claude -p` processes.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct State {
    next_turn: usize,
    sessions: Vec<String>,
}

impl State {
    fn load(path: &Path) -> State {
        std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
    }

    fn save(&self, path: &Path) {
        let _ = std::fs::write(path, serde_json::to_string(self).unwrap_or_default());
    }
}

/// stdout in the chosen format, every printed thing recorded.
struct Output {
    rec: Recorder,
    format: String,
    stdout: std::io::Stdout,
}

impl Output {
    /// One stream-json event; other formats print only the result.
    fn event(&mut self, msg: Value) {
        if self.format == "stream-json" {
            self.line(&msg);
        }
    }

    fn result(&mut self, msg: Value) {
        match self.format.as_str() {
            "stream-json" | "json" => self.line(&msg),
            _ => self.text(msg.get("result").and_then(Value::as_str).unwrap_or("")),
        }
    }

    fn line(&mut self, msg: &Value) {
        self.rec.record(&json!({"dir": "out", "msg": msg}));
        let mut lock = self.stdout.lock();
        let _ = writeln!(lock, "{msg}");
        let _ = lock.flush();
    }

    fn text(&mut self, text: &str) {
        self.rec.record(&json!({"dir": "out", "text": text}));
        let mut lock = self.stdout.lock();
        let _ = writeln!(lock, "{text}");
        let _ = lock.flush();
    }

    /// The result a failed resume prints besides its stderr line.
    fn error_result(&mut self, session_id: &str, message: &str) {
        if self.format == "text" {
            return;
        }
        self.line(&json!({
            "type": "result", "subtype": "error_during_execution", "duration_ms": 0, "duration_api_ms": 0,
            "is_error": true, "num_turns": 0, "stop_reason": null, "session_id": session_id, "total_cost_usd": 0,
            "usage": usage(), "permission_denials": [], "errors": [message], "uuid": new_uuid(),
        }));
    }
}

fn usage() -> Value {
    json!({"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5,
           "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard"})
}

struct Server {
    config: ServerConfig,
    conn: Result<(McpConnection, Greeting), String>,
}

impl Server {
    fn has_tool(&self, tool: &str) -> bool {
        matches!(&self.conn, Ok((c, _)) if c.tool(tool).is_some())
    }
}

struct Session {
    profile: Profile,
    rec: Recorder,
    out: Output,
    env: BTreeMap<String, String>,
    rules: Rules,
    mode: String,
    session_id: String,
    prompt_tool: Option<String>,
    model: String,
    servers: Vec<Server>,
    denials: Vec<Value>,
    /// Model requests so far (num_turns).
    api_calls: usize,
    started: Instant,
    blob_dir: PathBuf,
    cwd: PathBuf,
}

/// Everything one tool call ends with.
struct CallOutcome {
    decision: &'static str,
    prompted: bool,
    answer: Value,
    rendered: Rendered,
    item_status: &'static str,
    mcp_result: Value,
    /// Extra fields of a `permission_denied` system event, if one is sent.
    denied_event: Option<Value>,
    /// Goes into the result's permission_denials.
    denial: bool,
    meta: Option<Value>,
}

impl CallOutcome {
    fn refused(decision: &'static str, rendered: Rendered) -> CallOutcome {
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
    fn handshake(&self) -> Handshake {
        let client_info = self.profile.client_info();
        let capabilities = self.profile.client_capabilities();
        let discover = self.profile.probes_discover().then(|| {
            (
                json!("server-discover-probe-1"),
                json!({"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": client_info,
                    "io.modelcontextprotocol/clientCapabilities": capabilities,
                }}),
            )
        });
        Handshake {
            discover,
            initialize: json!({"protocolVersion": self.profile.protocol_version(), "capabilities": capabilities, "clientInfo": client_info}),
            first_id: 0,
        }
    }

    /// Connects every server at once, as the real CLI does.
    fn connect(&mut self, configs: Vec<ServerConfig>) {
        let handshake = self.handshake();
        let env = &self.env;
        let results: Vec<Result<(McpConnection, Greeting), String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = configs
                .iter()
                .map(|c| {
                    let handshake = &handshake;
                    scope.spawn(move || {
                        let target = target(c)?;
                        McpConnection::connect_with(&target, env, handshake)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("connect thread panicked".into()))).collect()
        });
        for (config, conn) in configs.into_iter().zip(results) {
            let (status, error) = match &conn {
                Ok(_) => ("connected", Value::Null),
                Err(e) => ("failed", json!(e)),
            };
            self.rec.record(&json!({"event": "mcp_startup", "server": config.name, "source": config.source, "status": status, "error": error}));
            self.servers.push(Server { config, conn });
        }
    }

    /// The MCP tools the model has: connected servers' tools minus denied ones.
    fn mcp_tools(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.servers {
            if let Ok((conn, _)) = &s.conn {
                for t in &conn.tools {
                    let name = rules::tool_name(&s.config.name, &t.name);
                    if !self.rules.denies(&name) {
                        out.push(name);
                    }
                }
            }
        }
        out
    }

    fn init(&mut self, tools: Option<&[String]>) {
        let builtin: Vec<&str> = match tools.map(cli::split_tool_list) {
            None => BUILTIN_TOOLS.to_vec(),
            Some(list) if list.iter().any(|t| t == "default") => BUILTIN_TOOLS.to_vec(),
            Some(list) => BUILTIN_TOOLS.iter().copied().filter(|b| list.iter().any(|t| t == b)).collect(),
        };
        let mut names: Vec<String> = builtin.into_iter().filter(|b| !self.rules.denies(b)).map(String::from).collect();
        names.extend(self.mcp_tools());
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
        let event = json!({
            "type": "system", "subtype": "init", "cwd": self.cwd.display().to_string(), "session_id": self.session_id,
            "tools": names, "mcp_servers": servers, "model": self.model,
            "permissionMode": self.mode, "slash_commands": [], "apiKeySource": api_key_source,
            "claude_code_version": self.profile.version.to_string(), "output_style": "default",
            "agents": ["general-purpose"], "plugins": [], "uuid": new_uuid(),
        });
        self.out.event(event);
    }

    fn assistant(&mut self, content: Value) {
        self.api_calls += 1;
        let msg = json!({
            "type": "assistant",
            "message": {
                "id": format!("msg_fake_{}", self.api_calls), "type": "message", "role": "assistant",
                "model": self.model, "content": content, "stop_reason": null, "stop_sequence": null,
                "usage": usage(),
            },
            "parent_tool_use_id": null, "session_id": self.session_id, "uuid": new_uuid(),
        });
        self.out.event(msg);
    }

    /// One scripted tool call. Err: the process must stop (exit 1) with
    /// this stderr line, as the real CLI does for a missing prompt tool.
    fn tool_call(&mut self, step: usize, server: &str, tool: &str, arguments: &Value) -> Result<(), String> {
        let id = format!("toolu_fake_{step}");
        let name = rules::tool_name(server, tool);
        self.assistant(json!([{"type": "tool_use", "id": id, "name": name, "input": arguments}]));
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
        let mut user = json!({
            "type": "user", "message": {"role": "user", "content": [block]}, "parent_tool_use_id": null,
            "session_id": self.session_id, "uuid": new_uuid(), "tool_use_result": outcome.rendered.tool_use_result,
        });
        if let Some(meta) = &outcome.meta {
            user["tool_result_meta"] = json!([meta]);
        }
        self.out.event(user);
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
        let available = self.servers.iter().any(|s| s.config.name == server && s.has_tool(tool)) && !self.rules.denies(name);
        if !available {
            let mut o = CallOutcome::refused("removed", Rendered::error(profile::no_such_tool(name)));
            o.denial = false;
            return (o, None);
        }
        let reports = self.profile.reports_permission_decision();
        let decision_meta = |decision: Value| -> Value {
            let mut m = json!({"id": id});
            if reports {
                m["permission_decision"] = decision;
            }
            m
        };
        let rejected_meta = |kind: &str, decision: Value| -> Value {
            let mut m = json!({"id": id, "non_execution_kind": kind});
            if reports {
                m["permission_decision"] = decision;
            }
            m
        };
        match rules::decide(&self.rules, &self.mode, server, tool) {
            Verdict::Allowed { reason, source } => {
                let mut o = self.run_tool(server, tool, id, arguments);
                o.decision = "allowed";
                o.meta = reports.then(|| decision_meta(json!({"decision": "accept", "source": source, "reason_type": reason})));
                (o, None)
            }
            Verdict::ModeDenied(kind) => {
                let (text, extra, meta) = match kind {
                    ModeDenial::Plan => (
                        profile::plan_denial(name),
                        json!({"decision_reason_type": "mode"}),
                        rejected_meta("user-rejected", json!({"decision": "reject", "source": "config"})),
                    ),
                    ModeDenial::DontAsk => (
                        profile::dont_ask_denial(name),
                        json!({"decision_reason_type": "mode"}),
                        rejected_meta("permission-rule", json!({"decision": "reject", "source": "config", "reason_type": "mode"})),
                    ),
                    ModeDenial::Auto => {
                        let (text, extra, kind) = self.profile.auto_mode_denial(name);
                        (text, extra, rejected_meta(kind, json!({"decision": "reject", "source": "config", "reason_type": "classifier"})))
                    }
                };
                let mut o = CallOutcome::refused("denied", Rendered::error(text));
                o.denied_event = Some(extra);
                o.meta = Some(meta);
                (o, None)
            }
            Verdict::Gated => match self.prompt_tool.clone() {
                None => {
                    let mut o = CallOutcome::refused("denied", Rendered::error(profile::not_granted(name)));
                    o.denied_event = Some(json!({}));
                    o.meta = Some(rejected_meta("user-rejected", json!({"decision": "reject", "source": "config"})));
                    (o, None)
                }
                Some(prompt_tool) => self.ask_prompt_tool(&prompt_tool, server, tool, name, id, arguments, &rejected_meta, &decision_meta),
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn ask_prompt_tool(
        &mut self,
        prompt_tool: &str,
        server: &str,
        tool: &str,
        name: &str,
        id: &str,
        arguments: &Value,
        rejected_meta: &dyn Fn(&str, Value) -> Value,
        decision_meta: &dyn Fn(Value) -> Value,
    ) -> (CallOutcome, Option<String>) {
        let available = self.mcp_tools();
        let Some((p_server, p_tool)) = available.contains(&prompt_tool.to_string()).then(|| self.split_name(prompt_tool)).flatten() else {
            let message = profile::prompt_tool_not_found(prompt_tool, &available);
            let o = CallOutcome {
                denial: false,
                ..CallOutcome::refused("prompt", Rendered::error(profile::tool_use_error(name, &message)))
            };
            return (o, Some(message));
        };
        let request = json!({"tool_name": name, "input": arguments, "tool_use_id": id});
        let reply = self.call_mcp(&p_server, &p_tool, id, &request);
        let answer = match &reply {
            Ok(result) => rules::parse_prompt_answer(result),
            Err(_) => PromptAnswer::Invalid,
        };
        self.rec.record(&json!({"event": "permission_prompt", "tool_use_id": id, "prompt_tool": prompt_tool, "reply": match &reply {
            Ok(r) => r.clone(),
            Err(e) => json!({"failure": format!("{e:?}")}),
        }}));
        let mut o = match answer {
            PromptAnswer::Allow { updated_input } => {
                let input = updated_input.unwrap_or_else(|| arguments.clone());
                let mut o = self.run_tool(server, tool, id, &input);
                o.meta = self.profile.reports_permission_decision().then(|| decision_meta(json!({"decision": "accept", "source": "user_temporary"})));
                o.answer = json!("allow");
                o
            }
            PromptAnswer::Deny { message } => {
                let mut o = CallOutcome::refused("prompt", Rendered::error(message));
                o.meta = Some(rejected_meta("permission-rule", json!({"decision": "reject", "source": "user_reject"})));
                o.answer = json!("deny");
                o
            }
            PromptAnswer::Invalid => {
                let rendered = match &reply {
                    Err(e) => Rendered::error(profile::tool_use_error(name, &format!("Error: {}", profile::failure_text(&p_server, &p_tool, e, 0.0)))),
                    Ok(_) => Rendered::error(self.profile.invalid_prompt_answer_text()),
                };
                let mut o = CallOutcome::refused("prompt", rendered);
                o.meta = Some(rejected_meta("permission-rule", json!({"decision": "reject", "source": "config", "reason_type": "other"})));
                o.answer = json!("invalid");
                o
            }
        };
        o.decision = "prompt";
        o.prompted = true;
        (o, None)
    }

    /// `mcp__S__T` -> (S, T) for a connected server S.
    fn split_name(&self, name: &str) -> Option<(String, String)> {
        self.servers.iter().find_map(|s| {
            name.strip_prefix(&format!("mcp__{}__", s.config.name)).filter(|t| s.has_tool(t)).map(|t| (s.config.name.clone(), t.to_string()))
        })
    }

    fn timeout_ms(&self, server: &str) -> f64 {
        let per_server = self.servers.iter().find(|s| s.config.name == server).and_then(|s| s.config.timeout_ms).filter(|t| *t >= 1000.0);
        let from_env = self.env.get("MCP_TOOL_TIMEOUT").and_then(|v| v.trim().parse::<f64>().ok()).filter(|t| t.is_finite() && *t > 0.0);
        per_server.or(from_env).unwrap_or(DEFAULT_TOOL_TIMEOUT_MS).max(1000.0)
    }

    /// One tools/call with the server's timeout; elicitations are cancelled.
    fn call_mcp(&mut self, server: &str, tool: &str, tool_use_id: &str, arguments: &Value) -> Result<Value, CallFailure> {
        let timeout_ms = self.timeout_ms(server);
        let reason = self.profile.cancel_reason();
        let rec = self.rec.clone();
        let roots = json!({"roots": [{"uri": format!("file://{}", self.cwd.display())}]});
        let Some(Server { conn: Ok((conn, _)), .. }) = self.servers.iter_mut().find(|s| s.config.name == server) else {
            return Err(CallFailure::Transport(format!("MCP server \"{server}\" is not connected")));
        };
        let server_name = server.to_string();
        let mut on_request = |method: &str, _params: &Value| -> Option<Value> {
            let answer = match method {
                "elicitation/create" => Some(json!({"action": "cancel"})),
                "roots/list" => Some(roots.clone()),
                "ping" => Some(json!({})),
                _ => None,
            };
            rec.record(&json!({"event": "server_request", "server": server_name, "method": method, "answer": answer}));
            answer
        };
        let id = tool_use_id.to_string();
        conn.call_with_timeout(
            tool,
            arguments,
            |rid| json!({"claudecode/toolUseId": id, "progressToken": rid}),
            Duration::from_secs_f64(timeout_ms / 1000.0),
            reason,
            &mut on_request,
        )
    }

    fn run_tool(&mut self, server: &str, tool: &str, id: &str, arguments: &Value) -> CallOutcome {
        let name = rules::tool_name(server, tool);
        let timeout_ms = self.timeout_ms(server);
        let reply = self.call_mcp(server, tool, id, arguments);
        let (rendered, item_status, mcp_result) = match reply {
            Ok(result) => {
                let is_error = result.get("isError") == Some(&json!(true));
                let hint = if is_error && self.defers_tools() { self.input_schema(server, tool) } else { None };
                let blobs = BlobDir { dir: &self.blob_dir };
                let rendered = render::render(server, &name, &result, hint.as_ref(), &blobs);
                (rendered, if is_error { "failed" } else { "completed" }, result)
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

    fn defers_tools(&self) -> bool {
        self.profile.defers_mcp_tools() && self.env.get("ENABLE_TOOL_SEARCH").map(String::as_str) != Some("false")
    }

    fn input_schema(&self, server: &str, tool: &str) -> Option<Value> {
        let s = self.servers.iter().find(|s| s.config.name == server)?;
        let (_, greeting) = s.conn.as_ref().ok()?;
        greeting.tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(tool))?.get("inputSchema").cloned()
    }

    fn finish(&mut self) {
        let text = "Done.";
        self.assistant(json!([{"type": "text", "text": text}]));
        let result = json!({
            "type": "result", "subtype": "success", "is_error": false,
            "duration_ms": self.started.elapsed().as_millis() as u64, "duration_api_ms": 0,
            "num_turns": self.api_calls, "result": text, "stop_reason": "end_turn", "session_id": self.session_id,
            "total_cost_usd": 0, "usage": usage(), "modelUsage": {}, "permission_denials": self.denials,
            "terminal_reason": "completed", "uuid": new_uuid(),
        });
        self.out.result(result);
    }
}

impl Drop for Session {
    /// Servers get EOF and a moment to read what was sent last (such as a
    /// `notifications/cancelled`) before they are killed.
    fn drop(&mut self) {
        let servers = std::mem::take(&mut self.servers);
        std::thread::scope(|scope| {
            for s in servers {
                if let Ok((conn, _)) = s.conn {
                    scope.spawn(move || conn.close(Duration::from_secs(2)));
                }
            }
        });
    }
}

fn target(c: &ServerConfig) -> Result<ServerTarget, String> {
    match &c.transport {
        ServerTransport::Stdio { command: Some(command), args, env } => Ok(ServerTarget {
            command: Some(command.clone()),
            args: args.clone(),
            env: env.clone(),
            ..ServerTarget::default()
        }),
        ServerTransport::Stdio { command: None, .. } => Err("stdio server without `command`".into()),
        ServerTransport::Http { url: Some(url), headers } => {
            Ok(ServerTarget { url: Some(url.clone()), headers: headers.clone(), ..ServerTarget::default() })
        }
        ServerTransport::Http { url: None, .. } => Err("http server without `url`".into()),
        ServerTransport::Unsupported(kind) => Err(format!("transport `{kind}` is not simulated")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_look_like_uuids() {
        let a = new_uuid();
        assert!(is_uuid(&a), "{a}");
        assert_ne!(a, new_uuid());
        assert!(!is_uuid("notauuid"));
    }

    #[test]
    fn mode_sources() {
        let o = cli::parse(&["-p".into(), "x".into()]).unwrap();
        assert_eq!(permission_mode(&o, Some("bypassPermissions")), "bypassPermissions");
        assert_eq!(permission_mode(&o, Some("bogus")), "default");
        let o = cli::parse(&["--permission-mode".into(), "manual".into()]).unwrap();
        assert_eq!(permission_mode(&o, Some("plan")), "default");
    }
}
