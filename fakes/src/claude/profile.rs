//! What each Claude Code version does, as measured on the real binaries
//! (../shared/PROVIDERS.md and the lab in ../shared/labs/claude). Behaviour
//! is keyed on version thresholds: a version between two measured ones gets
//! the older one's behaviour until it reaches the newer one.

use serde_json::{json, Value};

use crate::mcp_client::CallFailure;
use crate::version::Version;

/// Versions measured on the real binary.
pub const MEASURED: [Version; 3] = [Version::new(2, 1, 266), Version::new(2, 1, 332), Version::new(2, 1, 334)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub version: Version,
}

impl Profile {
    /// Every version-dependent behaviour the fake simulates, by name: two
    /// releases with the same facts behave alike (one behaviour band).
    pub fn facts(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("probes_discover", self.probes_discover()),
            ("reports_permission_decision", self.reports_permission_decision()),
            ("init_names_server_source", self.init_names_server_source()),
            ("defers_mcp_tools", self.defers_mcp_tools()),
            ("simulates_sdk_host", self.simulates_sdk_host()),
            ("init_has_session_fields", self.init_has_session_fields()),
            ("stamps_written_at", self.stamps_written_at()),
            ("flushes_control_requests", self.flushes_control_requests()),
            ("names_hook_refusals", self.names_hook_refusals()),
            ("marks_changed_input", self.marks_changed_input()),
            ("stamps_sdk_events", self.stamps_sdk_events()),
            ("tool_use_meta_names_tool", self.tool_use_meta_names_tool()),
            ("result_has_since_last", self.result_has_since_last()),
            ("absolute_settings_path", self.absolute_settings_path()),
            ("warns_unreadable_settings", self.warns_unreadable_settings()),
        ]
    }

    /// What `--version` prints.
    pub fn version_line(&self) -> String {
        format!("{} (Claude Code)", self.version)
    }

    /// 2.1.332 probes `server/discover` (id "server-discover-probe-1") before
    /// `initialize`; 2.1.266 goes straight to `initialize`.
    pub fn probes_discover(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// `initialize` protocolVersion: 2025-11-25 in both measured versions.
    pub fn protocol_version(&self) -> &'static str {
        "2025-11-25"
    }

    /// Client capabilities in `initialize`: 2.1.266 announces a bare
    /// `elicitation: {}`, 2.1.332 `{form, url}`.
    pub fn client_capabilities(&self) -> Value {
        if self.version.at_least(2, 1, 332) {
            json!({"roots": {"listChanged": true}, "elicitation": {"form": {}, "url": {}}})
        } else {
            json!({"roots": {"listChanged": true}, "elicitation": {}})
        }
    }

    pub fn client_info(&self) -> Value {
        json!({
            "name": "claude-code",
            "title": "Claude Code",
            "version": self.version.to_string(),
            "description": "Anthropic's agentic coding tool",
            "websiteUrl": "https://claude.com/claude-code",
        })
    }

    /// `reason` of the `notifications/cancelled` sent when a call times out.
    pub fn cancel_reason(&self) -> &'static str {
        if self.version.at_least(2, 1, 332) {
            "SdkError: Request timed out"
        } else {
            "McpError: MCP error -32001: Request timed out"
        }
    }

    /// 2.1.332 reports `permission_decision` in `tool_result_meta` for every
    /// call; 2.1.266 only `non_execution_kind` for calls that did not run.
    pub fn reports_permission_decision(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// 2.1.332 names each server's `source` ("dynamic", "user") in init.
    pub fn init_names_server_source(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// 2.1.332 defers MCP tools behind ToolSearch (unless
    /// ENABLE_TOOL_SEARCH=false); an isError result of a deferred tool then
    /// carries a hint with the tool's input schema.
    pub fn defers_mcp_tools(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// 2.1.332 adds a sentence about updatedPermissions to the refusal of an
    /// invalid permission prompt tool answer.
    pub fn invalid_prompt_answer_text(&self) -> &'static str {
        if self.version.at_least(2, 1, 332) {
            "The permission prompt tool returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}. updatedPermissions may hold at most 4096 updates, rules and directories in all."
        } else {
            "The permission prompt tool returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}."
        }
    }

    /// What a gated call gets in `--permission-mode auto` (no classifier in
    /// print mode), the extra fields of its permission_denied event and its
    /// `non_execution_kind`.
    pub fn auto_mode_denial(&self, tool_name: &str) -> (String, Value, &'static str) {
        if self.version.at_least(2, 1, 332) {
            (
                format!("Auto mode is unavailable: its safety check does not run for this session, so {tool_name} was not run. Other actions that need the check will be denied too, and retrying won't help. Finish what you can without them, then tell the user what is blocked and that they can switch to another permission mode."),
                json!({"decision_reason_type": "classifier", "decision_reason_code": "auto_mode_no_check_in_session", "decision_reason": "Classifier unavailable"}),
                "automode-unavailable",
            )
        } else {
            (
                "Auto mode could not evaluate this action and is blocking it for safety — run with --debug for details. This is not a judgment that the action is unsafe. This is usually transient — wait briefly and try this action again as-is; don't rewrite it. If it keeps failing, continue with other tasks that don't require this action and come back to it later. Note: reading files, searching code, and other read-only operations do not require the classifier and can still be used.".to_string(),
                json!({"decision_reason_type": "classifier", "decision_reason": "Auto mode could not evaluate this action and is blocking it for safety — run with --debug for details"}),
                "automode-parsing-error",
            )
        }
    }

    /// SDK host mode (`--input-format stream-json`, control protocol) is
    /// simulated where it was measured: 2.1.332 and 2.1.334, which the
    /// Agent SDKs bundle. 2.1.266 ignores servers delivered in initialize
    /// (no `mcp_servers_applied`, measured); the rest was not measured.
    pub fn simulates_sdk_host(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// The model name init reports when `--model` is not given.
    pub fn default_model(&self) -> &'static str {
        if self.version.at_least(2, 1, 332) {
            "claude-opus-5-5"
        } else {
            "claude-opus-5[1m]"
        }
    }

    /// The model a resumed session reports without `--model`: 2.1.266
    /// drops the `[1m]` context suffix there (measured with `--resume`).
    pub fn resumed_default_model(&self) -> &'static str {
        if self.version.at_least(2, 1, 332) {
            self.default_model()
        } else {
            "claude-opus-5"
        }
    }

    /// The built-in tools init lists, in its order (Task first, then by
    /// name); ToolSearch joins them when MCP tools are deferred.
    pub fn builtin_tools(&self) -> &'static [&'static str] {
        if self.version.at_least(2, 1, 332) {
            &BUILTIN_TOOLS_332
        } else {
            &BUILTIN_TOOLS_266
        }
    }

    /// The skills init lists (also the first slash commands).
    pub fn skills(&self) -> Vec<&'static str> {
        let mut skills = SKILLS.to_vec();
        if self.version.at_least(2, 1, 332) {
            skills.push("plugin-authoring");
        }
        skills
    }

    /// init's `slash_commands`: the skills, then the built-in commands.
    pub fn slash_commands(&self) -> Vec<&'static str> {
        let commands: &[&str] = if self.version.at_least(2, 1, 332) { &COMMANDS_332 } else { &COMMANDS_266 };
        self.skills().into_iter().chain(commands.iter().copied()).collect()
    }

    /// Commands that only work in the terminal UI.
    pub fn terminal_slash_commands(&self) -> &'static [&'static str] {
        if self.version.at_least(2, 1, 332) {
            &["doctor", "color", "focus", "reload-plugins"]
        } else {
            &["doctor", "color", "reload-plugins"]
        }
    }

    /// The SDK protocol capabilities init announces.
    pub fn capabilities(&self) -> Vec<&'static str> {
        if self.version.at_least(2, 1, 334) {
            // 2.1.334 adds lifecycle_idle_v1.
            [&CAPABILITIES_332[..], &["lifecycle_idle_v1"]].concat()
        } else if self.version.at_least(2, 1, 332) {
            CAPABILITIES_332.to_vec()
        } else {
            CAPABILITIES_266.to_vec()
        }
    }

    /// The built-in plugins init lists: none before 2.1.332; 2.1.334 adds
    /// cc-plugin-verbs.
    pub fn builtin_plugins(&self) -> &'static [&'static str] {
        if self.version.at_least(2, 1, 334) {
            &["cc-plugin-agents-md", "cc-plugin-privacy", "cc-plugin-plugin-authoring", "cc-plugin-verbs"]
        } else if self.version.at_least(2, 1, 332) {
            &["cc-plugin-agents-md", "cc-plugin-privacy", "cc-plugin-plugin-authoring"]
        } else {
            &[]
        }
    }

    /// 2.1.332 adds directory, sandbox and display fields to init
    /// (additional_directories, original_cwd, sandbox_enabled, view_mode ...).
    pub fn init_has_session_fields(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// 2.1.334 stamps init and result with the time they were written
    /// (`written_at`, ISO 8601 like `timestamp`).
    pub fn stamps_written_at(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// 2.1.334 marks the control requests it sends to an SDK host for a
    /// hook callback or an SDK MCP server (`hook_callback`, `mcp_message`)
    /// with `"flush": true` beside `request_id`; 2.1.332 has no such field.
    /// can_use_tool has none in either.
    pub fn flushes_control_requests(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// 2.1.334 adds `refused_by: "hook"` to the tool_result_meta of a call
    /// a PreToolUse hook denied; 2.1.332 does not.
    pub fn names_hook_refusals(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// 2.1.334 adds `input_changed: true` to the tool_result_meta of a call
    /// whose input a hook's `updatedInput` replaced; 2.1.332 does not.
    pub fn marks_changed_input(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// 2.1.334 stamps the system events only an SDK host sees
    /// (session_state_changed, the hook_callback_failed warning) with
    /// `written_at`; 2.1.332 does not.
    pub fn stamps_sdk_events(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// 2.1.332 names the MCP tool itself in an assistant message's
    /// `tool_use_meta` besides its display names.
    pub fn tool_use_meta_names_tool(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// 2.1.332's result adds the usage since the last result, its index,
    /// safety stops and the fallback credit, and splits cache creation by
    /// lifetime in the per-model usage.
    pub fn result_has_since_last(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// 2.1.332 names the absolute path of a missing `--settings` file;
    /// 2.1.266 repeats the argument as given.
    pub fn absolute_settings_path(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// 2.1.332 warns on stderr about a settings file that is not JSON;
    /// 2.1.266 ignores it silently. Both run on without it.
    pub fn warns_unreadable_settings(&self) -> bool {
        self.version.at_least(2, 1, 332)
    }

    /// zod's message for a non-object `mcpServers`: 2.1.332 says what it
    /// expected, 2.1.266 only "Invalid input".
    pub fn mcp_servers_type_error(&self, got: &Value) -> String {
        if self.version.at_least(2, 1, 332) {
            let kind = crate::wire::json_kind(got);
            format!("mcpServers: Invalid input: expected record, received {kind}")
        } else {
            "mcpServers: Invalid input".to_string()
        }
    }
}

/// Characters a model-facing tool name keeps; every other UTF-16 unit
/// becomes `_` (both measured versions: `notes.append` -> `notes_append`,
/// `a b` -> `a_b`, an emoji -> `__`).
pub fn keeps_in_tool_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// A server or tool name as Claude Code renames it for the model, the
/// permission rules, the permission prompt tool and stream-json; only the
/// `tools/call` to the MCP server carries the original.
pub fn sanitize_name(name: &str) -> String {
    name.chars().flat_map(|c| if keeps_in_tool_name(c) { vec![c] } else { vec!['_'; c.len_utf16()] }).collect()
}

/// `mcp__<server>__<tool>`, both parts renamed. Two tools of one server
/// that rename alike are one tool: the first the server lists.
pub fn model_tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", sanitize_name(server), sanitize_name(tool))
}

/// 2.1.266's built-in tools, as init lists them.
const BUILTIN_TOOLS_266: [&str; 24] = [
    "Task", "AskUserQuestion", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterPlanMode", "EnterWorktree",
    "ExitPlanMode", "ExitWorktree", "ListAgents", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage",
    "Skill", "TaskOutput", "TaskStop", "WebFetch", "WebSearch", "Workflow", "Write",
];
/// 2.1.332's: Monitor added, TaskOutput gone.
const BUILTIN_TOOLS_332: [&str; 24] = [
    "Task", "AskUserQuestion", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterPlanMode", "EnterWorktree",
    "ExitPlanMode", "ExitWorktree", "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup",
    "SendMessage", "Skill", "TaskStop", "WebFetch", "WebSearch", "Workflow", "Write",
];
/// Built-in tools 2.1.332 defers with the MCP tools (named in a system
/// message; measured in the mock model's request).
pub const DEFERRED_BUILTINS: [&str; 13] = [
    "CronCreate", "CronDelete", "CronList", "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Monitor",
    "NotebookEdit", "SendMessage", "TaskStop", "WebFetch", "WebSearch",
];
/// The tool that loads deferred tools' schemas.
pub const TOOL_SEARCH: &str = "ToolSearch";
/// What ToolSearch answers when nothing matches.
pub const NO_DEFERRED_MATCH: &str = "No matching deferred tools found";
/// The agent types init lists.
pub const AGENTS: [&str; 5] = ["claude", "Explore", "general-purpose", "Plan", "statusline-setup"];
const SKILLS: [&str; 15] = [
    "deep-research", "dataviz", "update-config", "verify", "debug", "code-review", "simplify", "batch",
    "fewer-permission-prompts", "doctor", "loop", "claude-api", "workflow-authoring", "run", "run-skill-generator",
];
const COMMANDS_266: [&str; 26] = [
    "agents", "auto-mode-setup", "autocompact", "clear", "color", "compact", "config", "context", "effort", "fast",
    "heapdump", "init", "mcp", "model", "__remote-workflow", "workflow-launch-exec", "reload-plugins", "reload-skills",
    "rename", "security-review", "usage", "insights", "recap", "goal", "list-agents", "team-onboarding",
];
/// 2.1.332 adds output-style and focus.
const COMMANDS_332: [&str; 28] = [
    "agents", "auto-mode-setup", "autocompact", "clear", "color", "compact", "config", "output-style", "context", "effort",
    "fast", "focus", "heapdump", "init", "mcp", "model", "__remote-workflow", "workflow-launch-exec", "reload-plugins",
    "reload-skills", "rename", "security-review", "usage", "insights", "recap", "goal", "list-agents", "team-onboarding",
];
const CAPABILITIES_266: [&str; 3] = ["interrupt_receipt_v1", "interrupt_cancel_queued_v1", "msg_lifecycle_v1"];
const CAPABILITIES_332: [&str; 23] = [
    "interrupt_receipt_v1", "interrupt_cancel_queued_v1", "interrupt_send_now_v1", "interrupt_requeue_taken_v1",
    "msg_lifecycle_v1", "request_marker_lists_v1", "ask_user_question_unanswered_v1", "lifecycle_wakeup_source_v1",
    "sdk_mcp_tools_list_changed", "sdk_mcp_manifests", "mcp_read_resource_v1", "mcp_tool_ui_meta_v1", "ui_surface_v1",
    "mcp_call_result_not_for_model_v1", "mcp_call_soft_error_result_v1", "mcp_call_check_permissions_v1",
    "voice_call_talk_line_v1", "withdrawn_files_note_v2", "withdrawn_tools_v1", "ui_pane_widget_v1",
    "reload_plugins_refuse_if_busy_v1", "get_usage_detached_v1", "silent_resend_files_v1",
];
/// The SDK protocol capabilities the initialize answer announces (2.1.332).
pub const INITIALIZE_CAPABILITIES: [&str; 8] = [
    "ui_surface_v1", "mcp_call_result_not_for_model_v1", "mcp_call_soft_error_result_v1", "mcp_call_check_permissions_v1",
    "voice_call_talk_line_v1", "ui_pane_widget_v1", "reload_plugins_refuse_if_busy_v1", "get_usage_detached_v1",
];
/// Print mode without an opt-in runs without fast mode.
pub const FAST_MODE_DISABLED_REASON: &str = "sdk_opt_in_required";

// What Claude Code says, the same in both measured versions.

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

#[cfg(test)]
mod tests {
    use super::*;

    /// `facts` names every boolean predicate of the profile, in
    /// order: a predicate left out would hide a behaviour band.
    #[test]
    fn facts_list_every_predicate() {
        let declared = crate::version::bool_predicates(include_str!("profile.rs"));
        let listed: Vec<&str> = Profile { version: MEASURED[0] }.facts().into_iter().map(|(n, _)| n).collect();
        assert_eq!(listed, declared);
    }

    #[test]
    fn thresholds() {
        let old = Profile { version: MEASURED[0] };
        let new = Profile { version: MEASURED[1] };
        assert!(!old.probes_discover() && new.probes_discover());
        assert_eq!(old.client_capabilities()["elicitation"], json!({}));
        assert_eq!(new.client_capabilities()["elicitation"], json!({"form": {}, "url": {}}));
        assert!(Profile { version: Version::new(2, 1, 300) }.invalid_prompt_answer_text().ends_with("string}."));
        assert!(Profile { version: Version::new(2, 2, 0) }.probes_discover());
        assert!(old.builtin_tools().contains(&"TaskOutput") && !new.builtin_tools().contains(&"TaskOutput"));
        assert!(new.builtin_tools().contains(&"Monitor") && !old.builtin_tools().contains(&"Monitor"));
        assert!(new.slash_commands().starts_with(&new.skills()) && new.skills().len() == old.skills().len() + 1);
        assert!(DEFERRED_BUILTINS.iter().all(|t| new.builtin_tools().contains(t)));
    }

    #[test]
    fn model_facing_names_replace_each_utf16_unit_outside_the_set() {
        assert_eq!(model_tool_name("notes", "notes.append"), "mcp__notes__notes_append");
        assert_eq!(model_tool_name("my.srv", "a b"), "mcp__my_srv__a_b");
        assert_eq!(sanitize_name("A-Z_09"), "A-Z_09");
        assert_eq!(sanitize_name("ü-é"), "_-_");
        assert_eq!(sanitize_name("e\u{1F600}x"), "e__x");
    }
}
