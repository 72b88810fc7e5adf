//! Tools reached through an MCP gateway, surfaced as
//! `gateway_<target>___<tool>`. The host's catalog binds each one to a row
//! with its approval policy and OAuth provider; the driver enforces both,
//! pausing with events the host resumes, and fails closed on anything the
//! catalog does not bind.

pub mod binding;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::codex::elicitation::approval_tool_name;
use crate::host::Host;
pub use binding::{
    bind, consent_key, digest, runtime_id, tool_policies, Binding, CatalogRow, ConsentKey, GatewayApproval, GatewayEvent,
    GatewaySpec, ResumeAnswer,
};

/// The answer to Codex's approval prompt for a gateway tool.
pub fn respond(
    params: &Value,
    bindings: &BTreeMap<String, Binding>,
    consents: &mut BTreeSet<ConsentKey>,
    host: &mut dyn Host,
) -> Value {
    let decline = json!({"action": "decline"});
    let Some(tool) = approval_tool_name(params) else { return decline };
    // Unbound: nobody governs it, so it does not run.
    let Some(binding) = bindings.get(&tool) else { return decline };
    if binding.approval == GatewayApproval::Required
        && host.interrupt(&GatewayEvent::ApprovalInterrupt { binding: binding.clone() }) != ResumeAnswer::Approve
    {
        return decline;
    }
    if binding.oauth_provider_id.is_some() && !consents.contains(&consent_key(binding)) {
        if host.interrupt(&GatewayEvent::OAuthRequired { binding: binding.clone() }) != ResumeAnswer::Consented {
            return decline;
        }
        consents.insert(consent_key(binding));
    }
    json!({"action": "accept", "content": {}})
}
