//! The simulated host: answers the driver's prompts as the scenario's steps
//! say, runs the host's own tools for the bridge, resumes gateway pauses,
//! and notes every prompt no step accounts for.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::scenario::call_arguments;
use super::HostSaw;
use crate::driver::{GatewayEvent, Host, HostAnswer, Prompt, ResumeAnswer};
use crate::scenario::{toml_to_json, Consent, RequestKind, Scenario, Step};

pub(super) struct HostLog<'a> {
    pub scenario: &'a Scenario,
    /// Steps of the turn in progress: (index, step).
    pub turn: Vec<usize>,
    /// What reached the host, per step.
    pub saw: &'a mut Vec<HostSaw>,
    /// The gateway's token vault, written when the user consents.
    pub vault: Option<PathBuf>,
    pub stray: &'a mut Vec<Prompt>,
    /// The host's edit of the call it last accepted.
    pub edited: Option<Value>,
}

impl Host for HostLog<'_> {
    fn decide(&mut self, prompt: &Prompt) -> HostAnswer {
        let found = self.turn.iter().copied().find(|&i| {
            !self.saw[i].asked
                && match (&self.scenario.steps[i], prompt) {
                    (Step::ToolCall { server, tool, .. }, Prompt::ToolCall { server: s, tool: t }) => {
                        server.trim() == s && tool.trim() == t
                    }
                    (Step::Request { request, server, .. }, p) => request_matches(*request, server.as_deref(), p),
                    _ => false,
                }
        });
        match found {
            Some(i) => {
                self.saw[i].asked = true;
                self.edited = match &self.scenario.steps[i] {
                    Step::ToolCall { host_edits: Some(edits), .. } => Some(call_arguments(i, Some(edits))),
                    _ => None,
                };
                match &self.scenario.steps[i] {
                    Step::ToolCall { host, .. } | Step::Request { host, .. } => host.unwrap_or(HostAnswer::Decline),
                    _ => HostAnswer::Decline,
                }
            }
            None => {
                self.stray.push(prompt.clone());
                HostAnswer::Decline
            }
        }
    }

    fn edited_input(&mut self, _prompt: &Prompt) -> Option<Value> {
        self.edited.take()
    }

    fn interrupt(&mut self, event: &GatewayEvent) -> ResumeAnswer {
        let (binding, oauth) = match event {
            GatewayEvent::ApprovalInterrupt { binding } => (binding, false),
            GatewayEvent::OAuthRequired { binding } => (binding, true),
        };
        let gateway = self.scenario.gateway.as_ref().map(|g| g.server.trim().to_string()).unwrap_or_default();
        let step = self.turn.iter().copied().find(|&i| {
            let seen = if oauth { self.saw[i].oauth_required } else { self.saw[i].interrupted };
            !seen && matches!(&self.scenario.steps[i], Step::ToolCall { server, tool, .. } if server.trim() == gateway && tool.trim() == binding.runtime_id)
        });
        let Some(i) = step else {
            self.stray.push(Prompt::ToolCall { server: gateway, tool: format!("{} ({})", binding.runtime_id, if oauth { "oauth" } else { "approval" }) });
            return if oauth { ResumeAnswer::Declined } else { ResumeAnswer::Deny };
        };
        let entry = &mut self.saw[i];
        entry.bound_row = Some(binding.catalog_row_id.clone());
        let Step::ToolCall { host, consent, .. } = &self.scenario.steps[i] else { return ResumeAnswer::Deny };
        if oauth {
            entry.oauth_required = true;
            if *consent == Some(Consent::Grant) {
                // The user completes the provider's consent: the vault gets a token.
                if let Some(vault) = &self.vault {
                    let mut tokens: Value = std::fs::read_to_string(vault).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(json!({}));
                    tokens[&binding.target_id] = json!(format!("consent-{}-{}", binding.target_id, binding.custom_parameters_digest));
                    let _ = std::fs::write(vault, tokens.to_string());
                }
                return ResumeAnswer::Consented;
            }
            ResumeAnswer::Declined
        } else {
            entry.interrupted = true;
            if *host == Some(HostAnswer::Accept) { ResumeAnswer::Approve } else { ResumeAnswer::Deny }
        }
    }

    fn call_tool(&mut self, tool: &str, arguments: &Value) -> Value {
        self.bridge_result(tool, arguments).unwrap_or_else(|| {
            self.stray.push(Prompt::ToolCall { server: "(bridge)".into(), tool: tool.to_string() });
            json!({"content": [{"type": "text", "text": format!("no step calls host tool {tool} with these arguments")}], "isError": true})
        })
    }
}

impl HostLog<'_> {
    fn bridge_result(&mut self, tool: &str, arguments: &Value) -> Option<Value> {
        let bridge = self.scenario.bridge.as_ref()?;
        let step = self.turn.iter().copied().find(|&i| match &self.scenario.steps[i] {
            Step::ToolCall { server, tool: t, arguments: a, .. } => {
                server.trim() == bridge.server.trim() && t.trim() == tool && call_arguments(i, a.as_ref()) == *arguments
            }
            _ => false,
        })?;
        self.saw[step].bridge_calls += 1;
        let decl = bridge.tools.get(tool)?;
        Some(json!({"content": decl.content.iter().map(toml_to_json).collect::<Vec<_>>(), "isError": decl.is_error}))
    }
}

fn request_matches(kind: RequestKind, server: Option<&str>, p: &Prompt) -> bool {
    use RequestKind as K;
    match (kind, p) {
        (K::Command, Prompt::Command) | (K::FileChange, Prompt::FileChange) | (K::Permissions, Prompt::Permissions) => true,
        (K::UrlElicitation, Prompt::UrlElicitation { server: s }) | (K::FormElicitation, Prompt::FormElicitation { server: s }) => {
            server.map(str::trim) == Some(s.as_str())
        }
        _ => false,
    }
}

