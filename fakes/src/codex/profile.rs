//! What each Codex version does, as measured on the real binaries
//! (../shared/PROVIDERS.md). Behaviour is keyed on version thresholds, each
//! the first release that shows it ("not in Y" names the adjacent release,
//! whose recording or probe lacks it), so every release 0.146.0..0.171.0 maps
//! to the behaviour band it falls in (`conformance versions codex`).

use serde_json::{json, Value};

use crate::mcp_client::ClientProfile;
use crate::version::Version;

/// Versions measured on the real binary; the suite runs one trial per version.
pub const MEASURED: [Version; 5] = [
    Version::new(0, 146, 0),
    Version::new(0, 147, 0),
    Version::new(0, 148, 0),
    Version::new(0, 153, 4),
    Version::new(0, 171, 0),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub version: Version,
}

impl Profile {
    /// Every version-dependent behaviour the fake simulates, by name: two
    /// releases with the same facts behave alike (one behaviour band).
    pub fn facts(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("never_denies_in_cli", self.never_denies_in_cli()),
            ("user_input_has_is_blocking", self.user_input_has_is_blocking()),
            ("command_approval_has_kind", self.command_approval_has_kind()),
            ("turn_diff_after_each_response", self.turn_diff_after_each_response()),
            ("float_priority_breaks", self.float_priority_breaks()),
            ("output_as_input_text_array", self.output_as_input_text_array()),
            ("read_only_wins_over_destructive", self.read_only_wins_over_destructive()),
            ("elicitation_has_tool_name", self.elicitation_has_tool_name()),
            ("elicitation_has_environment_id", self.elicitation_has_environment_id()),
            ("call_meta_has_call_id", self.call_meta_has_call_id()),
            ("call_meta_has_item_id", self.call_meta_has_item_id()),
            ("call_meta_has_session_id", self.call_meta_has_session_id()),
            ("turn_metadata_has_review_flags", self.turn_metadata_has_review_flags()),
            ("turn_metadata_has_codex_version", self.turn_metadata_has_codex_version()),
            ("announces_auth_change", self.announces_auth_change()),
            ("thread_start_lists_disabled_plugins", self.thread_start_lists_disabled_plugins()),
            ("thread_history_paginated", self.thread_history_paginated()),
            ("thread_has_section", self.thread_has_section()),
            ("thread_has_project_id", self.thread_has_project_id()),
            ("thread_names_model", self.thread_names_model()),
            ("thread_has_environments", self.thread_has_environments()),
            ("thread_has_attached_to_thread_id", self.thread_has_attached_to_thread_id()),
            ("startup_status_has_environment_id", self.startup_status_has_environment_id()),
            ("turn_has_root_turn_id", self.turn_has_root_turn_id()),
            ("agent_message_has_delivery", self.agent_message_has_delivery()),
            ("agent_message_has_questions", self.agent_message_has_questions()),
            ("agent_message_has_moderation", self.agent_message_has_moderation()),
            ("items_have_timestamps", self.items_have_timestamps()),
            ("item_completed_has_token_count", self.item_completed_has_token_count()),
            ("tool_item_has_read_only_hint", self.tool_item_has_read_only_hint()),
            ("tool_item_has_app_ui", self.tool_item_has_app_ui()),
            ("tool_item_has_environment", self.tool_item_has_environment()),
            ("resume_warns_full_history", self.resume_warns_full_history()),
            ("resume_reports_collaboration_mode", self.resume_reports_collaboration_mode()),
            ("rollout_records_thread_settings", self.rollout_records_thread_settings()),
            ("rollout_records_resumed_settings", self.rollout_records_resumed_settings()),
            ("rollout_records_token_usage", self.rollout_records_token_usage()),
            ("elicitation_has_tool_annotations", self.elicitation_has_tool_annotations()),
            ("rate_limits_name_normal_model", self.rate_limits_name_normal_model()),
            ("reports_read_state", self.reports_read_state()),
            ("exec_rejects_untrusted", self.exec_rejects_untrusted()),
            ("exec_overrides_replace_root", self.exec_overrides_replace_root()),
            ("exec_turn_metadata_has_trigger", self.exec_turn_metadata_has_trigger()),
        ]
    }

    /// Every other version-dependent answer of the profile, by name and
    /// shown as text: a change in one starts a behaviour band as a changed
    /// fact does.
    pub fn values(&self) -> Vec<(&'static str, String)> {
        // Without the version, which every release changes.
        let client = crate::mcp_client::ClientProfile { version: String::new(), ..self.mcp_client() };
        vec![
            ("command_rejected", self.command_rejected("<command>", "<why>")),
            ("aborted_by_user", self.aborted_by_user()),
            ("mcp_client", format!("{client:?}")),
        ]
    }

    /// What `--version` prints.
    pub fn version_line(&self) -> String {
        format!("codex-cli {}", self.version)
    }

    /// A call that needs approval under `never` fails in the CLI instead of
    /// sending the elicitation: first in 0.148.0 (not in 0.147.0, the release
    /// before it; recordings/drivers/reference-codex-exec/codex/0.148.0/prompt-tool-always-asks.json).
    pub fn never_denies_in_cli(&self) -> bool {
        self.version.at_least(0, 148, 0)
    }

    /// item/tool/requestUserInput says `isBlocking`: first in 0.147.0 (not in
    /// 0.146.1, the release before it; recordings/labs/codex/<V>/
    /// request-kinds.json user_input_feature and user_input_plan).
    pub fn user_input_has_is_blocking(&self) -> bool {
        self.version.at_least(0, 147, 0)
    }

    /// item/commandExecution/requestApproval says `kind: "command"`: first in
    /// 0.150.0 (not in 0.149.1, the release before it; recordings/codex/
    /// 0.149.1/command-requests-go-to-host.json and recordings/codex/0.150.0/
    /// command-requests-go-to-host.json).
    pub fn command_approval_has_kind(&self) -> bool {
        self.version.at_least(0, 150, 0)
    }

    /// turn/diff/updated, the turn's diff so far once a patch of it was
    /// applied, follows every model response: up to 0.169.1; from 0.171.0
    /// (the release after it) only the turn's last (recordings/codex/
    /// 0.169.1/file-change-requests-go-to-host.json and recordings/codex/
    /// 0.171.0/file-change-requests-go-to-host.json; with a patch accepted
    /// before a tool call, recordings/drivers/accept-commands/codex/0.146.1/
    /// file-change-requests-go-to-host.json and recordings/drivers/
    /// accept-commands/codex/0.171.0/file-change-requests-go-to-host.json).
    pub fn turn_diff_after_each_response(&self) -> bool {
        !self.version.at_least(0, 171, 0)
    }

    /// What the model is told of a command the client refused (`why`): the command
    /// is named up to 0.152.1, not from 0.153.0 (the release after it;
    /// recordings/codex/0.152.1/command-requests-go-to-host.json and
    /// recordings/codex/0.153.0/command-requests-go-to-host.json).
    pub fn command_rejected(&self, command: &str, why: &str) -> String {
        let named = if self.version.at_least(0, 153, 0) { String::new() } else { format!(" for `{command}`") };
        format!(r#"exec_command failed{named}: CreateProcess {{ message: "Rejected(\"{why}\")" }}"#)
    }

    /// What the model is shown, at the thread's next turn, of a command or
    /// patch whose approval the client cancelled: "aborted by user after
    /// <secs>s" up to 0.149.1, the wall time first and then "aborted by user"
    /// from 0.150.0 (the release after it; recordings/labs/codex/0.149.1/
    /// request-kinds.json and recordings/labs/codex/0.150.0/request-kinds.json,
    /// `command_cancel`).
    pub fn aborted_by_user(&self) -> String {
        if self.version.at_least(0, 150, 0) { "Wall time: 0.0000 seconds\naborted by user".into() } else { "aborted by user after 0.0s".into() }
    }

    /// A float `annotations.priority` in a result block fails the item with
    /// "Unexpected response type" (recordings/drivers/bridge-keeps-annotations/
    /// codex/<V>/bridged-results-model-facing-once.json): in 0.146.0 and
    /// 0.146.1, not in 0.147.0 and 0.148.0, again first in 0.149.0 (not in
    /// 0.148.0, the release before it), last in 0.162.1 (not in 0.163.0).
    pub fn float_priority_breaks(&self) -> bool {
        let v = self.version;
        !v.at_least(0, 163, 0) && !(v.at_least(0, 147, 0) && !v.at_least(0, 149, 0))
    }

    /// The model gets an array of input_text parts (before: one string with the
    /// blocks as JSON, annotations kept): first in 0.151.0 (not in 0.150.1, the
    /// release before it; recordings/codex/0.151.0/bridged-results-model-facing-once.json).
    pub fn output_as_input_text_array(&self) -> bool {
        self.version.at_least(0, 151, 0)
    }

    /// `{readOnlyHint:true, destructiveHint:true}` runs without a prompt: first
    /// in 0.169.0 (not in 0.168.0, the release before it; recordings/codex/
    /// 0.168.0/codex-read-only-destructive-asks-before-0-169.json and
    /// 0.169.0/codex-read-only-destructive-runs-from-0-169.json).
    pub fn read_only_wins_over_destructive(&self) -> bool {
        self.version.at_least(0, 169, 0)
    }

    /// Elicitation `_meta.tool_name`: first in 0.167.2 (not in 0.166.0, the
    /// release before it; recordings/codex/0.167.2/prompt-tool-always-asks.json).
    pub fn elicitation_has_tool_name(&self) -> bool {
        self.version.at_least(0, 167, 2)
    }

    /// Elicitation params carry `environmentId`: first in 0.171.0 (not in
    /// 0.169.1, the release before it; recordings/codex/0.171.0/prompt-tool-always-asks.json).
    pub fn elicitation_has_environment_id(&self) -> bool {
        self.version.at_least(0, 171, 0)
    }

    /// tools/call `_meta` carries `callId`: first in 0.148.0 (not in 0.147.0, the
    /// release before it; recordings/codex/0.148.0/prompt-tool-always-asks.json).
    pub fn call_meta_has_call_id(&self) -> bool {
        self.version.at_least(0, 148, 0)
    }

    /// tools/call `_meta` carries `itemId`: first in 0.151.0 (not in 0.150.1, the
    /// release before it; recordings/codex/0.151.0/prompt-tool-always-asks.json).
    pub fn call_meta_has_item_id(&self) -> bool {
        self.version.at_least(0, 151, 0)
    }

    /// tools/call `_meta` carries `sessionId` and `windowId`: first in 0.156.0
    /// (not in 0.155.1, the release before it; recordings/codex/0.156.0/prompt-tool-always-asks.json).
    pub fn call_meta_has_session_id(&self) -> bool {
        self.version.at_least(0, 156, 0)
    }

    /// `x-codex-turn-metadata` names `sandbox_mode` and the auto-review and node
    /// REPL flags: first in 0.148.0 (not in 0.147.0, the release before it;
    /// recordings/codex/0.148.0/prompt-tool-always-asks.json).
    pub fn turn_metadata_has_review_flags(&self) -> bool {
        self.version.at_least(0, 148, 0)
    }

    /// `x-codex-turn-metadata` names `codex_version`: first in 0.154.0 (not in
    /// 0.153.4, the release before it; recordings/codex/0.154.0/prompt-tool-always-asks.json).
    pub fn turn_metadata_has_codex_version(&self) -> bool {
        self.version.at_least(0, 154, 0)
    }

    /// Announces the experimental MCP capability `codex/auth-change` to stdio
    /// servers (not over HTTP): first in 0.154.0 (not in 0.153.4, the release
    /// before it; recordings/codex/0.154.0/prompt-tool-always-asks.json).
    pub fn announces_auth_change(&self) -> bool {
        self.version.at_least(0, 154, 0)
    }

    /// thread/start's result lists `disabledPluginIds`: first in 0.156.0 (not in
    /// 0.155.1, the release before it; recordings/codex/0.156.0/prompt-tool-always-asks.json).
    pub fn thread_start_lists_disabled_plugins(&self) -> bool {
        self.version.at_least(0, 156, 0)
    }

    /// A thread's `historyMode` is "paginated" ("legacy" before): first in
    /// 0.151.0 (not in 0.150.1, the release before it;
    /// recordings/codex/0.151.0/prompt-tool-always-asks.json).
    pub fn thread_history_paginated(&self) -> bool {
        self.version.at_least(0, 151, 0)
    }

    /// A thread carries `section` and `sectionEnteredAt` (`isPinned` before):
    /// first in 0.147.0 (not in 0.146.1, the release before it;
    /// recordings/codex/0.147.0/prompt-tool-always-asks.json).
    pub fn thread_has_section(&self) -> bool {
        self.version.at_least(0, 147, 0)
    }

    /// A thread carries `projectId`: first in 0.149.0 (not in 0.148.0, the release
    /// before it; recordings/codex/0.149.0/prompt-tool-always-asks.json).
    pub fn thread_has_project_id(&self) -> bool {
        self.version.at_least(0, 149, 0)
    }

    /// A thread names its `model` and `reasoningEffort`: first in 0.153.0 (not in
    /// 0.152.1, the release before it; recordings/codex/0.153.0/prompt-tool-always-asks.json).
    pub fn thread_names_model(&self) -> bool {
        self.version.at_least(0, 153, 0)
    }

    /// A thread carries `environments`, `originator` and `daybreakEnabled`: first
    /// in 0.154.0 (not in 0.153.4, the release before it;
    /// recordings/codex/0.154.0/prompt-tool-always-asks.json).
    pub fn thread_has_environments(&self) -> bool {
        self.version.at_least(0, 154, 0)
    }

    /// A thread carries `attachedToThreadId`: first in 0.169.0 (not in 0.168.0,
    /// the release before it; recordings/codex/0.169.0/prompt-tool-always-asks.json).
    pub fn thread_has_attached_to_thread_id(&self) -> bool {
        self.version.at_least(0, 169, 0)
    }

    /// mcpServer/startupStatus/updated carries `environmentId`: first in 0.171.0
    /// (not in 0.169.1, the release before it; recordings/codex/0.171.0/prompt-tool-always-asks.json).
    pub fn startup_status_has_environment_id(&self) -> bool {
        self.version.at_least(0, 171, 0)
    }

    /// A turn names its `rootTurnId`: first in 0.162.0 (not in 0.161.0, the
    /// release before it; recordings/codex/0.162.0/prompt-tool-always-asks.json).
    pub fn turn_has_root_turn_id(&self) -> bool {
        self.version.at_least(0, 162, 0)
    }

    /// An agentMessage item carries `delivery`: first in 0.149.0 (not in 0.148.0,
    /// the release before it; recordings/codex/0.149.0/prompt-tool-always-asks.json).
    pub fn agent_message_has_delivery(&self) -> bool {
        self.version.at_least(0, 149, 0)
    }

    /// An agentMessage item carries `questions`: first in 0.153.0 (not in
    /// 0.152.1, the release before it; recordings/codex/0.153.0/prompt-tool-always-asks.json).
    pub fn agent_message_has_questions(&self) -> bool {
        self.version.at_least(0, 153, 0)
    }

    /// An agentMessage item carries `moderation`: first in 0.169.0 (not in
    /// 0.168.0, the release before it; recordings/codex/0.169.0/prompt-tool-always-asks.json).
    pub fn agent_message_has_moderation(&self) -> bool {
        self.version.at_least(0, 169, 0)
    }

    /// Items carry their own `startedAtMs` and `completedAtMs`: first in 0.166.0
    /// (not in 0.165.0, the release before it; recordings/codex/0.166.0/prompt-tool-always-asks.json).
    pub fn items_have_timestamps(&self) -> bool {
        self.version.at_least(0, 166, 0)
    }

    /// item/completed carries `contentTokenCount`: first in 0.168.0 (not in
    /// 0.167.2, the release before it; recordings/codex/0.168.0/prompt-tool-always-asks.json).
    pub fn item_completed_has_token_count(&self) -> bool {
        self.version.at_least(0, 168, 0)
    }

    /// An mcpToolCall item carries the tool's `readOnlyHint`: first in 0.147.0
    /// (not in 0.146.1, the release before it; recordings/codex/0.147.0/prompt-tool-always-asks.json).
    pub fn tool_item_has_read_only_hint(&self) -> bool {
        self.version.at_least(0, 147, 0)
    }

    /// An mcpToolCall item carries `mcpAppUi`: first in 0.156.0 (not in 0.155.1,
    /// the release before it; recordings/codex/0.156.0/prompt-tool-always-asks.json).
    pub fn tool_item_has_app_ui(&self) -> bool {
        self.version.at_least(0, 156, 0)
    }

    /// An mcpToolCall item carries `environmentId`: first in 0.171.0 (not in
    /// 0.169.1, the release before it; recordings/codex/0.171.0/prompt-tool-always-asks.json).
    pub fn tool_item_has_environment(&self) -> bool {
        self.version.at_least(0, 171, 0)
    }

    /// Paginated threads warn on every thread/resume that asks for the full
    /// history: first in 0.151.0 (not in 0.150.1, the release before it;
    /// recordings/codex/0.151.0/relaunch-keeps-policies.json).
    pub fn resume_warns_full_history(&self) -> bool {
        self.thread_history_paginated()
    }

    /// thread/resume's result reports the thread's `collaborationMode`: first in
    /// 0.156.0 (not in 0.155.1, the release before it;
    /// recordings/codex/0.156.0/relaunch-keeps-policies.json).
    pub fn resume_reports_collaboration_mode(&self) -> bool {
        self.version.at_least(0, 156, 0)
    }

    /// The rollout's first turn records `thread_settings_applied` after its turn
    /// context (seen in the resume cursors' ordinals): first in 0.163.0 (not in
    /// 0.162.1, the release before it; recordings/codex/0.163.0/relaunch-keeps-policies.json).
    pub fn rollout_records_thread_settings(&self) -> bool {
        self.version.at_least(0, 163, 0)
    }

    /// Each thread/resume of a written rollout records `thread_settings_applied`,
    /// a turn follows or not (seen in the resume cursors' ordinals; two resumes
    /// before a turn: recordings/codex/0.155.1/gen-21-293-min.json): first in 0.155.0
    /// (not in 0.154.0, the release before it), last in 0.164.0 (not in
    /// 0.165.0, the release after it); recordings/codex/<V>/call-scoped-servers.json.
    pub fn rollout_records_resumed_settings(&self) -> bool {
        self.version.at_least(0, 155, 0) && !self.version.at_least(0, 165, 0)
    }

    /// The rollout records a `token_usage_record` line with each model
    /// response (seen in the resume cursors' ordinals): first in 0.153.0 (not
    /// in 0.152.1, the release before it;
    /// recordings/codex/0.153.0/relaunch-keeps-policies.json).
    pub fn rollout_records_token_usage(&self) -> bool {
        self.version.at_least(0, 153, 0)
    }

    /// The approval elicitation carries `_meta.tool_annotations`: first in
    /// 0.167.2 (not in 0.166.0, the release before it;
    /// recordings/codex/0.167.2/prompt-tool-always-asks.json).
    pub fn elicitation_has_tool_annotations(&self) -> bool {
        self.version.at_least(0, 167, 2)
    }

    /// account/rateLimits/updated names `normalModelSlug`: first in 0.154.0 (not
    /// in 0.153.4, the release before it; recordings/codex/0.154.0/prompt-tool-always-asks.json).
    pub fn rate_limits_name_normal_model(&self) -> bool {
        self.version.at_least(0, 154, 0)
    }

    /// Each turn's end reports the thread's read state (its first unread turn)
    /// to clients with experimentalApi (not without it): first in 0.163.0 (not in
    /// 0.162.1, the release before it;
    /// recordings/codex/0.163.0/bridged-results-model-facing-once.json).
    pub fn reports_read_state(&self) -> bool {
        self.version.at_least(0, 163, 0)
    }

    /// `codex exec` refuses `approval_policy = "untrusted"` (exit 1, before any
    /// event): first in 0.149.0 (not in 0.148.0, the release before it;
    /// recordings/drivers/exec-untrusted/codex/0.149.0/codex-exec-denies-unapproved-calls-under-never.json).
    pub fn exec_rejects_untrusted(&self) -> bool {
        self.version.at_least(0, 149, 0)
    }

    /// `codex [-c ...] exec -c ...`: the exec subcommand's own `-c` pairs
    /// replace the root-level ones (from 0.164.0 both apply): last in 0.163.0
    /// (not in 0.164.0, the release after it;
    /// recordings/probes/codex/0.163.0/exec-overrides-after-root.json, where
    /// only the exec pair's bad value is reported, and
    /// recordings/probes/codex/0.164.0/exec-overrides-after-root.json, where
    /// the root pair's is).
    pub fn exec_overrides_replace_root(&self) -> bool {
        !self.version.at_least(0, 164, 0)
    }

    /// exec's `x-codex-turn-metadata` names `turn_trigger: "exec"`: first in
    /// 0.156.0 (not in 0.155.1, the release before it;
    /// recordings/drivers/reference-codex-exec/codex/0.156.0/relaunch-keeps-policies.json); `thread_source: "user"` in every release.
    pub fn exec_turn_metadata_has_trigger(&self) -> bool {
        self.version.at_least(0, 156, 0)
    }

    /// How Codex introduces itself to MCP servers: titled "Codex", with the
    /// CLI's own version.
    pub fn mcp_client(&self) -> ClientProfile {
        ClientProfile {
            name: "codex-mcp-client",
            title: Some("Codex"),
            version: self.version.to_string(),
            protocol_version: "2025-06-18",
            capabilities: json!({"elicitation": {"form": {}, "url": {}}}),
            stdio_experimental: self.announces_auth_change().then(|| json!({"codex/auth-change": {}})),
            probe_discover: false,
        }
    }
}

