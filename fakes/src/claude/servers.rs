//! The MCP servers of one process: connected all at once with the simulated
//! version's handshake, called with each server's timeout, and closed when
//! the process ends. An SDK host's in-process servers are connected and
//! called through the host (`sdk_servers`) and listed after the others.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::config::{ServerConfig, ServerTransport};
use super::profile::{self, Profile};
use super::rules::{self, Rules};
use super::sdk_link::HostLink;
use super::elicitation;
use crate::mcp_client::{method_not_found, CallFailure, Greeting, Handshake, McpConnection, ServerTarget};
use crate::wire::Recorder;

/// Default tool timeout: 1e8 ms, as measured.
const DEFAULT_TOOL_TIMEOUT_MS: f64 = 100_000_000.0;

/// One configured server and its connection, or why it failed.
pub struct Server {
    pub config: ServerConfig,
    pub conn: Result<(Link, Greeting), String>,
}

/// How a connected server is reached.
pub enum Link {
    /// A process (stdio) or an HTTP endpoint.
    Mcp(McpConnection),
    /// The SDK host, through `mcp_message` control requests.
    Host(HostLink),
}

impl Server {
    /// The names of the tools the server listed.
    fn tool_names(&self) -> Vec<&str> {
        match &self.conn {
            Ok((Link::Mcp(c), _)) => c.tools.iter().map(|t| t.name.as_str()).collect(),
            Ok((Link::Host(_), greeting)) => greeting.tools.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The tool the model knows as `mcp__<server>__<renamed>`: the first
    /// the server lists whose name renames to `renamed`.
    fn tool_renamed(&self, renamed: &str) -> Option<String> {
        self.tool_names().into_iter().find(|t| profile::sanitize_name(t) == renamed).map(String::from)
    }
}

pub struct Servers {
    list: Vec<Server>,
    profile: Profile,
    rec: Recorder,
    /// The answer to `roots/list`: the process's working directory.
    roots: Value,
    /// MCP_TOOL_TIMEOUT, when it is a positive number (ms).
    env_timeout_ms: Option<f64>,
}

impl Servers {
    /// Connects every server at once, as the real CLI does.
    pub fn connect(profile: Profile, configs: Vec<ServerConfig>, env: &BTreeMap<String, String>, cwd: &Path, rec: &Recorder) -> Servers {
        let results: Vec<Result<(McpConnection, Greeting), String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = configs
                .iter()
                .map(|c| {
                    let http = matches!(c.transport, ServerTransport::Http { .. });
                    let handshake = handshake(&profile, http);
                    scope.spawn(move || {
                        let target = target(c)?;
                        McpConnection::connect_with(&target, env, &handshake)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("connect thread panicked".into()))).collect()
        });
        let mut servers = Servers {
            list: Vec::new(),
            profile,
            rec: rec.clone(),
            roots: json!({"roots": [{"uri": format!("file://{}", cwd.display())}]}),
            env_timeout_ms: env.get("MCP_TOOL_TIMEOUT").and_then(|v| v.trim().parse::<f64>().ok()).filter(|t| t.is_finite() && *t > 0.0),
        };
        for (config, conn) in configs.into_iter().zip(results) {
            servers.add(config, conn.map(|(c, g)| (Link::Mcp(c), g)));
        }
        servers
    }

    /// Adds a server as connected or failed, after the others.
    pub fn add(&mut self, config: ServerConfig, conn: Result<(Link, Greeting), String>) {
        let (status, error) = match &conn {
            Ok(_) => ("connected", Value::Null),
            Err(e) => ("failed", json!(e)),
        };
        self.rec.record(&json!({"event": "mcp_startup", "server": config.name, "source": config.source, "status": status, "error": error}));
        self.list.push(Server { config, conn });
    }

    /// The link to the SDK host's server `name`, if it is one and connected.
    pub fn host_link(&mut self, name: &str) -> Option<&mut HostLink> {
        self.list.iter_mut().find(|s| s.config.name == name).and_then(|s| match &mut s.conn {
            Ok((Link::Host(l), _)) => Some(l),
            _ => None,
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = &Server> {
        self.list.iter()
    }

    /// The tool of `server` that a model call naming `tool` reaches (its
    /// renamed form picks the first match), if `server` is connected.
    pub fn resolve(&self, server: &str, tool: &str) -> Option<String> {
        let renamed = profile::sanitize_name(tool);
        self.list.iter().find(|s| s.config.name == server).and_then(|s| s.tool_renamed(&renamed))
    }

    /// The MCP tools the model has, renamed: connected servers' tools minus
    /// denied ones, a name that renames like an earlier one dropped.
    pub fn mcp_tools(&self, rules: &Rules) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in &self.list {
            for t in s.tool_names() {
                let name = rules::tool_name(&s.config.name, t);
                if !rules.denies(&name) && !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        out
    }

    /// A renamed `mcp__S__T` -> (S, the tool's own name) for a connected S.
    pub fn split_name(&self, name: &str) -> Option<(String, String)> {
        self.list.iter().find_map(|s| {
            let renamed = name.strip_prefix(&format!("mcp__{}__", profile::sanitize_name(&s.config.name)))?;
            s.tool_renamed(renamed).map(|t| (s.config.name.clone(), t))
        })
    }

    pub fn timeout_ms(&self, server: &str) -> f64 {
        let per_server = self.list.iter().find(|s| s.config.name == server).and_then(|s| s.config.timeout_ms).filter(|t| *t >= 1000.0);
        per_server.or(self.env_timeout_ms).unwrap_or(DEFAULT_TOOL_TIMEOUT_MS).max(1000.0)
    }

    /// One tools/call with the server's timeout. A server's elicitation
    /// gets what `elicit` answers (print mode: cancel), unless it is in a
    /// URL mode this version's client refuses.
    pub fn call(&mut self, server: &str, tool: &str, tool_use_id: &str, arguments: &Value, elicit: &mut dyn FnMut(&Value) -> Value) -> Result<Value, CallFailure> {
        let timeout_ms = self.timeout_ms(server);
        let profile = self.profile;
        let reason = profile.cancel_reason();
        let rec = self.rec.clone();
        let roots = &self.roots;
        let Some(Server { conn: Ok((Link::Mcp(conn), _)), .. }) = self.list.iter_mut().find(|s| s.config.name == server) else {
            return Err(CallFailure::Transport(format!("MCP server \"{server}\" is not connected")));
        };
        let server_name = server.to_string();
        let mut on_request = |method: &str, params: &Value| -> Result<Value, Value> {
            let answer = match method {
                "elicitation/create" => match elicitation::url_refusal(&profile, params) {
                    Some(error) => Err(error),
                    None => Ok(elicit(params)),
                },
                "roots/list" => Ok(roots.clone()),
                "ping" => Ok(json!({})),
                _ => Err(method_not_found()),
            };
            rec.record(&json!({"event": "server_request", "server": server_name, "method": method, "answer": answer.as_ref().ok(), "error": answer.as_ref().err()}));
            answer
        };
        let id = tool_use_id.to_string();
        conn.call_with_timeout(
            tool,
            arguments,
            |rid| json!({"claudecode/toolUseId": id, "progressToken": rid}),
            Duration::from_secs_f64(timeout_ms / 1000.0),
            reason,
            &mut on_request,
        )
    }

    /// The input schema `server` listed for `tool`.
    pub fn input_schema(&self, server: &str, tool: &str) -> Option<Value> {
        let s = self.list.iter().find(|s| s.config.name == server)?;
        let (_, greeting) = s.conn.as_ref().ok()?;
        greeting.tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(tool))?.get("inputSchema").cloned()
    }
}

impl Servers {
    /// Stops every server as the real CLI does at exit: killed without EOF,
    /// after a moment to read what was sent last (such as a
    /// `notifications/cancelled`). Later calls find no server.
    pub fn stop(&mut self) {
        let servers = std::mem::take(&mut self.list);
        std::thread::scope(|scope| {
            for s in servers {
                if let Ok((Link::Mcp(conn), _)) = s.conn {
                    scope.spawn(move || conn.close(Duration::from_secs(2)));
                }
            }
        });
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The simulated version's handshake with an HTTP (else stdio) server: an
/// optional `server/discover` probe, then `initialize` with its client info
/// and capabilities.
fn handshake(profile: &Profile, http: bool) -> Handshake {
    let client_info = profile.client_info();
    let capabilities = profile.client_capabilities();
    let probes = if http { profile.probes_discover() } else { profile.probes_discover_stdio() };
    let discover = probes.then(|| {
        (
            json!("server-discover-probe-1"),
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": client_info,
                "io.modelcontextprotocol/clientCapabilities": profile.discover_capabilities(),
            }}),
        )
    });
    Handshake {
        discover,
        initialize: json!({"protocolVersion": profile.protocol_version(), "capabilities": capabilities, "clientInfo": client_info}),
        first_id: 0,
    }
}

fn target(c: &ServerConfig) -> Result<ServerTarget, String> {
    match &c.transport {
        ServerTransport::Stdio { command: Some(command), args, env } => Ok(ServerTarget {
            command: Some(command.clone()),
            args: args.clone(),
            env: env.clone(),
            ..ServerTarget::default()
        }),
        ServerTransport::Stdio { command: None, .. } => Err("stdio server without `command`".into()),
        ServerTransport::Http { url: Some(url), headers } => {
            Ok(ServerTarget { url: Some(url.clone()), headers: headers.clone(), ..ServerTarget::default() })
        }
        ServerTransport::Http { url: None, .. } => Err("http server without `url`".into()),
        // Only an SDK host runs them (unmeasured without one).
        ServerTransport::Sdk => Err("an SDK server needs an SDK host (--input-format stream-json)".into()),
        ServerTransport::Unsupported(kind) => Err(format!("transport `{kind}` is not simulated")),
    }
}
