//! The executable at the binary path a driver is given: a small `/bin/sh`
//! script that starts the fake with this trial's script, or the real CLI
//! behind the recording relay and pointed at the mock model.

use std::path::Path;
use std::process::{Command, Stdio};

use super::providers::FakeCommand;
use crate::plan::ToolSearch;

/// The scenario reaches the fake through this wrapper at the binary path the
/// driver is given, so nothing depends on the driver passing env through;
/// `preamble` is shell text run first (the trial's environment).
pub fn write_fake(path: &Path, fake: &FakeCommand, script: &Path, preamble: &str) -> std::io::Result<()> {
    let args = ["--run".to_string(), script.display().to_string()];
    write_exec_script(path, preamble, fake, &args)
}

/// What fake and real Claude Code both get in their environment (shell
/// text): a (mock) API key, which the real one needs to reach the mock model
/// and both report in init, the trial's tool search mode (off is
/// ENABLE_TOOL_SEARCH=false, on is the CLI's default, unset) and the
/// scenario's MCP tool timeout, if it sets one.
pub fn claude_env(mode: ToolSearch, tool_timeout_ms: Option<u64>) -> String {
    let search = match mode {
        ToolSearch::Off => "export ENABLE_TOOL_SEARCH=false",
        ToolSearch::On => "unset ENABLE_TOOL_SEARCH",
    };
    let timeout = match tool_timeout_ms {
        Some(ms) => format!("export MCP_TOOL_TIMEOUT={ms}"),
        None => "unset MCP_TOOL_TIMEOUT".to_string(),
    };
    format!("export ANTHROPIC_API_KEY=sk-ant-mock\n{search}\n{timeout}\n")
}

/// A stand-in CLI for providers the fakes do not simulate: it appends a
/// launch record and fails.
pub fn write_launch_recorder(path: &Path, transcript: &Path) -> std::io::Result<()> {
    let target = shell_quote(&transcript.display().to_string());
    install(path, &format!("#!/bin/sh\necho '{{\"event\":\"launch\"}}' >> {target}\nexit 1\n"))
}

/// The `-c` settings the wrapper gives real Codex, by key (the fidelity
/// comparison leaves them out of the driver's arguments): the mock model,
/// and the feature that lets the model ask the user in a Default-mode turn
/// (request_user_input, a `user_input` request step), the feature that
/// offers the model request_permissions (a `permissions` request step), and
/// no warning that an under-development feature is on.
pub const CODEX_WRAPPER_KEYS: [&str; 6] = [
    "model_provider",
    "model",
    "model_providers.mock",
    "features.default_mode_request_user_input",
    "features.request_permissions_tool",
    "suppress_unstable_features_warning",
];

/// Real Codex, pointed at the mock model with `-c` (the driver owns
/// config.toml), behind the recording relay.
pub fn write_real_codex(path: &Path, relay: &FakeCommand, transcript: &Path, codex: &Path, model_base: &str) -> std::io::Result<()> {
    let provider = format!(
        "{{name=\"mock\",base_url=\"{model_base}\",wire_api=\"responses\",env_key=\"MOCK_API_KEY\",request_max_retries=0,stream_max_retries=0}}"
    );
    let values = ["\"mock\"", "\"mock-model\"", &provider, "true", "true", "true"];
    let overrides: Vec<String> = CODEX_WRAPPER_KEYS.iter().zip(values).flat_map(|(key, value)| ["-c".to_string(), format!("{key}={value}")]).collect();
    let mut line = vec![shell_quote(&relay.program.display().to_string())];
    line.extend(relay.prefix.iter().chain(&relayed(transcript, codex)).map(|a| shell_quote(a)));
    let (line, overrides) = (line.join(" "), overrides.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" "));
    // `codex exec -c ...` drops the root-level `-c` pairs through 0.163.0, so
    // for exec ours go after the subcommand, beside the driver's.
    install(
        path,
        &format!(
            "#!/bin/sh\nexport MOCK_API_KEY=mock-key NO_COLOR=1 RUST_LOG=warn RUST_BACKTRACE=0\n\
             if [ \"$1\" = exec ]; then shift; exec {line} exec {overrides} \"$@\"; fi\n\
             exec {line} {overrides} \"$@\"\n"
        ),
    )
}

/// A real Claude Code binary, the mock model's base URL, the HOME to
/// isolate it in, and the harness's own HTTP servers (`own`), reached
/// directly; any other HTTP server in `--mcp-config` is the driver's,
/// reached through the relay's recording proxy.
pub struct RealClaude<'a> {
    pub program: &'a Path,
    pub model_base: &'a str,
    pub home: &'a Path,
    pub own: &'a [String],
}

/// Real Claude Code: the mock model by environment, an isolated HOME, the
/// trial's environment (`env`, from [`claude_env`]), behind the relay.
pub fn write_real_claude(path: &Path, relay: &FakeCommand, transcript: &Path, claude: &RealClaude, env: &str) -> std::io::Result<()> {
    let preamble = format!(
        "export ANTHROPIC_BASE_URL={} HOME={} CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
         DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1\n{}",
        shell_quote(claude.model_base),
        shell_quote(&claude.home.display().to_string()),
        env,
    );
    std::fs::create_dir_all(claude.home)?;
    let mut args: Vec<String> = claude.own.iter().flat_map(|u| ["--own-url".to_string(), u.clone()]).collect();
    args.extend(relayed(transcript, claude.program));
    write_exec_script(path, &preamble, relay, &args)
}

/// Relay arguments: record into `transcript`, run `program`.
fn relayed(transcript: &Path, program: &Path) -> Vec<String> {
    vec!["--log".into(), transcript.display().to_string(), "--".into(), program.display().to_string()]
}

/// A single-quoted shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// An executable `/bin/sh` script at `path` that runs `preamble` (already
/// shell text), then execs `command` with `args` and its own arguments.
fn write_exec_script(path: &Path, preamble: &str, command: &FakeCommand, args: &[String]) -> std::io::Result<()> {
    let mut line = vec![shell_quote(&command.program.display().to_string())];
    line.extend(command.prefix.iter().chain(args).map(|a| shell_quote(a)));
    install(path, &format!("#!/bin/sh\n{preamble}exec {} \"$@\"\n", line.join(" ")))
}

/// Writes an executable file that no descriptor open for writing outlives:
/// a `cp` child writes it. Written here, it would race with other trials'
/// threads starting processes, whose children inherit our write descriptor
/// until they exec, and running the file meanwhile fails with "Text file
/// busy" (seen with parallel trials).
fn install(path: &Path, content: &str) -> std::io::Result<()> {
    let staged = path.with_extension("staged");
    std::fs::write(&staged, content)?;
    let copied = Command::new("cp").arg(&staged).arg(path).stderr(Stdio::null()).status();
    std::fs::remove_file(&staged)?;
    if !copied?.success() {
        return Err(std::io::Error::other(format!("cp could not write {}", path.display())));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}
