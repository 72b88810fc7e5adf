//! The pieces of behaviour a driver can get wrong, as plain functions, so a
//! test can build a driver with exactly one of them broken.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::bridge::model_facing;
use crate::claude::respond::permission;
use crate::codex::projection::config_toml;
use crate::codex::respond::{self, Answer, Context};
use crate::error::DriverError;
use crate::fingerprint::fingerprint;
use crate::gateway::binding::{bind, Binding, ConsentKey, GatewaySpec};
use crate::host::Host;
use crate::spec::{GlobalPolicy, McpServerSpec, ServerSet, SpecError};
pub use crate::claude::projection::{claude_rules, ClaudeRules};

/// Codex: the answer to a gateway tool's approval prompt, from the
/// session's bindings and the consents given so far.
pub type GatewayRespond = fn(&Value, &BTreeMap<String, Binding>, &mut BTreeSet<ConsentKey>, &mut dyn Host) -> Value;

#[derive(Clone, Copy)]
pub struct Parts {
    pub build: fn(Vec<McpServerSpec>) -> Result<ServerSet, SpecError>,
    pub fingerprint: fn(&ServerSet, GlobalPolicy) -> String,
    /// Codex: CODEX_HOME/config.toml text.
    pub codex_config: fn(&ServerSet) -> String,
    /// `codex exec`: the flags after `exec --experimental-json ... --cd DIR`.
    pub codex_exec_args: fn(&ServerSet, GlobalPolicy) -> Vec<String>,
    /// Codex: thread approvalPolicy.
    pub approval_policy: fn(GlobalPolicy, bridged: bool) -> Value,
    /// Codex: the answer to each server request.
    pub respond: fn(&str, &Value, &Context, &mut dyn Host) -> Answer,
    /// Claude Code: allow and ask rules.
    pub claude_rules: fn(&ServerSet) -> ClaudeRules,
    /// Claude Code: the Authorization header for an HTTP server whose token
    /// is in env var `var` (holding `value`).
    pub claude_auth_header: fn(var: &str, value: &str) -> String,
    /// Claude Code: the permission prompt tool's verdict for `mcp__S__T`.
    pub claude_permission: fn(tool_name: &str, input: &Value, ctx: &Context, host: &mut dyn Host) -> Value,
    /// Claude Code in SDK host mode: the behavior object answering a
    /// `can_use_tool` request about `mcp__S__T`.
    pub claude_can_use_tool: fn(tool_name: &str, input: &Value, ctx: &Context, host: &mut dyn Host) -> Value,
    /// Claude Code in SDK host mode: the action answering a server's own
    /// `elicitation` request.
    pub claude_elicitation: fn(request: &Value, host: &mut dyn Host) -> Value,
    /// Claude Code in SDK host mode: the permission mode set for the mode
    /// the host asked for.
    pub claude_permission_mode: fn(&str) -> String,
    /// Claude Code print mode: the `--permission-mode` every launch names
    /// (None: none, the CLI's own default, which is auto mode in
    /// 2.1.285..2.1.301, where a gated call never reaches the prompt tool).
    pub claude_print_mode: Option<&'static str>,
    /// Claude Code in SDK host mode: the hooks registered in initialize
    /// (null: none) and the answer to each `hook_callback` (its input).
    pub claude_hooks: fn() -> Value,
    pub claude_hook_answer: fn(&Value) -> Value,
    /// Codex: the answer to an approval prompt for a gateway tool.
    pub gateway_respond: GatewayRespond,
    /// Binds catalog rows to gateway tools.
    pub gateway_bind: fn(&GatewaySpec) -> Result<BTreeMap<String, Binding>, DriverError>,
    /// What of a host tool's result goes back to the child.
    pub bridge_result: fn(&Value) -> Value,
    /// The child's call id for a bridged call: from `_meta`, else the item
    /// the provider announced.
    pub bridge_call_id: fn(meta: &Value, announced: Option<String>) -> String,
    /// Provider prompts go to the host; false: the driver refuses every
    /// prompt itself (fail-closed) and Claude Code gets no prompt tool.
    pub host_prompts: bool,
    /// Codex: the bridge server's own tools get per-tool `approve` (the
    /// per-tool approval issue's mechanism) instead of the driver accepting
    /// their approval prompts (BioRouter's). Both are correct.
    pub approve_bridge_tools: bool,
}

impl Parts {
    pub fn reference() -> Parts {
        Parts {
            build: ServerSet::build,
            fingerprint,
            codex_config: config_toml,
            codex_exec_args: crate::codex::projection::exec_args,
            approval_policy: |_, bridged| {
                if bridged {
                    // Only MCP elicitations may reach the driver; everything
                    // else is refused inside Codex.
                    json!({"granular": {"mcp_elicitations": true, "sandbox_approval": false, "rules": false,
                                        "skill_approval": false, "request_permissions": false}})
                } else {
                    json!("on-request")
                }
            },
            respond: respond::respond,
            claude_rules,
            // Claude Code expands ${VAR} itself: the value stays out of argv.
            claude_auth_header: |var, _| format!("Bearer ${{{var}}}"),
            claude_permission: permission,
            claude_can_use_tool: crate::claude_sdk::answer::can_use_tool,
            claude_elicitation: crate::claude_sdk::answer::elicitation,
            claude_permission_mode: |mode| mode.to_string(),
            claude_print_mode: Some("default"),
            // Every gated call is decided in can_use_tool: no hooks.
            claude_hooks: || Value::Null,
            claude_hook_answer: |_| json!({}),
            gateway_respond: crate::gateway::respond,
            gateway_bind: bind,
            bridge_result: model_facing,
            bridge_call_id: |meta, announced| {
                ["callId", "claudecode/toolUseId"]
                    .iter()
                    .find_map(|k| meta.get(*k).and_then(Value::as_str).map(String::from))
                    .or(announced)
                    .unwrap_or_default()
            },
            host_prompts: true,
            approve_bridge_tools: false,
        }
    }

    /// The reference design, fail-closed: it refuses every prompt, so its
    /// bridge tools run by per-tool `approve` under plain `on-request`.
    pub fn fail_closed() -> Parts {
        Parts {
            host_prompts: false,
            approve_bridge_tools: true,
            approval_policy: |_, _| json!("on-request"),
            ..Parts::reference()
        }
    }
}