// What Codex says, the same in every measured version.

/// The item error of a call that needs approval under `never` (0.148+).
pub const NEVER_DENIAL: &str = "MCP tool call requires approval, but approval policy is never";
/// The item error of a call whose approval the client declined.
pub const REJECTED: &str = "user rejected MCP tool call";
/// The item error of a call whose approval the client cancelled.
pub const CANCELLED: &str = "user cancelled MCP tool call";
/// The item error of a result with a float `annotations.priority` (see
/// [`Profile::float_priority_breaks`]; the same text in every release that fails).
pub fn unexpected_response_type(server: &str, tool: &str) -> String {
    tool_call_error(&format!("tool call failed for `{server}/{tool}`\n\nCaused by:\n    Unexpected response type"))
}
/// What the model's function call output starts with.
pub const OUTPUT_HEADER: &str = "Wall time: 0.0010 seconds\nOutput:";
/// What `codex exec` prints before exiting 1 when `approval_policy` is
/// "untrusted" (0.153.4, 0.163.0 and 0.171.0).
pub const EXEC_UNTRUSTED_REMOVED: &str = "Error: approval_policy = \"untrusted\" is no longer supported; remove this setting";
/// `codex exec resume <uuid>` of a thread with no rollout (exit 1, nothing
/// on stdout; measured on 0.146.0, 0.148.0, 0.153.4 and 0.171.0).
pub fn exec_no_rollout(thread_id: &str) -> String {
    format!("Error: thread/resume: thread/resume failed: {} (code -32600)", no_rollout(thread_id))
}
/// A request before `initialize`.
pub const NOT_INITIALIZED: &str = "Not initialized";
/// A second `initialize`.
pub const ALREADY_INITIALIZED: &str = "Already initialized";
/// thread/resume without a thread id.
pub const MISSING_THREAD_ID: &str = "Invalid request: missing field `threadId`";
/// A granular approval policy from a client that did not opt in.
pub const GRANULAR_NEEDS_EXPERIMENTAL_API: &str = "askForApproval.granular requires experimentalApi capability";
/// turn/start before any thread.
pub const NO_ACTIVE_THREAD: &str = "no active thread: call thread/start first";

