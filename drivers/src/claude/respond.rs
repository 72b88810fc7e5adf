//! Who settles a gated Claude Code call ([`decide`]: policy first, then the
//! host, like the Codex driver; the SDK host driver decides the same way),
//! and the print driver's answer to its permission prompt tool.

use serde_json::{json, Value};

use super::projection::declared_tool;
use crate::codex::respond::Context;
use crate::host::{Host, HostDecision, HostPrompt};
use crate::spec::{ApprovalPolicy, GlobalPolicy};

/// The permission prompt tool's verdict for one gated call.
pub fn permission(tool_name: &str, input: &Value, ctx: &Context, host: &mut dyn Host) -> Value {
    match decide(tool_name, ctx, host) {
        Ok(HostDecision::Accept) => json!({"behavior": "allow", "updatedInput": input}),
        Ok(_) => json!({"behavior": "deny", "message": format!("The host declined {tool_name}")}),
        Err(why) => json!({"behavior": "deny", "message": why}),
    }
}

/// Who settles a gated call to `tool_name` (Claude Code's renamed name),
/// and how: the declared policy first (`approve` accepts, `prompt` asks the
/// host), then the global policy. Err: the name is no declared server's
/// tool, so nobody vouched for it and it is refused.
pub fn decide(tool_name: &str, ctx: &Context, host: &mut dyn Host) -> Result<HostDecision, String> {
    let Some((server, tool, policy)) = declared_tool(ctx.servers, [], tool_name) else {
        return Err(format!("{tool_name} is not a tool the host declared"));
    };
    Ok(match (policy, ctx.global) {
        (Some(ApprovalPolicy::Approve), _) | (None, GlobalPolicy::AutoApprove) => HostDecision::Accept,
        (Some(ApprovalPolicy::Prompt), _) | (None, GlobalPolicy::Ask) => host.decide(&HostPrompt::ToolCall { server, tool }),
    })
}
