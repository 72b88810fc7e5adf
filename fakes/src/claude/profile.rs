//! What each Claude Code version does, as measured on the real binaries
//! (../shared/PROVIDERS.md and the lab in ../shared/labs/claude). Behaviour
//! is keyed on version thresholds, each the first release that shows it
//! (every release 2.1.266..2.1.334 recorded; "not in Y" names the release
//! before it, whose recording lacks it).

use serde_json::{json, Value};

use crate::version::Version;

/// Versions measured on the real binary.
/// 2.1.301 stands for the releases that run print mode in auto mode by
/// default (`defaults_to_auto_mode`), which a driver must override.
pub const MEASURED: [Version; 4] = [Version::new(2, 1, 266), Version::new(2, 1, 301), Version::new(2, 1, 332), Version::new(2, 1, 334)];

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
            ("probes_discover_stdio", self.probes_discover_stdio()),
            ("announces_elicitation_modes", self.announces_elicitation_modes()),
            ("discover_announces_elicitation_modes", self.discover_announces_elicitation_modes()),
            ("prefixes_url_refusal", self.prefixes_url_refusal()),
            ("reports_permission_decision", self.reports_permission_decision()),
            ("init_names_server_source", self.init_names_server_source()),
            ("defers_mcp_tools", self.defers_mcp_tools()),
            ("defaults_to_auto_mode", self.defaults_to_auto_mode()),
            ("simulates_sdk_host", self.simulates_sdk_host()),
            ("prefixes_sdk_message_ids", self.prefixes_sdk_message_ids()),
            ("stamps_written_at", self.stamps_written_at()),
            ("flushes_control_requests", self.flushes_control_requests()),
            ("names_refusers", self.names_refusers()),
            ("marks_changed_input", self.marks_changed_input()),
            ("stamps_sdk_events", self.stamps_sdk_events()),
            ("tool_use_meta_names_tool", self.tool_use_meta_names_tool()),
            ("result_has_since_last", self.result_has_since_last()),
            ("result_has_index", self.result_has_index()),
            ("result_counts_safety_stops", self.result_counts_safety_stops()),
            ("usage_has_fallback_credit", self.usage_has_fallback_credit()),
            ("splits_cache_creation", self.splits_cache_creation()),
            ("absolute_settings_path", self.absolute_settings_path()),
            ("warns_unreadable_settings", self.warns_unreadable_settings()),
            ("explains_unloaded_settings", self.explains_unloaded_settings()),
            ("typed_mcp_servers_error", self.typed_mcp_servers_error()),
        ]
    }

    /// Every other version-dependent answer of the profile (texts, lists),
    /// by name and shown as text: a change in one starts a behaviour band
    /// as a changed fact does.
    pub fn values(&self) -> Vec<(&'static str, String)> {
        // Without the version, which every release changes.
        let mut client_info = self.client_info();
        client_info["version"] = Value::Null;
        vec![
            ("protocol_version", self.protocol_version().to_string()),
            ("client_capabilities", self.client_capabilities().to_string()),
            ("discover_capabilities", self.discover_capabilities().to_string()),
            ("client_info", client_info.to_string()),
            ("cancel_reason", self.cancel_reason().to_string()),
            ("invalid_prompt_answer_text", self.invalid_prompt_answer_text().to_string()),
            ("auto_mode_denial", self.auto_mode_denial("T", "M")),
            ("auto_mode_notice", format!("{:?}", self.auto_mode_notice("H"))),
            ("default_model", self.default_model().to_string()),
            ("resumed_default_model", self.resumed_default_model().to_string()),
            ("builtin_tools", self.builtin_tools().join(",")),
            ("skills", self.skills().join(",")),
            ("slash_commands", self.slash_commands().join(",")),
            ("terminal_slash_commands", self.terminal_slash_commands().join(",")),
            ("capabilities", self.capabilities().join(",")),
            ("initialize_capabilities", self.initialize_capabilities().join(",")),
            ("builtin_plugins", self.builtin_plugins().join(",")),
            ("init_session_fields", self.init_session_fields().join(",")),
            ("mcp_servers_type_error", self.mcp_servers_type_error(&json!(5))),
        ]
    }

    /// What `--version` prints.
    pub fn version_line(&self) -> String {
        format!("{} (Claude Code)", self.version)
    }

    /// Probes an HTTP server with `server/discover` (id
    /// "server-discover-probe-1") before `initialize`; first in 2.1.274 (not
    /// in 2.1.273, the release before it;
    /// recordings/claude/2.1.274/claude-call-scoped-servers.json).
    pub fn probes_discover(&self) -> bool {
        self.version.at_least(2, 1, 274)
    }

    /// Probes a stdio server the same way; first in 2.1.292 (not in 2.1.291,
    /// the release before it; recordings/claude/2.1.292/claude-approve-runs-without-prompt.json).
    pub fn probes_discover_stdio(&self) -> bool {
        self.version.at_least(2, 1, 292)
    }

    /// `initialize` protocolVersion: 2025-11-25 in every release 2.1.266..2.1.334.
    pub fn protocol_version(&self) -> &'static str {
        "2025-11-25"
    }

    /// `initialize` announces `elicitation: {form, url}` instead of a bare
    /// `{}`; first in 2.1.287 (not in 2.1.286, the release before it;
    /// recordings/claude/2.1.287/claude-approve-runs-without-prompt.json).
    pub fn announces_elicitation_modes(&self) -> bool {
        self.version.at_least(2, 1, 287)
    }

    /// The `server/discover` probe's client capabilities announce
    /// `elicitation: {form, url}`; first in 2.1.281 (not in 2.1.280, the
    /// release before it; recordings/claude/2.1.281/claude-bearer-secret-stays-in-environment.json).
    pub fn discover_announces_elicitation_modes(&self) -> bool {
        self.version.at_least(2, 1, 281)
    }

    /// The CLI's refusal of a URL-mode elicitation (before
    /// announces_elicitation_modes) is worded "MCP error -32602: ..."; not
    /// in 2.1.274 (lab runs on 2.1.274..2.1.276 and 2.1.286), seen in 2.1.273
    /// (recordings/claude/2.1.273/gen-21-4-min.json, a shrunk differential case).
    pub fn prefixes_url_refusal(&self) -> bool {
        !self.version.at_least(2, 1, 274)
    }

    /// Client capabilities in `initialize` (see announces_elicitation_modes).
    pub fn client_capabilities(&self) -> Value {
        capabilities_with_modes(self.announces_elicitation_modes())
    }

    /// Client capabilities in the `server/discover` probe's `_meta`.
    pub fn discover_capabilities(&self) -> Value {
        capabilities_with_modes(self.discover_announces_elicitation_modes())
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

    /// `reason` of the `notifications/cancelled` sent when a call times out:
    /// "SdkError: ..." first in 2.1.274 (not in 2.1.273, the release before
    /// it; recordings/claude/<V>/claude-approved-call-times-out-once.json, a
    /// stdio call outliving MCP_TOOL_TIMEOUT). The lab once saw 2.1.268..2.1.273
    /// cancel a second time ("AbortError: The operation was aborted.", a
    /// per-server `timeout` in --mcp-config); the recordings of 2.1.268 and
    /// 2.1.273 show one cancellation, so none is simulated.
    pub fn cancel_reason(&self) -> &'static str {
        if self.version.at_least(2, 1, 274) {
            "SdkError: Request timed out"
        } else {
            "McpError: MCP error -32001: Request timed out"
        }
    }

    /// Reports `permission_decision` in `tool_result_meta` for every call
    /// (before: only `non_execution_kind` for calls that did not run); first
    /// in 2.1.293 (not in 2.1.292, the release before it;
    /// recordings/claude/2.1.293/claude-approve-runs-without-prompt.json).
    pub fn reports_permission_decision(&self) -> bool {
        self.version.at_least(2, 1, 293)
    }

    /// Names each server's `source` ("dynamic", "user") in init; first in
    /// 2.1.274 (not in 2.1.273, the release before it;
    /// recordings/claude/2.1.274/claude-approve-runs-without-prompt.json).
    pub fn init_names_server_source(&self) -> bool {
        self.version.at_least(2, 1, 274)
    }

    /// Defers MCP tools behind ToolSearch (unless ENABLE_TOOL_SEARCH=false);
    /// an isError result of a deferred tool then carries a hint with the
    /// tool's input schema. First in 2.1.304 (not in 2.1.303, the release
    /// before it; recordings/claude/2.1.304+tool-search/claude-approve-runs-without-prompt.json).
    pub fn defers_mcp_tools(&self) -> bool {
        self.version.at_least(2, 1, 304)
    }

    /// The refusal of an invalid permission prompt tool answer adds a
    /// sentence about updatedPermissions; first in 2.1.295 (not in 2.1.294,
    /// the release before it; recordings/drivers/prompt-answer-free-text/
    /// claude/<both>/claude-prompt-and-auto-approve.json).
    pub fn invalid_prompt_answer_text(&self) -> &'static str {
        if self.version.at_least(2, 1, 295) {
            "The permission prompt tool returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}. updatedPermissions may hold at most 4096 updates, rules and directories in all."
        } else {
            "The permission prompt tool returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}."
        }
    }

    /// What a gated call gets in auto mode, where print mode has no
    /// classifier to ask (its `non_execution_kind` is automode-unavailable,
    /// and no permission_denied event is sent). "Auto mode is unavailable
    /// ..." first in 2.1.319 (not in 2.1.318, the release before it); before
    /// it the model's full name (`[1m]` kept) says it is unavailable
    /// (recordings/drivers/print-mode-auto/claude/<both>/claude-approve-runs-without-prompt.json).
    pub fn auto_mode_denial(&self, tool_name: &str, model: &str) -> String {
        if self.version.at_least(2, 1, 319) {
            format!("Auto mode is unavailable: its safety check does not run for this session, so {tool_name} was not run. Other actions that need the check will be denied too, and retrying won't help. Finish what you can without them, then tell the user what is blocked and that they can switch to another permission mode.")
        } else {
            format!("{model} is temporarily unavailable, so auto mode cannot determine the safety of {tool_name} right now. Wait a moment and then try this action again. If it keeps failing, continue with other tasks that don't require this action and come back to it later. Note: reading files, searching code, and other read-only operations do not require the classifier and can still be used.")
        }
    }

    /// Auto mode's notice (a system/informational event, once per process),
    /// naming the API's `host` (ANTHROPIC_BASE_URL): whether it comes at the
    /// first call the classifier must judge (else at the first tool use),
    /// and the event. The billing notice first in 2.1.278 (not in 2.1.277,
    /// the release before it), last in 2.1.318; from 2.1.319 the notice
    /// that no server-side check runs (recordings/drivers/print-mode-auto/
    /// claude/<each>/claude-approve-runs-without-prompt.json).
    pub fn auto_mode_notice(&self, host: &str) -> Option<(bool, Value)> {
        let event = |content: String| json!({"type": "system", "subtype": "informational", "content": content, "isMeta": false, "level": "warning"});
        if self.version.at_least(2, 1, 319) {
            let mut e = event(format!("Auto mode can't check actions in this session. Its safety check runs on the server, and your requests go through {host}, which doesn't pass it through. Nobody can be asked to approve actions in this session, so every action that needs the check is refused. To run these actions, use another permission mode. To use auto mode, ask whoever runs {host} to pass Claude Code's server-side safety check through: https://code.claude.com/docs/en/permission-modes#server-side-classifier-review"));
            e["tag"] = json!("auto_mode_no_server_check");
            Some((true, e))
        } else if self.version.at_least(2, 1, 278) {
            Some((false, event(format!("We're changing auto mode to no longer charge for classifier requests in Claude Code. However, this session isn't eligible because your requests go through {host}, which isn't compatible with this update. Nothing breaks: auto mode keeps working, and its classifier requests are billed as before. To fix it and access the new version of auto mode, ask your gateway to implement: https://code.claude.com/docs/en/auto-mode-classifier-billing"))))
        } else {
            None
        }
    }

    /// Print mode without `--permission-mode` or a settings `defaultMode`
    /// runs in auto mode; first in 2.1.285 (not in 2.1.284, the release
    /// before it), last in 2.1.301 (not in 2.1.302; recordings/drivers/
    /// print-mode-unnamed/claude/<each>/claude-approve-runs-without-prompt.json,
    /// the mutant that names no mode: the reference names "default").
    pub fn defaults_to_auto_mode(&self) -> bool {
        self.between(285, 301)
    }

    /// SDK host mode (`--input-format stream-json`, control protocol): the
    /// CLI connects the servers an initialize request delivers
    /// (`mcp_servers_applied`); first in 2.1.326 (not in 2.1.325, the release
    /// before it, which answers initialize but connects none, so no driver
    /// runs there; recordings/drivers/reference-claude-sdk/claude/2.1.326/).
    /// The Agent SDKs and their shims run it from 2.1.332, which they bundle.
    pub fn simulates_sdk_host(&self) -> bool {
        self.version.at_least(2, 1, 326)
    }

    /// The JSON-RPC ids of the `mcp_message`s to an SDK server are strings,
    /// one random 8-hex prefix per run before the number (`"6d78251c:2"`;
    /// the progressToken stays the number): last in 2.1.326 (not in 2.1.327,
    /// the release after it; claude-bridged-results-model-facing-once.json in
    /// recordings/drivers/reference-claude-sdk/claude/2.1.326 and 2.1.327).
    pub fn prefixes_sdk_message_ids(&self) -> bool {
        !self.version.at_least(2, 1, 327)
    }

    /// The model name init reports when `--model` is not given:
    /// claude-opus-5-5[1m] first in 2.1.280 (not in 2.1.278, the release
    /// before it), claude-opus-5-5 first in 2.1.285 (not in 2.1.284;
    /// recordings/claude/<both>/claude-approve-runs-without-prompt.json).
    pub fn default_model(&self) -> &'static str {
        if self.version.at_least(2, 1, 285) {
            "claude-opus-5-5"
        } else if self.version.at_least(2, 1, 280) {
            "claude-opus-5-5[1m]"
        } else {
            "claude-opus-5[1m]"
        }
    }

    /// The model a resumed session reports without `--model`: before 2.1.271
    /// the `[1m]` context suffix is dropped; from 2.1.271 (not in 2.1.270,
    /// the release before it; recordings/claude/2.1.271/claude-call-scoped-servers.json)
    /// it keeps the default model. (While the driver killed the CLI right
    /// after its result, 2.1.266..2.1.270 kept the suffix in some runs; a
    /// CLI left to exit by itself drops it every time.)
    pub fn resumed_default_model(&self) -> &'static str {
        if self.version.at_least(2, 1, 271) {
            self.default_model()
        } else {
            "claude-opus-5"
        }
    }

    /// The built-in tools init lists, in its order (Task first, then by
    /// name); ToolSearch joins them when MCP tools are deferred. TaskOutput
    /// last in 2.1.276 (gone in 2.1.277), Monitor first in 2.1.310 (not in
    /// 2.1.309; recordings/claude/<each>/claude-approve-runs-without-prompt.json).
    pub fn builtin_tools(&self) -> Vec<&'static str> {
        BUILTIN_TOOLS.iter().filter(|(_, from, until)| self.between(*from, *until)).map(|(t, _, _)| *t).collect()
    }

    /// Whether this version is in `from..=until` (releases as 2.1.x patches).
    fn between(&self, from: u32, until: u32) -> bool {
        self.version.at_least(2, 1, from) && (until == ALWAYS || !self.version.at_least(2, 1, until + 1))
    }

    /// The skills init lists (also the first slash commands); the
    /// plugin-authoring skill first in 2.1.286 (not in 2.1.285;
    /// recordings/claude/2.1.286/claude-approve-runs-without-prompt.json).
    pub fn skills(&self) -> Vec<&'static str> {
        let mut skills = SKILLS.to_vec();
        if self.version.at_least(2, 1, 286) {
            skills.push("plugin-authoring");
        }
        skills
    }

    /// init's `slash_commands`: the skills, then the built-in commands
    /// (each from the release that first lists it, see COMMANDS).
    pub fn slash_commands(&self) -> Vec<&'static str> {
        let commands = COMMANDS.iter().filter(|(_, from, until)| self.between(*from, *until)).map(|(c, _, _)| *c);
        self.skills().into_iter().chain(commands).collect()
    }

    /// Commands that only work in the terminal UI; focus first in 2.1.281
    /// (not in 2.1.280; recordings/claude/2.1.281/claude-approve-runs-without-prompt.json).
    pub fn terminal_slash_commands(&self) -> &'static [&'static str] {
        if self.version.at_least(2, 1, 281) {
            &["doctor", "color", "focus", "reload-plugins"]
        } else {
            &["doctor", "color", "reload-plugins"]
        }
    }

    /// The SDK protocol capabilities init announces, each from the release
    /// that first lists it (see CAPABILITIES).
    pub fn capabilities(&self) -> Vec<&'static str> {
        CAPABILITIES.iter().filter(|(_, from)| self.version.at_least(2, 1, *from)).map(|(c, _)| *c).collect()
    }

    /// The SDK protocol capabilities the initialize answer announces: those
    /// of INITIALIZE_CAPABILITIES this version's init announces (measured on
    /// 2.1.326..2.1.334).
    pub fn initialize_capabilities(&self) -> Vec<&'static str> {
        let all = self.capabilities();
        INITIALIZE_CAPABILITIES.iter().copied().filter(|c| all.contains(c)).collect()
    }

    /// The built-in plugins init lists, each in the releases that list it
    /// (see PLUGINS).
    pub fn builtin_plugins(&self) -> Vec<&'static str> {
        PLUGINS.iter().filter(|(_, from, until)| self.between(*from, *until)).map(|(p, _, _)| *p).collect()
    }

    /// The session fields init adds (directories, sandbox, display ...),
    /// each from the release that first has it (see SESSION_FIELDS).
    pub fn init_session_fields(&self) -> Vec<&'static str> {
        SESSION_FIELDS.iter().filter(|(_, from)| self.version.at_least(2, 1, *from)).map(|(f, _)| *f).collect()
    }

    /// Stamps init and result with the time they were written (`written_at`,
    /// ISO 8601 like `timestamp`); first in 2.1.334 (not in 2.1.332, the
    /// release before it; recordings/claude/2.1.334/claude-approve-runs-without-prompt.json).
    pub fn stamps_written_at(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// Marks the control requests it sends to an SDK host for a hook
    /// callback or an SDK MCP server (`hook_callback`, `mcp_message`) with
    /// `"flush": true` beside `request_id` (can_use_tool never); first in
    /// 2.1.334 (not in 2.1.332, the release before it;
    /// recordings/drivers/reference-claude-sdk/claude/2.1.334/claude-bridged-results-model-facing-once.json).
    pub fn flushes_control_requests(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// Adds `refused_by` to the tool_result_meta of a call a PreToolUse hook
    /// ("hook") or auto mode ("auto_mode") refused; first in 2.1.334 (not in
    /// 2.1.332, the release before it; recordings/drivers/print-mode-auto/
    /// claude/2.1.334/claude-approve-runs-without-prompt.json, and the hook's
    /// in recordings/drivers/sdk-hook-denies-mcp/claude/<V>/claude-approve-runs-without-prompt.json).
    pub fn names_refusers(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// Adds `input_changed: true` to the tool_result_meta of a call whose
    /// input a hook's `updatedInput` replaced; first in 2.1.334 (not in
    /// 2.1.332, the release before it;
    /// recordings/drivers/reference-claude-sdk/claude/2.1.334/claude-sdk-host-edit-reaches-server.json).
    pub fn marks_changed_input(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// Stamps the system events only an SDK host sees (session_state_changed,
    /// the hook_callback_failed warning) with `written_at`; first in 2.1.334
    /// (not in 2.1.332, the release before it; session_state_changed in
    /// recordings/drivers/claude-agent-sdk-py/claude/<both>/claude-approve-runs-without-prompt.json).
    pub fn stamps_sdk_events(&self) -> bool {
        self.version.at_least(2, 1, 334)
    }

    /// Names the MCP tool itself (`tool_name`) in an assistant message's
    /// `tool_use_meta` besides its display names; first in 2.1.299 (not in
    /// 2.1.296, the release before it;
    /// recordings/claude/2.1.299/claude-approve-runs-without-prompt.json).
    pub fn tool_use_meta_names_tool(&self) -> bool {
        self.version.at_least(2, 1, 299)
    }

    /// The result adds `model_usage_since_last_result`; first in 2.1.309
    /// (not in 2.1.308, the release before it;
    /// recordings/claude/2.1.309/claude-approve-runs-without-prompt.json).
    pub fn result_has_since_last(&self) -> bool {
        self.version.at_least(2, 1, 309)
    }

    /// The result adds `result_index`; first in 2.1.268 (not in 2.1.267, the
    /// release before it; recordings/claude/2.1.268/claude-approve-runs-without-prompt.json).
    pub fn result_has_index(&self) -> bool {
        self.version.at_least(2, 1, 268)
    }

    /// The result adds `safety_stops`; first in 2.1.292 (not in 2.1.291, the
    /// release before it; recordings/claude/2.1.292/claude-approve-runs-without-prompt.json).
    pub fn result_counts_safety_stops(&self) -> bool {
        self.version.at_least(2, 1, 292)
    }

    /// The result's `usage` adds `fallback_credit`; first in 2.1.285 (not in
    /// 2.1.284, the release before it;
    /// recordings/claude/2.1.285/claude-approve-runs-without-prompt.json).
    pub fn usage_has_fallback_credit(&self) -> bool {
        self.version.at_least(2, 1, 285)
    }

    /// The per-model usage splits cache creation by lifetime
    /// (`cacheCreationEphemeral1h/5mInputTokens`); first in 2.1.311 (not in
    /// 2.1.310, the release before it;
    /// recordings/claude/2.1.311/claude-approve-runs-without-prompt.json).
    pub fn splits_cache_creation(&self) -> bool {
        self.version.at_least(2, 1, 311)
    }

    /// Names the absolute path of a missing `--settings` file (before: the
    /// argument as given); first in 2.1.284 (not in 2.1.283, the release
    /// before it; recordings/probes/claude/<both>/settings-missing.json).
    pub fn absolute_settings_path(&self) -> bool {
        self.version.at_least(2, 1, 284)
    }

    /// Warns on stderr about a settings file that is not JSON (before: silent;
    /// both run on without it); first in 2.1.299 (not in 2.1.296, the
    /// release before it; recordings/probes/claude/<both>/settings-not-json.json).
    pub fn warns_unreadable_settings(&self) -> bool {
        self.version.at_least(2, 1, 299)
    }

    /// The unreadable-settings warning says what stays in effect and how to
    /// fix it (before: "These settings files did not load ... Each loads
    /// again once the problem listed for it is fixed:"); first in 2.1.330
    /// (not in 2.1.329, the release before it;
    /// recordings/probes/claude/<both>/settings-not-json.json).
    pub fn explains_unloaded_settings(&self) -> bool {
        self.version.at_least(2, 1, 330)
    }

    /// zod names what a non-object `mcpServers` should be (before: only
    /// "Invalid input"); first in 2.1.285 (not in 2.1.284, the release before
    /// it; recordings/probes/claude/<both>/mcp-servers-not-object.json).
    pub fn typed_mcp_servers_error(&self) -> bool {
        self.version.at_least(2, 1, 285)
    }

    /// zod's message for a non-object `mcpServers` (see typed_mcp_servers_error).
    pub fn mcp_servers_type_error(&self, got: &Value) -> String {
        if self.typed_mcp_servers_error() {
            let kind = crate::wire::json_kind(got);
            format!("mcpServers: Invalid input: expected record, received {kind}")
        } else {
            "mcpServers: Invalid input".to_string()
        }
    }
}

/// MCP client capabilities, elicitation with or without its modes.
fn capabilities_with_modes(modes: bool) -> Value {
    if modes {
        json!({"roots": {"listChanged": true}, "elicitation": {"form": {}, "url": {}}})
    } else {
        json!({"roots": {"listChanged": true}, "elicitation": {}})
    }
}

/// Characters a model-facing tool name keeps; every other UTF-16 unit
/// becomes `_` (2.1.266 and 2.1.332: `notes.append` -> `notes_append`,
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

// What init lists, by release: inventory.rs.
use super::inventory::*;
pub use super::inventory::{AGENTS, DEFERRED_BUILTINS, FAST_MODE_DISABLED_REASON, INITIALIZE_CAPABILITIES, NO_DEFERRED_MATCH, TOOL_SEARCH};

// What Claude Code says, the same in every release: texts.rs.
pub use super::texts::*;

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
    fn values_list_every_other_answer() {
        let declared = crate::version::value_functions(include_str!("profile.rs"));
        let listed: Vec<&str> = Profile { version: MEASURED[0] }.values().into_iter().map(|(n, _)| n).collect();
        assert_eq!(listed, declared);
    }

    #[test]
    fn thresholds() {
        let old = Profile { version: MEASURED[0] };
        let new = Profile { version: MEASURED[2] };
        assert!(!old.probes_discover() && new.probes_discover());
        assert_eq!(old.client_capabilities()["elicitation"], json!({}));
        assert_eq!(new.client_capabilities()["elicitation"], json!({"form": {}, "url": {}}));
        let at = |patch| Profile { version: Version::new(2, 1, patch) };
        assert!(at(294).invalid_prompt_answer_text().ends_with("string}."));
        assert!(!at(295).invalid_prompt_answer_text().ends_with("string}."));
        assert!(!at(273).probes_discover() && at(274).probes_discover());
        assert!(!at(284).defaults_to_auto_mode() && at(285).defaults_to_auto_mode() && !at(302).defaults_to_auto_mode());
        assert_eq!(at(286).capabilities().len(), 8);
        assert_eq!(at(281).builtin_plugins(), ["agents-md"]);
        assert!(at(286).slash_commands().contains(&"plugin-types") && !at(287).slash_commands().contains(&"plugin-types"));
        let future = Profile { version: Version::new(2, 2, 0) };
        assert!(future.probes_discover() && future.builtin_tools().contains(&"Monitor") && future.capabilities().len() == 24);
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
