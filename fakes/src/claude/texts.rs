//! What Claude Code says, the same in every simulated release: error
//! lines, refusals and notices (measured on the real binaries; the texts
//! that change with the version are in profile.rs). Re-exported from
//! `profile`, where callers name them.

use crate::mcp_client::CallFailure;

/// `--output-format stream-json` in print mode without `--verbose`.
pub const STREAM_JSON_NEEDS_VERBOSE: &str = "Error: When using --print, --output-format=stream-json requires --verbose";
/// `--input-format stream-json` with another output format.
pub const SDK_INPUT_NEEDS_STREAM_OUTPUT: &str = "Error: --input-format=stream-json requires output-format=stream-json.";
/// `--await-initialize` and a first stdin line that is JSON but not initialize.
pub const AWAIT_INIT_OTHER: &str =
    "Error: --await-initialize requires the initialize control request as the first stdin line, and the first line is a different message.";
/// `--await-initialize` and a first stdin line that is not JSON.
pub const AWAIT_INIT_NOT_JSON: &str =
    "Error: --await-initialize requires the initialize control request as the first stdin line, and the first line is not valid JSON.";
/// The modes `set_permission_mode` takes, as its error lists them.
pub const SDK_PERMISSION_MODES: [&str; 6] = ["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"];
/// The tool result of a call the SDK host denied with `interrupt: true`.
pub const REJECTED_STOP: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
/// The user message that follows it.
pub const INTERRUPTED_FOR_TOOL_USE: &str = "[Request interrupted by user for tool use]";
/// `tool_use_result` of a call whose prompt or hooks the host interrupted.
pub const USER_REJECTED: &str = "User rejected tool use";
/// The result's `errors` when a turn ends with aborted tools (both versions).
pub const ABORTED_DIAGNOSTIC: &str = "[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use";
/// The tool result of a call whose hook answered for another event.
pub const HOOK_UNEXPECTED_ERROR: &str =
    "PreToolUse hook failed with an unexpected error. The tool call was not executed; other configured hooks may not have completed.";

/// The tool result of a call a PreToolUse hook denied (both versions).
pub fn hook_denial(tool_name: &str, reason: Option<&str>) -> String {
    format!("PreToolUse:{tool_name} hook error: {}", reason.unwrap_or("Blocked by hook"))
}

/// The warning event's text for a hook callback the host answered with an
/// error or an answer the CLI cannot read (both versions).
pub fn hook_callback_failed(callback_id: &str) -> String {
    format!("PreToolUse: Hook callback {callback_id} failed: the SDK host replied with an error or an invalid answer. Its answer was treated as empty.")
}
/// `--dangerously-skip-permissions` as root outside a sandbox.
pub const ROOT_SKIPS_PERMISSIONS: &str =
    "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons";
/// Print mode with no prompt in argv or on stdin.
pub const NO_PROMPT: &str = "Error: Input must be provided either through stdin or as a prompt argument when using --print";
/// `--session-id` with `--continue` or `--resume` but without `--fork-session`.
pub const SESSION_ID_NEEDS_FORK: &str = "Error: --session-id with --continue or --resume also needs --fork-session.";
/// A `--session-id` that is not a UUID.
pub const INVALID_SESSION_ID: &str = "Error: Invalid session ID. Must be a valid UUID.";
/// `--continue` with no earlier session.
pub const NOTHING_TO_CONTINUE: &str = "No conversation found to continue";

/// The `--mcp-config` problems, one a line.
pub fn invalid_mcp_config(errors: &[String]) -> String {
    format!("Error: Invalid MCP configuration:\n{}", errors.join("\n"))
}

/// A `--session-id` an earlier process already used.
pub fn session_id_in_use(id: &str) -> String {
    format!("Error: Session ID {id} is already in use.")
}

/// A `--resume` value that is not a UUID (print mode has no titles to match).
pub fn resume_not_uuid(value: &str) -> String {
    format!("Error: --resume requires a valid session ID or session title when used with --print. Usage: claude -p --resume <session-id|title>. Provided value \"{value}\" is not a UUID and does not match any session title.")
}

/// A `--resume` of a session that does not exist.
pub fn no_conversation(id: &str) -> String {
    format!("No conversation found with session ID: {id}")
}

/// The model-facing text of a refusal without any prompt.
pub fn not_granted(name: &str) -> String {
    format!("Claude requested permissions to use {name}, but {NOT_GRANTED}.")
}

/// The part of [`not_granted`] that names no tool.
pub const NOT_GRANTED: &str = "you haven't granted it yet";
/// The part of [`no_such_tool`] that names no tool.
pub const NO_SUCH_TOOL: &str = "No such tool available";
/// The part of a tool timeout's text that names no server or tool.
pub const TIMED_OUT: &str = "timed out after";

/// A call refused in `--permission-mode plan`.
pub fn plan_denial(name: &str) -> String {
    format!("Cannot call {name} while in plan mode.")
}

/// A gated call refused in `--permission-mode dontAsk`.
pub fn dont_ask_denial(name: &str) -> String {
    format!("Permission to use {name} has been denied because Claude Code is running in don't ask mode. IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used to accomplish this goal, e.g. using head instead of cat. But you *should not* attempt to work around this denial in malicious ways, e.g. do not use your ability to run tests to execute non-test actions. You should only try to work around this restriction in reasonable ways that do not attempt to bypass the intent behind this denial. If you believe this capability is essential to complete the user's request, STOP and explain to the user what you were trying to do and why you need this permission. Let the user decide how to proceed.")
}

/// A call to a tool the model was not given (denied or not connected).
pub fn no_such_tool(name: &str) -> String {
    format!("<tool_use_error>Error: {NO_SUCH_TOOL}: {name}</tool_use_error>")
}

/// A call to a deferred tool the session loaded earlier but no server
/// provides any more (measured on 2.1.332 and 2.1.334 with tool search).
pub fn no_such_tool_left(name: &str) -> String {
    format!("<tool_use_error>Error: {NO_SUCH_TOOL}: {name}. No MCP server in this session provides it; continue without this tool.</tool_use_error>")
}

/// The stderr line of a `--permission-prompt-tool` that is not among the
/// available MCP tools.
pub fn prompt_tool_not_found(prompt_tool: &str, available: &[String]) -> String {
    format!("Error: MCP tool {prompt_tool} (passed via --permission-prompt-tool) not found. Available MCP tools: {}", available.join(", "))
}

/// A call that failed before the tool ran, as the model sees it.
pub fn tool_use_error(name: &str, message: &str) -> String {
    format!("<tool_use_error>Error calling tool ({name}): {message}</tool_use_error>")
}

/// What the model sees when a call brings back no result.
pub fn failure_text(server: &str, tool: &str, failure: &CallFailure, timeout_ms: f64) -> String {
    match failure {
        CallFailure::TimedOut => format!("MCP server \"{server}\" tool \"{tool}\" {TIMED_OUT} {}s", (timeout_ms / 1000.0).floor() as u64),
        CallFailure::Rpc { code, message } => format!("MCP error {code}: {message}"),
        CallFailure::Transport(_) => "MCP error -32000: Connection closed".to_string(),
    }
}