/// The startup configWarning when no `bwrap` is on PATH (every measured version).
pub const NO_BUBBLEWRAP: &str = "Codex could not find bubblewrap on PATH. Install bubblewrap with your OS package manager. See the sandbox prerequisites: https://developers.openai.com/codex/concepts/sandboxing#prerequisites. Codex will use the bundled bubblewrap in the meantime.";
/// The deprecationNotice on thread/resume of a paginated thread.
pub const FULL_HISTORY_DEPRECATED: &str = "Full-history hydration is deprecated for paginated threads; use `excludeTurns: true`, then page with `thread/turns/list` and `thread/items/list`.";
/// The context window Codex assumes for a model it has no metadata for.
pub const FALLBACK_CONTEXT_WINDOW: u64 = 258_400;

/// The per-turn warning for a model Codex has no metadata for.
pub fn no_model_metadata(model: &str) -> String {
    format!("Model metadata for `{model}` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.")
}

/// A client line that is not JSON.
pub fn parse_error(error: &str) -> String {
    format!("Parse error: {error}")
}

/// A request method the app-server does not have.
pub fn unknown_method(method: &str) -> String {
    format!("Invalid request: unknown variant `{method}`")
}

/// An `approvalPolicy` that is neither a known string nor `{granular}`.
pub fn unknown_approval_policy(policy: &Value) -> String {
    format!("Invalid request: unknown approval policy {policy}")
}

