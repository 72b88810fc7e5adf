//! Fake `codex exec --json`, the command `@openai/codex-sdk` drives: one
//! turn of the per-run script per process, the JSONL events on stdout, every
//! line and one `outcome` record per tool-call step in the transcript, and
//! the exec approval outcome of the version it simulates.

pub mod args;
pub mod events;
pub mod outcome;
mod session;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use serde_json::{json, Value};

use self::events::{item_result, tool_item, Events};
use self::outcome::ExecDecision;
use super::config::{self, BaseConfig, Settings};
use super::profile::{self, Profile};
use super::server::call_meta::CallMeta;
use super::server::shapes::{now_ms, MODEL};
use super::server::thread::target;
use super::server::turn::{model_output, Outcome};
use crate::mcp_client::McpConnection;
use crate::script::{Action, Script};
use crate::wire::Recorder;

/// Runs `codex [-c ...] exec ARGV` (`cli`: the whole command line); returns
/// the exit code.
pub fn run(profile: Profile, script: Script, global_overrides: Vec<String>, argv: &[String], cli: &[String]) -> i32 {
    let mut a = match args::parse(argv) {
        Ok(a) => a,
        Err((text, code)) => {
            eprint!("{text}");
            return code;
        }
    };
    if !a.json {
        eprintln!("fake-codex: only `codex exec --json` (or --experimental-json) is simulated");
        return 2;
    }
    let rec = Recorder::open(&script.transcript).unwrap_or_else(|_| Recorder::none()).for_process(std::process::id());
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let overrides = if profile.exec_overrides_replace_root() && !a.overrides.is_empty() {
        std::mem::take(&mut a.overrides)
    } else {
        [global_overrides, std::mem::take(&mut a.overrides)].concat()
    };
    rec.record(&json!({"event": "launch", "pid": std::process::id(), "version": profile.version.to_string(),
                       "command": "exec", "argv": cli, "overrides": overrides, "codex_home_set": env.contains_key("CODEX_HOME")}));
    let fail = |code: i32, text: String| {
        eprintln!("{text}");
        record_unread_input(&rec);
        rec.record(&json!({"event": "exit", "code": code, "reason": text}));
        code
    };
    if let Err(e) = check_overrides(&overrides) {
        return fail(1, e);
    }
    let home = env
        .get("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| env.get("HOME").map(|h| PathBuf::from(h).join(".codex")))
        .unwrap_or_else(|| PathBuf::from(".codex"));
    let base = match BaseConfig::load(&home, &overrides) {
        Ok(b) => b,
        Err(e) => return fail(1, format!("Error loading config.toml: {e}")),
    };
    let settings = match base.for_thread(None) {
        Ok(s) => s,
        Err(e) => return fail(1, format!("Error loading config.toml: {e}")),
    };
    let key = |k: &str| base.table.get(k).and_then(|v| v.as_str()).map(String::from);
    if key("approval_policy").as_deref() == Some("untrusted") && profile.exec_rejects_untrusted() {
        return fail(1, profile::EXEC_UNTRUSTED_REMOVED.to_string());
    }
    let sandbox = a.sandbox.clone().or_else(|| key("sandbox_mode")).unwrap_or_else(|| "read-only".into());
    let model = a.model.clone().or_else(|| key("model")).unwrap_or_else(|| MODEL.into());
    let cwd = a.cd.clone().map(PathBuf::from).or_else(|| std::env::current_dir().ok()).unwrap_or_default();
    let resumed = match session::find(&script, a.resume.as_ref(), &home, &cwd) {
        Ok(found) => found,
        Err(e) => return fail(1, e),
    };
    // Measured on 0.147.0 and 0.171.0: without a prompt argument exec says
    // "Reading prompt from stdin..."; with one and a stdin that is not a
    // terminal, "Reading additional input from stdin...". Either reads
    // stdin to EOF. How the extra input joins the prompt was not measured,
    // so the fake records it apart.
    // Each stdin line is recorded as the relay records a real CLI's.
    let read_stdin = || {
        let mut text = String::new();
        let _ = std::io::stdin().read_to_string(&mut text);
        text.lines().for_each(|line| rec.record(&json!({"dir": "c2s", "msg": crate::relay::parse(line)})));
        text
    };
    let (prompt, extra) = match a.prompt.as_deref() {
        Some(p) if p != "-" => {
            let extra = (!std::io::stdin().is_terminal()).then(|| {
                eprintln!("Reading additional input from stdin...");
                read_stdin()
            });
            (p.to_string(), extra)
        }
        _ => {
            eprintln!("Reading prompt from stdin...");
            (read_stdin(), None)
        }
    };
    rec.record(&json!({"event": "exec_input", "prompt": prompt, "additional_input": extra, "images": a.images}));
    // Both checked after stdin is read, the prompt first (measured on
    // 0.146.0 and 0.171.0 with an empty stdin; whitespace is taken as empty).
    if prompt.trim().is_empty() {
        return fail(1, NO_PROMPT.into());
    }
    if !a.skip_git_repo_check && !cwd.ancestors().any(|d| d.join(".git").exists()) {
        return fail(1, NOT_TRUSTED.into());
    }
    let thread_id = session::open(&script, resumed, &home, &cwd);
    let mut ev = Events::new(&rec);
    ev.thread_started(&thread_id);
    rec.record(&json!({"event": super::effective::EVENT, "thread": thread_id, "method": "exec", "approval_policy": "never",
                       "sandbox": sandbox, "servers": super::effective::describe(&settings, &base.sources(None, config::THREAD_START))}));
    // Against a custom provider Codex has no metadata for any model name:
    // measured with mock-model on every version and with `model="gpt-5"`
    // on 0.171.0, so the warning item comes every time.
    ev.error_item(&profile::no_model_metadata(&model));
    let servers = start_servers(&profile, &settings, &env, &rec);
    let turn = session::next_turn(&script);
    rec.record(&json!({"event": "turn", "index": turn, "thread_id": thread_id, "input": prompt}));
    ev.turn_started();
    // Real exec turn ids are UUIDs (v7), as are its thread ids.
    let meta = CallMeta::new(&thread_id, &crate::uuid::new_uuid(), &sandbox, now_ms()).in_exec();
    let mut player = Player { profile, rec: &rec, ev, servers, settings, sandbox, meta };
    for action in script.turns.get(turn).map(|t| t.actions.clone()).unwrap_or_default() {
        match action {
            Action::ToolCall { step, server, tool, arguments } => player.tool_call(step, &server, &tool, &arguments),
            // exec has no client to ask; what the real one does with these
            // was not measured, so the fake says so and goes on.
            Action::Request { step, request, .. } => {
                rec.record(&json!({"event": "outcome", "step": step, "method": request.as_str(), "prompted": false, "answer": null, "not_simulated": "exec"}))
            }
            Action::Raw { step, method, .. } => {
                rec.record(&json!({"event": "outcome", "step": step, "method": method, "prompted": false, "answer": null, "not_simulated": "exec"}))
            }
        }
    }
    player.ev.agent_message("Done.");
    player.ev.turn_completed();
    rec.record(&json!({"event": "exit", "code": 0}));
    0
}

/// Whether a transcript's launch record is of a `codex exec` process: the
/// fake says so, a relayed real CLI's argv has `exec` as its subcommand
/// (after any `-c`/`--config` pairs).
pub fn is_exec_launch(launch: &Value) -> bool {
    if launch["command"] == "exec" {
        return true;
    }
    let argv: Vec<&str> = launch["argv"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let mut i = 0;
    while i < argv.len() {
        match argv[i] {
            "-c" | "--config" => i += 2,
            flag if flag.starts_with('-') => i += 1,
            sub => return sub == "exec",
        }
    }
    false
}

/// Input the driver wrote that the CLI never read: the relay in front of a
/// real CLI records it all the same (as its lines arrive), so the fake
/// records what arrives within a moment of its early exit.
fn record_unread_input(rec: &Recorder) {
    let rec = rec.clone();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            rec.record(&json!({"dir": "c2s", "msg": crate::relay::parse(&line)}));
        }
        let _ = done.send(());
    });
    let _ = finished.recv_timeout(std::time::Duration::from_millis(200));
}

