//! Tools reached through an MCP gateway, surfaced as
//! `gateway_<target>___<tool>`. The host's catalog binds each one to a row
//! with its approval policy and OAuth provider; the driver enforces both,
//! pausing with events the host resumes, and fails closed on anything the
//! catalog does not bind.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::codex::respond::approval_tool_name;
use crate::host::{DriverError, Host};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GatewayApproval {
    /// Pause for the host's approval before every call.
    Required,
    None,
}

/// One catalog row, as the host's catalog has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogRow {
    pub row_id: String,
    pub target_id: String,
    pub raw_tool: String,
    pub approval: GatewayApproval,
    pub oauth_provider: Option<String>,
    pub custom_parameters: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewaySpec {
    /// The gateway's MCP server name among the declared servers.
    pub server: String,
    pub session: String,
    pub catalog: Vec<CatalogRow>,
}

/// What the driver binds a gateway tool to, for one session.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Binding {
    pub target_id: String,
    pub raw_tool: String,
    pub runtime_id: String,
    pub catalog_row_id: String,
    pub approval: GatewayApproval,
    pub oauth_provider_id: Option<String>,
    pub custom_parameters_digest: String,
    pub session: String,
}

/// A pause the host resumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayEvent {
    ApprovalInterrupt(Binding),
    OAuthRequired(Binding),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeAnswer {
    Approve,
    Deny,
    Consented,
    Declined,
}

pub fn runtime_id(target: &str, tool: &str) -> String {
    format!("gateway_{target}___{tool}")
}

/// 64-bit FNV-1a of the sorted parameters: changes whenever they do.
pub fn digest(params: &BTreeMap<String, String>) -> String {
    let text = json!(params).to_string();
    let h = text.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    format!("cp-{h:016x}")
}

/// Binds every catalog row; two rows for one runtime tool conflict.
pub fn bind(spec: &GatewaySpec) -> Result<BTreeMap<String, Binding>, DriverError> {
    let mut out = BTreeMap::new();
    for row in &spec.catalog {
        let binding = Binding {
            target_id: row.target_id.clone(),
            raw_tool: row.raw_tool.clone(),
            runtime_id: runtime_id(&row.target_id, &row.raw_tool),
            catalog_row_id: row.row_id.clone(),
            approval: row.approval,
            oauth_provider_id: row.oauth_provider.clone(),
            custom_parameters_digest: digest(&row.custom_parameters),
            session: spec.session.clone(),
        };
        if out.insert(binding.runtime_id.clone(), binding).is_some() {
            return Err(DriverError::new("duplicate-conflict", format!("two catalog rows bind {}", runtime_id(&row.target_id, &row.raw_tool))));
        }
    }
    Ok(out)
}

/// Consent lasts for one binding: same target, provider, parameters and session.
pub type ConsentKey = (String, String, String, String);

pub fn consent_key(b: &Binding) -> ConsentKey {
    (b.target_id.clone(), b.oauth_provider_id.clone().unwrap_or_default(), b.custom_parameters_digest.clone(), b.session.clone())
}

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
        && host.interrupt(&GatewayEvent::ApprovalInterrupt(binding.clone())) != ResumeAnswer::Approve
    {
        return decline;
    }
    if binding.oauth_provider_id.is_some() && !consents.contains(&consent_key(binding)) {
        if host.interrupt(&GatewayEvent::OAuthRequired(binding.clone())) != ResumeAnswer::Consented {
            return decline;
        }
        consents.insert(consent_key(binding));
    }
    json!({"action": "accept", "content": {}})
}

/// Per-tool policies to project for the gateway server: a tool with
/// neither approval nor OAuth runs freely; the rest must reach the driver.
pub fn tool_policies(bindings: &BTreeMap<String, Binding>) -> BTreeMap<String, crate::spec::ApprovalPolicy> {
    bindings
        .values()
        .map(|b| {
            let free = b.approval == GatewayApproval::None && b.oauth_provider_id.is_none();
            (b.runtime_id.clone(), if free { crate::spec::ApprovalPolicy::Approve } else { crate::spec::ApprovalPolicy::Prompt })
        })
        .collect()
}