/// thread/resume of a thread that never had a turn.
pub fn no_rollout(thread_id: &str) -> String {
    format!("no rollout found for thread id {thread_id}")
}

/// turn/start for a thread other than the active one.
pub fn thread_not_found(thread_id: &Value) -> String {
    format!("thread not found: {thread_id}")
}

/// A server or tool name as the model sees it (every measured version): each
/// character outside [A-Za-z0-9_] becomes `_` (`notes.append` ->
/// `notes_append`, `my-srv` -> `my_srv`), in namespace `mcp__<server>`.
/// Everything else (per-tool `approval_mode` keys, the elicitation, the item,
/// `tools/call`) keeps the original name; `tools.notes_append` in config
/// does not match `notes.append`. Tools that rename alike get a 12-hex
/// suffix each (not simulated: the fake has no model-facing tool list).
pub fn model_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// The table "always" approval writes into CODEX_HOME/config.toml; a tool
/// name that is not a bare key is quoted (`tools."notes.append"`).
pub fn approved_tool_table(server: &str, tool: &str) -> String {
    let key = |k: &str| {
        if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            k.to_string()
        } else {
            toml::Value::String(k.to_string()).to_string()
        }
    };
    format!("\n[mcp_servers.{}.tools.{}]\napproval_mode = \"approve\"\n", key(server), key(tool))
}

