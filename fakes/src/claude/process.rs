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

/// A launch read from argv, settings and state, before any turn.
pub struct Prepared {
    pub launch: Launch,
    pub out: Output,
    pub dynamic: Vec<ServerConfig>,
    pub state: State,
    /// Stream-json input: an Agent SDK host drives the session.
    pub sdk: bool,
}

/// Reads the command line, settings and session state; Err is the exit
/// code after the CLI's own error (or `--version`/`--help`, code 0).
pub fn prepare(profile: Profile, script: &Script, rec: Recorder, argv: &[String]) -> Result<Prepared, i32> {
    let opts = match cli::parse(argv) {
        Ok(o) => o,
        Err(e) => return Err(fail(&rec, &e, 1)),
    };
    let format = opts.output_format.clone().unwrap_or_else(|| "text".into());
    let mut out = Output::new(rec.clone(), format);
    if opts.version {
        out.text(&profile.version_line());
        return Err(0);
    }
    if opts.help {
        out.text("Usage: claude [options] [command] [prompt]\n\nClaude Code (fake) - print mode only: claude -p PROMPT");
        return Err(0);
    }
    // The Agent SDKs pass no -p: stream-json input is print mode of its own.
    let sdk = opts.input_format.as_deref() == Some("stream-json");
    if !opts.print && !sdk {
        return Err(fail(&rec, "fake-claude: only print mode (-p/--print) is simulated", 2));
    }
    if sdk && !profile.simulates_sdk_host() {
        // Measured on 2.1.266 and 2.1.325: initialize is answered without
        // mcp_servers_applied and none of its servers connect, so no SDK
        // driver works there; the fake refuses rather than half-simulate it.
        return Err(fail(&rec, &format!("fake-claude: --input-format stream-json (SDK host mode) is simulated from 2.1.326; {} connects none of the servers an initialize request delivers", profile.version), 2));
    }
    if sdk && out.format != "stream-json" {
        return Err(fail(&rec, profile::SDK_INPUT_NEEDS_STREAM_OUTPUT, 1));
    }
    if out.format == "stream-json" && !opts.verbose {
        return Err(fail(&rec, profile::STREAM_JSON_NEEDS_VERBOSE, 1));
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
        Err(lines) => return Err(fail(&rec, &profile::invalid_mcp_config(&lines), 1)),
    };
    let sources = match config::parse_setting_sources(opts.setting_sources.as_deref()) {
        Ok(s) => s,
        Err(e) => return Err(fail(&rec, &e, 1)),
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
        Err(e) => return Err(fail(&rec, &e, 1)),
    };
    for w in &settings.warnings {
        warn(&rec, w);
    }
    let mut rules = settings.rules.clone();
    rules.allow.extend(cli::split_tool_list(&opts.allowed_tools).into_iter().map(|r| Rule::new(r, RuleSource::Cli)));
    rules.deny.extend(cli::split_tool_list(&opts.disallowed_tools).into_iter().map(|r| Rule::new(r, RuleSource::Cli)));
    let fallback = if profile.defaults_to_auto_mode() { "auto" } else { "default" };
    let mode = permission_mode(&opts, settings.default_mode.as_deref(), fallback);
    if mode == "bypassPermissions" && is_root() && env.get("IS_SANDBOX").map(String::as_str) != Some("1") {
        return Err(fail(&rec, profile::ROOT_SKIPS_PERMISSIONS, 1));
    }

    let state: State = script.load_state();
    let session_id = match resolve_session(&opts, &state) {
        Ok(id) => id,
        Err(SessionError { message, result_session }) => {
            let code = fail(&rec, &message, 1);
            if let Some(id) = result_session {
                out.error_result(&id, &message, stream::result_usage(&profile, 0, 0));
            }
            return Err(code);
        }
    };
    // A resumed session still has the deferred tools it loaded.
    let loaded = state.loaded.get(&session_id).cloned().unwrap_or_default();
    let launch = Launch { profile, rec: rec.clone(), env, rules, mode, session_id, opts, cwd, locations, global_config, loaded };
    Ok(Prepared { launch, out, dynamic, state, sdk })
}

