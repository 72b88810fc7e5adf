//! One `claude -p` process: checks the command line and config like the real
//! CLI, picks the session, connects the MCP servers, plays this process's
//! turn of the script and prints the chosen output format.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::{json, Value};

use super::cli::{self, Options};
use super::config::{self, Locations, ServerConfig, SettingsInput};
use super::output::Output;
use super::profile::{self, Profile};
use super::resume::{resolve_session, SessionError, State};
use super::rules::{Rule, RuleSource};
use super::servers::Servers;
use super::session::Session;
use super::stream;
use crate::script::{Action, Script};
use crate::wire::Recorder;

/// Longest prompt read from stdin.
const MAX_STDIN_PROMPT: u64 = 16 * 1024 * 1024;

pub fn run(profile: Profile, script: Script, rec: Recorder, argv: &[String]) -> i32 {
    let opts = match cli::parse(argv) {
        Ok(o) => o,
        Err(e) => return fail(&rec, &e, 1),
    };
    let format = opts.output_format.clone().unwrap_or_else(|| "text".into());
    let mut out = Output::new(rec.clone(), format);
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

    let mut state: State = script.load_state();
    let session_id = match resolve_session(&opts, &state) {
        Ok(id) => id,
        Err(SessionError { message, result_session }) => {
            let code = fail(&rec, &message, 1);
            if let Some(id) = result_session {
                out.error_result(&id, &message, stream::result_usage(&profile, 0, 0));
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
    // A forked session starts its own count (unmeasured).
    let prompt_number = {
        let n = state.prompts.entry(session_id.clone()).or_default();
        *n += 1;
        *n
    };
    script.save_state(&state);
    rec.record(&json!({"event": "turn", "index": turn, "session_id": session_id, "prompt": prompt, "permission_mode": mode}));

    let mut configs: Vec<ServerConfig> = Vec::new();
    if !opts.strict_mcp_config {
        configs.extend(config::user_servers(&global_config, &cwd, &env, &profile));
    }
    for s in dynamic {
        configs.retain(|o| o.name != s.name);
        configs.push(s);
    }
    let project_dir = locations.config_dir.join("projects").join(cwd.display().to_string().replace(['/', '.'], "-"));
    let blob_dir = project_dir.join(&session_id).join("tool-results");
    let started = Instant::now();
    let servers = Servers::connect(profile, configs, &env, &cwd, &rec);
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
        servers,
        denials: Vec::new(),
        api_calls: 0,
        prompt_number,
        tool_uses: 0,
        started,
        blob_dir,
        project_dir,
        cwd,
        builtins: Vec::new(),
        loaded: Default::default(),
    };
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
    // The real CLI prints its result, then works through its exit before it
    // kills its servers (without EOF): a driver that kills it once it has
    // read the result leaves them to read EOF (measured on both versions,
    // 2026-12-03), one that waits for it sees them killed.
    session.finish();
    std::thread::sleep(EXIT_WORK);
    session.servers.stop();
    0
}

/// How long the fake takes from its result to stopping its servers; the
/// real CLI's exit (a Node process) takes longer than a driver takes to
/// kill it after reading the result.
const EXIT_WORK: std::time::Duration = std::time::Duration::from_millis(300);

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_sources() {
        let o = cli::parse(&["-p".into(), "x".into()]).unwrap();
        assert_eq!(permission_mode(&o, Some("bypassPermissions")), "bypassPermissions");
        assert_eq!(permission_mode(&o, Some("bogus")), "default");
        let o = cli::parse(&["--permission-mode".into(), "manual".into()]).unwrap();
        assert_eq!(permission_mode(&o, Some("plan")), "default");
    }
}
