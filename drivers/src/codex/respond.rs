//! How the reference driver answers each server request from `codex
//! app-server`. Only the approval of a declared tool may be settled without
//! the host; everything else goes to the host or is refused.

use serde_json::{json, Value};

pub use super::elicitation::approval_tool_name;
use super::elicitation::is_tool_approval;
use crate::host::{Host, HostDecision, HostPrompt};
use crate::launch::BridgeSpec;
use crate::spec::{ApprovalPolicy, GlobalPolicy, ServerSet};

pub struct Context<'a> {
    pub servers: &'a ServerSet,
    pub global: GlobalPolicy,
    pub thread_id: &'a str,
    /// Set when the driver runs the child for its own tools: there is no one
    /// to ask, so only approvals of those tools are accepted.
    pub bridge: Option<&'a BridgeSpec>,
}

/// The reply body for one server request: `Ok(result)` or `Err((code, message))`.
pub type Answer = Result<Value, (i64, String)>;

pub fn respond(method: &str, params: &Value, ctx: &Context, host: &mut dyn Host) -> Answer {
    // A request for another thread is unsolicited: refuse it.
    if let Some(t) = params.get("threadId").and_then(Value::as_str) {
        if t != ctx.thread_id {
            return Err((-32600, format!("request for thread {t}, which this driver did not start")));
        }
    }
    if let Some(bridge) = ctx.bridge {
        return headless(method, params, ctx, bridge);
    }
    match method {
        "mcpServer/elicitation/request" => Ok(elicitation(params, ctx, host)),
        "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => {
            let prompt = if method.contains("command") { HostPrompt::Command } else { HostPrompt::FileChange };
            Ok(json!({"decision": match host.decide(&prompt) {
                HostDecision::Accept => "accept",
                HostDecision::Decline => "decline",
                HostDecision::Cancel => "cancel",
            }}))
        }
        "item/permissions/requestApproval" => Ok(match host.decide(&HostPrompt::Permissions) {
            HostDecision::Accept => json!({"permissions": params.get("permissions").cloned().unwrap_or(json!({})), "scope": "turn"}),
            _ => json!({"permissions": {}, "scope": "turn"}),
        }),
        // No UI to ask the user: answer nothing rather than invent answers.
        "item/tool/requestUserInput" => Ok(json!({"answers": {}})),
        other => Err((-32601, format!("unsupported server request `{other}`"))),
    }
}

/// Bridge mode: accept the approval of a bridged tool call, once and without
/// persisting it; decline everything else.
fn headless(method: &str, params: &Value, ctx: &Context, bridge: &BridgeSpec) -> Answer {
    match method {
        "mcpServer/elicitation/request" => {
            let server = params.get("serverName").and_then(Value::as_str).unwrap_or("");
            let tool = approval_tool_name(params).unwrap_or_default();
            let bridged = server == bridge.server.trim() && bridge.tools.iter().any(|t| t.name == tool);
            // An approve-policy tool elsewhere would not have been asked about.
            let approved = ctx.servers.policy(server, &tool) == Some(ApprovalPolicy::Approve);
            Ok(if is_tool_approval(params) && (bridged || approved) { HostDecision::Accept } else { HostDecision::Decline }.elicit_result())
        }
        "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => Ok(json!({"decision": "decline"})),
        "item/permissions/requestApproval" => Ok(json!({"permissions": {}, "scope": "turn"})),
        "item/tool/requestUserInput" => Ok(json!({"answers": {}})),
        other => Err((-32601, format!("unsupported server request `{other}`"))),
    }
}

fn elicitation(params: &Value, ctx: &Context, host: &mut dyn Host) -> Value {
    let server = params.get("serverName").and_then(Value::as_str).unwrap_or("").to_string();
    let mode = params.get("mode").and_then(Value::as_str).unwrap_or("");
    let decision = if is_tool_approval(params) {
        let Some(tool) = approval_tool_name(params) else { return HostDecision::Decline.elicit_result() };
        if ctx.servers.get(&server).is_none() {
            // Not a server this driver attached: nobody vouched for it.
            HostDecision::Decline
        } else {
            match (ctx.servers.policy(&server, &tool), ctx.global) {
                (Some(ApprovalPolicy::Approve), _) => HostDecision::Accept,
                (Some(ApprovalPolicy::Prompt), _) | (None, GlobalPolicy::Ask) => {
                    host.decide(&HostPrompt::ToolCall { server, tool })
                }
                (None, GlobalPolicy::AutoApprove) => HostDecision::Accept,
            }
        }
    } else if mode == "url" {
        host.decide(&HostPrompt::UrlElicitation { server })
    } else {
        host.decide(&HostPrompt::FormElicitation { server })
    };
    decision.elicit_result()
}