/// How the model's view of a call to a tool it was not given begins.
pub const UNSUPPORTED_CALL: &str = "unsupported call";

/// What the model sees of a call to a tool it was not given.
pub fn unsupported_call(server: &str, tool: &str) -> String {
    format!("{UNSUPPORTED_CALL}: mcp__{server}__{tool}")
}

/// The item error of a call to a server that did not start.
pub fn unknown_server(server: &str) -> String {
    format!("unknown MCP server '{server}'")
}

/// The item error of a call the server failed.
pub fn tool_call_error(error: &str) -> String {
    format!("tool call error: {error}")
}

/// The startup error of an HTTP server whose token variable is unset.
pub fn missing_bearer_token(var: &str) -> String {
    format!("environment variable `{var}` for the bearer token is not set")
}

#[cfg(test)]
mod name_tests {
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
    fn values_list_every_other_answer() {
        let declared = crate::version::value_functions(include_str!("profile.rs"));
        let listed: Vec<&str> = Profile { version: MEASURED[0] }.values().into_iter().map(|(n, _)| n).collect();
        assert_eq!(listed, declared);
    }

    #[test]
    fn model_names_and_persisted_keys() {
        assert_eq!(model_name("notes.append"), "notes_append");
        assert_eq!(model_name("my-srv"), "my_srv");
        assert_eq!(model_name("e\u{1F600}x"), "e_x");
        assert_eq!(approved_tool_table("notes", "notes.append"), "\n[mcp_servers.notes.tools.\"notes.append\"]\napproval_mode = \"approve\"\n");
        assert_eq!(approved_tool_table("a", "t"), "\n[mcp_servers.a.tools.t]\napproval_mode = \"approve\"\n");
    }
}
