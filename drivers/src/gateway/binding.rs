//! The host's catalog bound to gateway tools for one session, and the pauses
//! a binding makes the driver take.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::DriverError;
use crate::spec::ApprovalPolicy;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatewayApproval {
    /// Pause for the host's approval before every call.
    Required,
    None,
}

/// One catalog row, as the host's catalog has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogRow {
    pub row_id: String,
    pub target_id: String,
    pub raw_tool: String,
    pub approval: GatewayApproval,
    pub oauth_provider: Option<String>,
    pub custom_parameters: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewaySpec {
    /// The gateway's MCP server name among the declared servers.
    pub server: String,
    pub session: String,
    pub catalog: Vec<CatalogRow>,
}

/// What the driver binds a gateway tool to, for one session.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum GatewayEvent {
    ApprovalInterrupt { binding: Binding },
    #[serde(rename = "oauth_required")]
    OAuthRequired { binding: Binding },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// Per-tool policies to project for the gateway server: a tool with
/// neither approval nor OAuth runs freely; the rest must reach the driver.
pub fn tool_policies(bindings: &BTreeMap<String, Binding>) -> BTreeMap<String, ApprovalPolicy> {
    bindings
        .values()
        .map(|b| {
            let free = b.approval == GatewayApproval::None && b.oauth_provider_id.is_none();
            (b.runtime_id.clone(), if free { ApprovalPolicy::Approve } else { ApprovalPolicy::Prompt })
        })
        .collect()
}
