//! Declarations a host makes: MCP servers, each with a map of exact tool
//! names to an approval policy. Building a [`ServerSet`] normalizes, sorts and
//! rejects what cannot be honoured exactly.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Per-tool policy. Closed: a value outside this enum is an error, never a
/// silent fallback to the provider default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalPolicy {
    /// Always ask, whatever the tool's annotations say.
    Prompt,
    /// Never ask: this exact tool on this exact server is pre-approved.
    Approve,
}

impl ApprovalPolicy {
    pub fn parse(s: &str) -> Result<ApprovalPolicy, SpecError> {
        match s {
            "prompt" => Ok(ApprovalPolicy::Prompt),
            "approve" => Ok(ApprovalPolicy::Approve),
            other => Err(SpecError::new(
                "invalid-policy",
                format!("approval_mode `{other}` is not one of: prompt, approve"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Prompt => "prompt",
            ApprovalPolicy::Approve => "approve",
        }
    }
}

/// What the driver does with provider approval prompts that no per-tool
/// policy settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GlobalPolicy {
    /// Forward to the host.
    Ask,
    /// Accept MCP tool-call approvals in the driver; everything else still
    /// goes to the host.
    AutoApprove,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Transport {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
        /// Name of the environment variable holding the bearer token. The
        /// value is never part of a spec.
        #[serde(default)]
        bearer_token_env: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerSpec {
    pub name: String,
    pub transport: Transport,
    /// Why the host attaches this server; shown to users, not part of
    /// compatibility.
    pub reason: String,
    pub tools: BTreeMap<String, ApprovalPolicy>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// Stable machine-readable kind, e.g. `duplicate-conflict`.
    pub kind: &'static str,
    pub message: String,
}

impl SpecError {
    pub fn new(kind: &'static str, message: impl Into<String>) -> SpecError {
        SpecError { kind, message: message.into() }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for SpecError {}

/// Normalized declarations: names trimmed and checked, servers sorted by
/// name, duplicate declarations merged when identical.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerSet {
    servers: BTreeMap<String, McpServerSpec>,
}

impl ServerSet {
    pub fn build(specs: impl IntoIterator<Item = McpServerSpec>) -> Result<ServerSet, SpecError> {
        let mut set = ServerSet::default();
        for spec in specs {
            set.insert(spec)?;
        }
        Ok(set)
    }

    pub fn insert(&mut self, spec: McpServerSpec) -> Result<(), SpecError> {
        let spec = normalize(spec)?;
        match self.servers.get(&spec.name) {
            Some(existing) if *existing == spec => Ok(()),
            Some(_) => Err(SpecError::new(
                "duplicate-conflict",
                format!("server `{}` is declared twice with different settings", spec.name),
            )),
            None => {
                self.servers.insert(spec.name.clone(), spec);
                Ok(())
            }
        }
    }

    /// A set taken as given: no normalization, no checks, later duplicates
    /// win. Only for demonstrating what [`ServerSet::build`] prevents.
    pub fn unchecked(specs: impl IntoIterator<Item = McpServerSpec>) -> ServerSet {
        ServerSet { servers: specs.into_iter().map(|s| (s.name.clone(), s)).collect() }
    }

    /// This set plus `other`, with the same conflict rule.
    pub fn merged(&self, other: &ServerSet) -> Result<ServerSet, SpecError> {
        let mut set = self.clone();
        for spec in other.servers.values() {
            set.insert(spec.clone())?;
        }
        Ok(set)
    }

    pub fn servers(&self) -> impl Iterator<Item = &McpServerSpec> {
        self.servers.values()
    }

    pub fn get(&self, name: &str) -> Option<&McpServerSpec> {
        self.servers.get(name)
    }

    pub fn policy(&self, server: &str, tool: &str) -> Option<ApprovalPolicy> {
        self.servers.get(server)?.tools.get(tool).copied()
    }

    /// Environment variables whose values the provider needs at launch.
    pub fn secret_envs(&self) -> Vec<&str> {
        self.servers
            .values()
            .filter_map(|s| match &s.transport {
                Transport::Http { bearer_token_env: Some(v), .. } => Some(v.as_str()),
                _ => None,
            })
            .collect()
    }
}

fn normalize(spec: McpServerSpec) -> Result<McpServerSpec, SpecError> {
    let name = spec.name.trim().to_string();
    check_server_name(&name)?;
    let mut tools = BTreeMap::new();
    for (raw, policy) in spec.tools {
        let tool = raw.trim().to_string();
        check_tool_name(&name, &tool)?;
        if let Some(prev) = tools.insert(tool.clone(), policy) {
            if prev != policy {
                return Err(SpecError::new(
                    "duplicate-conflict",
                    format!("tool `{tool}` on server `{name}` is declared twice with different policies"),
                ));
            }
        }
    }
    let transport = match spec.transport {
        Transport::Http { url, bearer_token_env } => {
            let bearer_token_env = bearer_token_env.map(|v| v.trim().to_string());
            if let Some(var) = &bearer_token_env {
                if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(SpecError::new("invalid-name", format!("bearer token env var `{var}` is not a variable name")));
                }
            }
            Transport::Http { url: url.trim().to_string(), bearer_token_env }
        }
        stdio => stdio,
    };
    Ok(McpServerSpec { name, transport, reason: spec.reason.trim().to_string(), tools })
}

/// Codex only accepts `[A-Za-z0-9_-]` server names; the same rule keeps
/// `mcp__<server>__<tool>` names unambiguous for Claude Code.
fn check_server_name(name: &str) -> Result<(), SpecError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(SpecError::new("invalid-name", format!("server name `{name}` must be 1-64 of [A-Za-z0-9_-]")))
    }
}

/// MCP tool names: 1-128 of `[A-Za-z0-9_.-]`, case-sensitive (2025-11-25 spec).
fn check_tool_name(server: &str, tool: &str) -> Result<(), SpecError> {
    let ok = !tool.is_empty()
        && tool.len() <= 128
        && tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(SpecError::new(
            "invalid-name",
            format!("tool name `{tool}` on server `{server}` must be 1-128 of [A-Za-z0-9_.-]"),
        ))
    }
}
