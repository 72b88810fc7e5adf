//! How the CLI is started for a session: TS-SDK-style argv (`--flag=value`,
//! `--permission-prompt-tool=stdio`, `--await-initialize`), the environment
//! (secrets only there) and the MCP servers the initialize request carries
//! (the host's own tools among them as an SDK server).
//! A running CLI is kept while the plan for the next turn equals its own.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::claude::projection::claude_tool_name;
use crate::claude::{check_secrets, mcp_servers};
use crate::error::DriverError;
use crate::launch::Launch;
use crate::parts::Parts;
use crate::spec::ServerSet;

/// The driver's bridge server (an SDK server answered in process).
pub struct Bridge<'a> {
    pub server: &'a str,
}

/// Everything a CLI process is started with but the session it resumes.
/// No Debug: `env` holds secret values.
#[derive(Clone, PartialEq)]
pub struct Plan {
    args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub servers: Map<String, Value>,
    /// The host's SDK servers, by name.
    pub sdk_servers: Vec<String>,
}

impl Plan {
    pub fn new(set: &ServerSet, launch: &Launch, parts: &Parts, bridge: Option<Bridge>) -> Result<Plan, DriverError> {
        let mut env = check_secrets(set, launch)?;
        env.insert("CLAUDE_CONFIG_DIR".into(), launch.process.home.display().to_string());
        let servers = mcp_servers(set, launch, parts);
        let rules = (parts.claude_rules)(set);
        let mut allow = rules.allow;
        let mut sdk_servers = Vec::new();
        if let Some(b) = bridge {
            if set.get(b.server).is_some() {
                return Err(DriverError::new("duplicate-conflict", format!("bridge server `{}` is also declared", b.server)));
            }
            sdk_servers.push(b.server.to_string());
            // The host's own tools run without a prompt, each named exactly.
            allow.extend(launch.bridge.iter().flat_map(|s| &s.tools).map(|t| claude_tool_name(b.server, &t.name)));
        }
        let mut args: Vec<String> = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--permission-prompt-tool=stdio"]
            .map(String::from)
            .into();
        if !allow.is_empty() {
            args.push(format!("--allowedTools={}", allow.join(",")));
        }
        // An ask rule beats an allow rule from the user's or the project's
        // settings: a `prompt` tool reaches can_use_tool whatever they say.
        if !rules.ask.is_empty() {
            args.push(format!("--settings={}", json!({"permissions": {"ask": rules.ask}})));
        }
        // Only the servers of the initialize request, none from .claude.json.
        args.push("--strict-mcp-config".into());
        Ok(Plan { args, env, servers, sdk_servers })
    }

    /// The argv, continuing session `resume` if given.
    pub fn argv(&self, resume: Option<&str>) -> Vec<String> {
        let mut args = self.args.clone();
        if let Some(id) = resume {
            args.push(format!("--resume={id}"));
        }
        args.push("--await-initialize".into());
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::BridgeTool;
    use crate::launch::{BridgeSpec, Process};
    use crate::spec::{ApprovalPolicy, GlobalPolicy, McpServerSpec, Transport};

    fn launch(servers: Vec<McpServerSpec>) -> Launch {
        Launch {
            process: Process { binary: "claude".into(), home: "/h".into(), cwd: "/w".into(), secrets: [("TOK".to_string(), "s3cret".to_string())].into() },
            global: GlobalPolicy::Ask,
            servers,
            bridge: Some(BridgeSpec { server: "host".into(), tools: vec![BridgeTool { name: "report".into(), description: String::new() }] }),
            gateway: None,
        }
    }

    fn server(name: &str, transport: Transport, tools: &[(&str, ApprovalPolicy)]) -> McpServerSpec {
        McpServerSpec { name: name.into(), transport, reason: "r".into(), tools: tools.iter().map(|(t, p)| (t.to_string(), *p)).collect() }
    }

    #[test]
    fn exact_allow_entries_ask_rules_and_servers_for_initialize() {
        let stdio = Transport::Stdio { command: "srv".into(), args: vec![], env: Default::default() };
        let http = Transport::Http { url: "http://x/mcp".into(), bearer_token_env: Some("TOK".into()) };
        let specs = vec![
            server("notes", stdio, &[("notes.append", ApprovalPolicy::Approve), ("drop", ApprovalPolicy::Prompt)]),
            server("tracker", http, &[]),
        ];
        let l = launch(specs.clone());
        let set = ServerSet::build(specs).unwrap();
        let plan = Plan::new(&set, &l, &Parts::reference(), Some(Bridge { server: "host" })).unwrap();
        let argv = plan.argv(Some("sess-1"));
        assert!(argv.contains(&"--allowedTools=mcp__notes__notes_append,mcp__host__report".to_string()), "{argv:?}");
        assert!(argv.contains(&r#"--settings={"permissions":{"ask":["mcp__notes__drop"]}}"#.to_string()), "{argv:?}");
        assert_eq!(argv[argv.len() - 2..], ["--resume=sess-1".to_string(), "--await-initialize".to_string()]);
        assert!(!plan.argv(None).iter().any(|a| a.starts_with("--resume")));
        // The token's value only in the environment; the header names it.
        assert!(!argv.iter().any(|a| a.contains("s3cret")));
        assert!(!Value::Object(plan.servers.clone()).to_string().contains("s3cret"));
        assert_eq!(plan.servers["tracker"]["headers"]["Authorization"], "Bearer ${TOK}");
        assert_eq!(plan.env["TOK"], "s3cret");
        assert!(plan.servers.get("host").is_none());
        assert_eq!(plan.sdk_servers, ["host"]);
    }

    #[test]
    fn a_declared_bridge_name_and_a_missing_secret_are_refused() {
        let stdio = Transport::Stdio { command: "srv".into(), args: vec![], env: Default::default() };
        let specs = vec![server("host", stdio, &[])];
        let set = ServerSet::build(specs.clone()).unwrap();
        let bridge = Some(Bridge { server: "host" });
        assert_eq!(Plan::new(&set, &launch(specs), &Parts::reference(), bridge).err().map(|e| e.kind), Some("duplicate-conflict".into()));
        let http = Transport::Http { url: "http://x/mcp".into(), bearer_token_env: Some("OTHER".into()) };
        let specs = vec![server("t", http, &[])];
        let set = ServerSet::build(specs.clone()).unwrap();
        assert_eq!(Plan::new(&set, &launch(specs), &Parts::reference(), None).err().map(|e| e.kind), Some("missing-secret".into()));
    }
}