/// Print mode: one prompt from argv or stdin, one turn.
pub fn print(p: Prepared, script: Script) -> i32 {
    let Prepared { launch, out, dynamic, mut state, .. } = p;
    let rec = launch.rec.clone();
    let prompt = match launch.opts.positionals.first() {
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
    let (turn, prompt_number) = next_turn(&script, &mut state, &launch.session_id);
    rec.record(&json!({"event": "turn", "index": turn, "session_id": launch.session_id, "prompt": prompt, "permission_mode": launch.mode}));
    let mut session = launch.connect(out, dynamic);
    session.prompt_number = prompt_number;
    session.init(launch.opts.tools.as_deref());
    let actions = script.turns.get(turn).map(|t| t.actions.clone()).unwrap_or_default();
    let played = play(&mut session, actions);
    state.keep_loaded(&launch.session_id, &session.loaded, &script);
    if let Err(fatal) = played {
        return fail(&rec, &fatal, 1);
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

/// What every turn of a process shares: the command line, the config read
/// and the session chosen.
pub struct Launch {
    pub profile: Profile,
    pub rec: Recorder,
    pub env: BTreeMap<String, String>,
    pub rules: super::rules::Rules,
    pub mode: String,
    pub session_id: String,
    pub opts: Options,
    pub cwd: PathBuf,
    pub locations: Locations,
    pub global_config: Value,
    /// The deferred tools this session loaded in earlier processes.
    pub loaded: std::collections::BTreeSet<String>,
}

impl Launch {
    /// Connects the configured servers (`dynamic`: --mcp-config, or the
    /// SDK's initialize request) and makes the session.
    pub fn connect(&self, out: Output, dynamic: Vec<ServerConfig>) -> Session {
        let mut configs: Vec<ServerConfig> = Vec::new();
        if !self.opts.strict_mcp_config {
            configs.extend(config::user_servers(&self.global_config, &self.cwd, &self.env, &self.profile));
        }
        for s in dynamic {
            configs.retain(|o| o.name != s.name);
            configs.push(s);
        }
        // Every character but a letter or digit becomes `-` (measured on
        // both versions: `/tmp/a_b-1/work` -> `-tmp-a-b-1-work`).
        let folder: String = self.cwd.display().to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let project_dir = self.locations.config_dir.join("projects").join(folder);
        let blob_dir = project_dir.join(&self.session_id).join("tool-results");
        let started = Instant::now();
        let servers = Servers::connect(self.profile, configs, &self.env, &self.cwd, &self.rec);
        Session {
            profile: self.profile,
            rec: self.rec.clone(),
            out,
            env: self.env.clone(),
            rules: self.rules.clone(),
            mode: self.mode.clone(),
            session_id: self.session_id.clone(),
            prompt_tool: self.opts.permission_prompt_tool.clone(),
            model: self.opts.model.clone().unwrap_or_else(|| {
                let resumed = self.opts.resume.is_some() || self.opts.continue_session;
                if resumed { self.profile.resumed_default_model() } else { self.profile.default_model() }.to_string()
            }),
            servers,
            denials: Vec::new(),
            api_calls: 0,
            prompt_number: 0,
            tool_uses: 0,
            started,
            blob_dir,
            project_dir,
            cwd: self.cwd.clone(),
            builtins: Vec::new(),
            loaded: self.loaded.clone(),
            host: None,
            interrupted: false,
            last_result_failed: false,
            results: 0,
            hooks: Default::default(),
            hook_stopped: false,
            prompt_id: super::uuid::new_uuid(),
            sdk_pending: Vec::new(),
            sdk_opened: Vec::new(),
            auto_notice_sent: false,
            raised: Vec::new(),
            call_step: 0,
        }
    }
}

/// Takes the script's next turn for this session: (turn index, the
/// prompt's number in the session).
pub fn next_turn(script: &Script, state: &mut State, session_id: &str) -> (usize, usize) {
    let turn = state.next_turn;
    state.next_turn += 1;
    if !state.sessions.iter().any(|s| s == session_id) {
        state.sessions.push(session_id.to_string());
    }
    // A forked session starts its own count (unmeasured).
    let prompt_number = {
        let n = state.prompts.entry(session_id.to_string()).or_default();
        *n += 1;
        *n
    };
    script.save_state(state);
    (turn, prompt_number)
}

/// Plays one turn's scripted actions; Err: the process must stop (exit 1)
/// with this stderr line. A host's deny with interrupt, or a hook's
/// `continue: false`, ends the turn.
pub fn play(session: &mut Session, actions: Vec<Action>) -> Result<(), String> {
    session.raised = crate::script::raised_elicitations(&actions);
    for action in actions {
        if session.interrupted || session.hook_stopped || session.host.as_ref().is_some_and(|h| h.ended().is_some()) {
            break;
        }
        match action {
            Action::ToolCall { step, server, tool, arguments } => session.tool_call(step, &server, &tool, &arguments)?,
            // A server's own elicitation comes from its tool's call.
            Action::Request { raised_by: Some(_), .. } => {}
            Action::Request { step, request, .. } => {
                session.rec.record(&json!({"event": "unsupported", "step": step, "kind": "request", "request": request}));
            }
            Action::Raw { step, method, .. } => {
                session.rec.record(&json!({"event": "unsupported", "step": step, "kind": "raw", "method": method}));
            }
        }
    }
    Ok(())
}

/// How long the fake takes from its result to stopping its servers; the
/// real CLI's exit (a Node process) takes longer than a driver takes to
/// kill it after reading the result.
pub const EXIT_WORK: std::time::Duration = std::time::Duration::from_millis(300);

/// Prints a message on stderr, records it, and gives the exit code.
pub fn fail(rec: &Recorder, message: &str, code: i32) -> i32 {
    warn(rec, message);
    code
}

fn warn(rec: &Recorder, message: &str) {
    eprintln!("{message}");
    rec.record(&json!({"event": "stderr", "text": message}));
}

/// `--dangerously-skip-permissions`, else `--permission-mode`, else the
/// settings' `defaultMode`, else `fallback`; "manual" is reported as "default".
fn permission_mode(opts: &Options, default_mode: Option<&str>, fallback: &str) -> String {
    let valid = |m: &str| m == "default" || cli::PERMISSION_MODES.contains(&m);
    let mode = if opts.dangerously_skip_permissions {
        "bypassPermissions".to_string()
    } else if let Some(m) = &opts.permission_mode {
        m.clone()
    } else {
        default_mode.filter(|m| valid(m)).unwrap_or(fallback).to_string()
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
        assert_eq!(permission_mode(&o, Some("bypassPermissions"), "default"), "bypassPermissions");
        assert_eq!(permission_mode(&o, Some("bogus"), "default"), "default");
        assert_eq!(permission_mode(&o, None, "auto"), "auto");
        let o = cli::parse(&["--permission-mode".into(), "manual".into()]).unwrap();
        assert_eq!(permission_mode(&o, Some("plan"), "default"), "default");
    }
}
