//! What Claude Code's init lists (built-in tools, slash commands, SDK
//! capabilities, plugins, session fields), each item with the releases that
//! list it; the profile picks a release's share. Each bound is shown by the
//! init message of recordings/claude/<V>/claude-approve-runs-without-prompt.json,
//! recorded on every release 2.1.266..2.1.334, on both sides of it.

/// The built-in tools init lists, in its order, with the first and last
/// release listing each.
pub(super) const BUILTIN_TOOLS: [(&str, u32, u32); 25] = [
    ("Task", 0, ALWAYS), ("AskUserQuestion", 0, ALWAYS), ("Bash", 0, ALWAYS),
    ("CronCreate", 0, ALWAYS), ("CronDelete", 0, ALWAYS), ("CronList", 0, ALWAYS), ("Edit", 0, ALWAYS),
    ("EnterPlanMode", 0, ALWAYS), ("EnterWorktree", 0, ALWAYS), ("ExitPlanMode", 0, ALWAYS),
    ("ExitWorktree", 0, ALWAYS), ("ListAgents", 0, ALWAYS), ("Monitor", 310, ALWAYS),
    ("NotebookEdit", 0, ALWAYS), ("Read", 0, ALWAYS), ("ReportFindings", 0, ALWAYS),
    ("ScheduleWakeup", 0, ALWAYS), ("SendMessage", 0, ALWAYS), ("Skill", 0, ALWAYS),
    ("TaskOutput", 0, 276), ("TaskStop", 0, ALWAYS), ("WebFetch", 0, ALWAYS), ("WebSearch", 0, ALWAYS),
    ("Workflow", 0, ALWAYS), ("Write", 0, ALWAYS),
];
/// Built-in tools deferred with the MCP tools (2.1.332; named in a system
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
pub(super) const SKILLS: [&str; 15] = [
    "deep-research", "dataviz", "update-config", "verify", "debug", "code-review", "simplify", "batch",
    "fewer-permission-prompts", "doctor", "loop", "claude-api", "workflow-authoring", "run", "run-skill-generator",
];
/// The built-in slash commands after the skills, in init's order, with the
/// first and last release listing each: output-style first in 2.1.269 (not
/// in 2.1.268), focus in 2.1.281 (not in 2.1.280), plugin-types only in
/// 2.1.286 (recordings/claude/<each>/claude-approve-runs-without-prompt.json).
pub(super) const COMMANDS: [(&str, u32, u32); 29] = [
    ("agents", 0, ALWAYS), ("auto-mode-setup", 0, ALWAYS), ("autocompact", 0, ALWAYS), ("clear", 0, ALWAYS),
    ("color", 0, ALWAYS), ("compact", 0, ALWAYS), ("config", 0, ALWAYS), ("output-style", 269, ALWAYS),
    ("context", 0, ALWAYS), ("effort", 0, ALWAYS), ("fast", 0, ALWAYS), ("focus", 281, ALWAYS), ("heapdump", 0, ALWAYS),
    ("init", 0, ALWAYS), ("mcp", 0, ALWAYS), ("model", 0, ALWAYS), ("__remote-workflow", 0, ALWAYS),
    ("workflow-launch-exec", 0, ALWAYS), ("plugin-types", 286, 286), ("reload-plugins", 0, ALWAYS),
    ("reload-skills", 0, ALWAYS), ("rename", 0, ALWAYS), ("security-review", 0, ALWAYS), ("usage", 0, ALWAYS),
    ("insights", 0, ALWAYS), ("recap", 0, ALWAYS), ("goal", 0, ALWAYS), ("list-agents", 0, ALWAYS),
    ("team-onboarding", 0, ALWAYS),
];
/// The last release of an item no release has dropped yet.
pub(super) const ALWAYS: u32 = u32::MAX - 1;
/// The SDK protocol capabilities init announces, in its order, with the
/// first release announcing each (recordings/claude/<it>/claude-approve-runs-without-prompt.json;
/// the release before it, the previous one in `conformance versions claude`, lacks it).
pub(super) const CAPABILITIES: [(&str, u32); 24] = [
    ("interrupt_receipt_v1", 0), ("interrupt_cancel_queued_v1", 0), ("interrupt_send_now_v1", 287),
    ("interrupt_requeue_taken_v1", 307), ("msg_lifecycle_v1", 0), ("request_marker_lists_v1", 293),
    ("ask_user_question_unanswered_v1", 312), ("lifecycle_wakeup_source_v1", 307), ("sdk_mcp_tools_list_changed", 286),
    ("sdk_mcp_manifests", 286), ("mcp_read_resource_v1", 280), ("mcp_tool_ui_meta_v1", 280), ("ui_surface_v1", 286),
    ("mcp_call_result_not_for_model_v1", 301), ("mcp_call_soft_error_result_v1", 331), ("mcp_call_check_permissions_v1", 319),
    ("voice_call_talk_line_v1", 323), ("withdrawn_files_note_v2", 323), ("withdrawn_tools_v1", 330),
    ("ui_pane_widget_v1", 323), ("reload_plugins_refuse_if_busy_v1", 324), ("get_usage_detached_v1", 329),
    ("silent_resend_files_v1", 326), ("lifecycle_idle_v1", 334),
];
/// The built-in plugins init lists, in its order, with the first and last
/// release listing each: agents-md in 2.1.281..2.1.284 (none in 2.1.280),
/// renamed cc-plugin-agents-md in 2.1.285, cc-plugin-plugin-authoring from
/// 2.1.286, cc-plugin-privacy from 2.1.317 (not in 2.1.316), cc-plugin-verbs
/// from 2.1.334 (not in 2.1.332; recordings/claude/<each>/claude-approve-runs-without-prompt.json).
pub(super) const PLUGINS: [(&str, u32, u32); 5] = [
    ("agents-md", 281, 284), ("cc-plugin-agents-md", 285, ALWAYS), ("cc-plugin-privacy", 317, ALWAYS),
    ("cc-plugin-plugin-authoring", 286, ALWAYS), ("cc-plugin-verbs", 334, ALWAYS),
];
/// The session fields init adds, with the first release having each:
/// per_turn_effort_active and view_mode 2.1.281 (not 2.1.280),
/// additional_directories and original_cwd 2.1.301 (not 2.1.300),
/// ultrathink_available 2.1.315 (not 2.1.314), ultrathink_typed_raises
/// 2.1.317 (not 2.1.316), served_by_anthropic 2.1.329 (not 2.1.328),
/// sandbox_enabled 2.1.331 (not 2.1.330; recordings/claude/<each>/claude-approve-runs-without-prompt.json).
pub(super) const SESSION_FIELDS: [(&str, u32); 8] = [
    ("per_turn_effort_active", 281), ("view_mode", 281), ("additional_directories", 301), ("original_cwd", 301),
    ("ultrathink_available", 315), ("ultrathink_typed_raises", 317), ("served_by_anthropic", 329), ("sandbox_enabled", 331),
];
/// The SDK protocol capabilities the initialize answer announces (2.1.332),
/// each once the version's init announces it.
pub const INITIALIZE_CAPABILITIES: [&str; 8] = [
    "ui_surface_v1", "mcp_call_result_not_for_model_v1", "mcp_call_soft_error_result_v1", "mcp_call_check_permissions_v1",
    "voice_call_talk_line_v1", "ui_pane_widget_v1", "reload_plugins_refuse_if_busy_v1", "get_usage_detached_v1",
];
/// Print mode without an opt-in runs without fast mode.
pub const FAST_MODE_DISABLED_REASON: &str = "sdk_opt_in_required";
