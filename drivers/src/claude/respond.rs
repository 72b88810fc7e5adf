//! How the reference driver answers Claude Code's permission prompt tool:
//! policy first, then the host, like the Codex driver.

use serde_json::{json, Value};

use super::projection::declared_tool;
use crate::codex::respond::Context;
use crate::host::{Host, HostDecision, HostPrompt};
use crate::spec::{ApprovalPolicy, GlobalPolicy};

/// The permission prompt tool's verdict for one gated call.
pub fn permission(tool_name: &str, input: &Value, ctx: &Context, host: &mut dyn Host) -> Value {
    let allow = json!({"behavior": "allow", "updatedInput": input});
    let deny = |why: &str| json!({"behavior": "deny", "message": why});
    // The name is Claude Code's renamed one: find the declared tool behind it.
    let Some((server, tool, policy)) = declared_tool(ctx.servers, [], tool_name) else {
        return deny(&format!("{tool_name} is not a tool the host declared"));
    };
    let decision = match (policy, ctx.global) {
        (Some(ApprovalPolicy::Approve), _) | (None, GlobalPolicy::AutoApprove) => HostDecision::Accept,
        (Some(ApprovalPolicy::Prompt), _) | (None, GlobalPolicy::Ask) => host.decide(&HostPrompt::ToolCall { server, tool }),
    };
    match decision {
        HostDecision::Accept => allow,
        _ => deny(&format!("The host declined {tool_name}")),
    }
}