/// No prompt argument and nothing on stdin.
const NO_PROMPT: &str = "No prompt provided via stdin.";
/// Outside a git work tree without `--skip-git-repo-check` (a directory
/// trusted in config.toml would pass too: not simulated).
const NOT_TRUSTED: &str = "Not inside a trusted directory and --skip-git-repo-check was not specified.";

/// Each `-c` pair must have a `=` and a value the config accepts; the real
/// CLI's messages (measured on 0.146.0 and 0.171.0, exit 1). The key named
/// is the override's own, which for a scalar setting is where serde points.
/// The two top-level keys exec reads typed, so a value outside these variants
/// is a startup error naming the key (variant lists and their order measured
/// on 0.163.0 for `sandbox_mode` and 0.164.0 for `approval_policy`:
/// recordings/probes/codex/).
#[derive(serde::Deserialize)]
#[allow(dead_code)] // only read to reject what the real CLI rejects
struct PolicyKeys {
    approval_policy: Option<ApprovalPolicy>,
    sandbox_mode: Option<SandboxMode>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
enum ApprovalPolicy {
    Untrusted,
    OnFailure,
    OnRequest,
    Granular(toml::Value),
    Never,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
enum SandboxMode {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

fn check_overrides(overrides: &[String]) -> Result<(), String> {
    for pair in overrides {
        let Some((key, raw)) = pair.split_once('=') else {
            return Err(format!("Error parsing -c overrides: Invalid override (missing '='): {pair}"));
        };
        let mut probe = toml::Table::new();
        config::set_dotted(&mut probe, key.trim(), config::parse_override_value(raw.trim()));
        let table = toml::Value::Table(probe);
        let checked = table.clone().try_into::<Settings>().err().or_else(|| table.try_into::<PolicyKeys>().err());
        if let Some(e) = checked {
            return Err(format!("Error loading config.toml: {}\nin `{}`\n", e.message().trim(), key.trim()));
        }
    }
    Ok(())
}

fn start_servers(profile: &Profile, settings: &Settings, env: &BTreeMap<String, String>, rec: &Recorder) -> BTreeMap<String, McpConnection> {
    let client = profile.mcp_client();
    let mut out = BTreeMap::new();
    for (name, s) in settings.mcp_servers.iter().filter(|(_, s)| s.enabled.unwrap_or(true)) {
        let conn = target(s, env).and_then(|t| McpConnection::connect(&t, env, &client));
        rec.record(&json!({"event": "mcp_startup", "server": name, "status": if conn.is_ok() { "ready" } else { "failed" },
                           "error": conn.as_ref().err()}));
        if let Ok(c) = conn {
            out.insert(name.clone(), c);
        }
    }
    out
}

struct Player<'a> {
    profile: Profile,
    rec: &'a Recorder,
    ev: Events<'a>,
    servers: BTreeMap<String, McpConnection>,
    settings: Settings,
    sandbox: String,
    meta: CallMeta,
}

impl Player<'_> {
    fn tool_call(&mut self, step: usize, server: &str, tool: &str, arguments: &Value) {
        let call_id = format!("call_{step}");
        let known = self.servers.get(server).and_then(|c| c.tool(tool)).map(|t| t.annotations.clone());
        // A tool the model was not given never becomes an item (as in the app-server).
        let Some(annotations) = known else {
            let text = profile::unsupported_call(server, tool);
            self.rec.record(&json!({"event": "outcome", "step": step, "prompted": false, "item_status": null, "model_saw": text, "server": server, "tool": tool}));
            return;
        };
        let id = self.ev.next_id();
        self.ev.emit(json!({"type": "item.started", "item": tool_item(&id, server, tool, arguments, Value::Null, Value::Null, "in_progress")}));
        let mode = self.settings.mcp_servers.get(server).map(|s| s.mode_for(tool)).unwrap_or(config::ApprovalMode::Auto);
        let decision = outcome::decide(&self.profile, &self.sandbox, mode, annotations.as_ref());
        // Before 0.148.0 exec asks for the approval and cancels it at once:
        // the turn has asked for user input (its later calls' turn metadata
        // say so, measured on 0.146.0).
        if decision == ExecDecision::Fail(profile::CANCELLED) {
            self.meta.asked_user();
        }
        let (result, mcp_result) = match decision {
            ExecDecision::Fail(msg) => (Outcome::Failed(msg.into()), Value::Null),
            ExecDecision::Run => self.run_tool(&call_id, server, tool, arguments),
        };
        let (status, item_res, error) = match &result {
            Outcome::Completed(r) => ("completed", item_result(r), Value::Null),
            Outcome::Failed(e) => ("failed", Value::Null, json!({"message": e})),
        };
        self.ev.emit(json!({"type": "item.completed", "item": tool_item(&id, server, tool, arguments, item_res, error.clone(), status)}));
        self.rec.record(&json!({
            "event": "outcome", "step": step, "server": server, "tool": tool, "call_id": call_id, "item_id": id,
            "decision": format!("{decision:?}"), "prompted": false, "answer": null, "persist": null,
            "item_status": status, "item_error": error, "model_saw": model_output(&self.profile, &result), "mcp_result": mcp_result,
        }));
    }

    fn run_tool(&mut self, call_id: &str, server: &str, tool: &str, arguments: &Value) -> (Outcome, Value) {
        let meta = self.meta.for_call(&self.profile, call_id);
        let Some(conn) = self.servers.get_mut(server) else {
            return (Outcome::Failed(profile::unknown_server(server)), Value::Null);
        };
        // exec runs under `never`: a server's own elicitation is declined in
        // the CLI, as app-server does under `never` (measured 2026-12-06).
        let mut decline = |_: &str, _: &Value| json!({"action": "decline"});
        match conn.call_answering(tool, arguments, meta, Some(&mut decline)) {
            Ok(r) => (Outcome::Completed(r.clone()), r),
            Err(e) => (Outcome::Failed(profile::tool_call_error(&e)), Value::Null),
        }
    }
}

