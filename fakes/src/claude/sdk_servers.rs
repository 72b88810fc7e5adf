//! The SDK host's in-process MCP servers ("SDK servers"), reached through
//! `mcp_message` control requests. The TS SDK names them in initialize
//! (`sdkMcpServers`) with a manifest each (`sdkMcpServerManifests`: the
//! server's initialize and tools/list results, captured in process); the
//! Python SDK puts `{"type": "sdk", "name": ...}` in `--mcp-config`.
//! Measured on 2.1.332 and 2.1.334 (SDK-FACTS.md parts A and C):
//! - a manifest naming protocolVersion 2025-11-25 is used ("parked"): no
//!   handshake, only tools/call; any other manifest falls back to the full
//!   handshake (`protocol_version_mismatch`, `malformed`);
//! - the full handshake: `initialize` (id 0) before the CLI answers the
//!   host's initialize, then `notifications/initialized` and `tools/list`
//!   (id 1);
//! - tools/call ids count from 2, the progressToken being the id;
//! - an `mcp_response.error` shows its message, a control error its error
//!   string, an `isError` result renders like any server's; an answer with
//!   no `mcp_response` or another id leaves the call waiting for ever, a
//!   heartbeat every 30 s.

use std::time::Duration;

use serde_json::{json, Value};

use super::config::{ServerConfig, ServerTransport};
use super::host::Stop;
use super::profile;
use super::render::Rendered;
use super::sdk_link::{Declared, HostLink, Opened};
use super::servers::Link;
use super::session::{CallOutcome, Session};
use super::stream;
use super::uuid::new_uuid;
use crate::mcp_client::Greeting;

/// The protocol version a manifest must name to be used, and the one the
/// CLI's `initialize` asks for (both versions).
const PROTOCOL: &str = "2025-11-25";
/// How often the real CLI reports a call that waits (2.1.334).
const HEARTBEAT: Duration = Duration::from_secs(30);
/// initialize takes id 0 and tools/list 1, also when a manifest spared them.
const FIRST_CALL_ID: u64 = 2;


fn sdk_config(name: &str) -> ServerConfig {
    ServerConfig { name: name.to_string(), source: "sdk", transport: ServerTransport::Sdk, timeout_ms: None }
}

/// The SDK servers an initialize request names, each with its manifest, and
/// the `sdk_mcp_manifests_parked` answer when manifests came with them.
pub fn from_initialize(request: &Value) -> (Vec<Declared>, Option<Value>) {
    let names: Vec<&str> = request.get("sdkMcpServers").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let manifests = request.get("sdkMcpServerManifests").and_then(Value::as_object);
    let mut statuses = serde_json::Map::new();
    let mut declared: Vec<Declared> = Vec::new();
    for name in names {
        if declared.iter().any(|d| d.config.name == name) {
            continue;
        }
        let manifest = manifests.and_then(|m| m.get(name)).map(read_manifest);
        if let Some(m) = &manifest {
            statuses.insert(name.to_string(), json!(m.as_ref().map_or_else(|s| *s, |_| "parked")));
        }
        declared.push(Declared { config: sdk_config(name), manifest });
    }
    (declared, manifests.map(|_| Value::Object(statuses)))
}

/// The SDK servers of `--mcp-config` (`type: "sdk"`), taken out of the
/// configured servers: they connect through the host.
pub fn take_configured(configs: &mut Vec<ServerConfig>) -> Vec<Declared> {
    let (sdk, others): (Vec<ServerConfig>, Vec<ServerConfig>) = std::mem::take(configs).into_iter().partition(|c| c.transport == ServerTransport::Sdk);
    *configs = others;
    sdk.into_iter().map(|config| Declared { config, manifest: None }).collect()
}

/// Adds `more` to `list`, a name given twice kept once (the first).
fn merge(list: &mut Vec<Declared>, more: Vec<Declared>) {
    for d in more {
        if !list.iter().any(|o| o.config.name == d.config.name) {
            list.push(d);
        }
    }
}

/// A manifest's greeting, or why it is not used.
fn read_manifest(m: &Value) -> Result<Greeting, &'static str> {
    let initialize = m.get("initializeResult").filter(|v| v.is_object()).ok_or("malformed")?;
    let tools = m.pointer("/toolsListResult/tools").and_then(Value::as_array).ok_or("malformed")?;
    if initialize.get("protocolVersion").and_then(Value::as_str) != Some(PROTOCOL) {
        return Err("protocol_version_mismatch");
    }
    Ok(Greeting { initialize: initialize.clone(), tools: tools.clone() })
}

/// What an answer to an `mcp_message` request holds.
#[derive(Debug, PartialEq)]
enum Reply {
    Result(Value),
    /// What the model sees: the JSON-RPC error's message, or the control
    /// error's text.
    Error(String),
    /// No `mcp_response`, or one for another id.
    Unusable,
}

fn read_reply(answer: &Value, id: &Value) -> Reply {
    let text = |v: Option<&Value>| v.map(|e| e.as_str().map_or_else(|| e.to_string(), String::from)).unwrap_or_default();
    if answer.get("subtype").and_then(Value::as_str) == Some("error") {
        return Reply::Error(text(answer.get("error")));
    }
    let Some(m) = answer.pointer("/response/mcp_response").filter(|m| m.get("id") == Some(id)) else {
        return Reply::Unusable;
    };
    if let Some(e) = m.get("error").filter(|e| !e.is_null()) {
        return Reply::Error(text(e.get("message")));
    }
    m.get("result").filter(|r| !r.is_null()).map_or(Reply::Unusable, |r| Reply::Result(r.clone()))
}

/// The random prefix of this run's SDK message ids (see
/// [`profile::Profile::prefixes_sdk_message_ids`]).
fn run_prefix() -> &'static str {
    static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PREFIX.get_or_init(|| new_uuid()[..8].to_string())
}

fn mcp_message(server: &str, message: Value) -> Value {
    json!({"subtype": "mcp_message", "server_name": server, "message": message})
}

impl Session {
    /// The JSON-RPC id of the `n`th message to an SDK server.
    fn sdk_message_id(&self, n: u64) -> Value {
        if self.profile.prefixes_sdk_message_ids() {
            json!(format!("{}:{n}", run_prefix()))
        } else {
            json!(n)
        }
    }

    /// Connects the servers whose manifest is used, and sends `initialize`
    /// to the others (before the CLI answers the host's initialize).
    /// `declared` come after the SDK servers of `--mcp-config`.
    pub fn open_sdk_servers(&mut self, declared: Vec<Declared>) -> Vec<Opened> {
        let mut all = std::mem::take(&mut self.sdk_pending);
        merge(&mut all, declared);
        let mut opened = Vec::new();
        for Declared { config, manifest } in all {
            if let Some(Ok(greeting)) = manifest {
                self.servers.add(config, Ok((Link::Host(HostLink { next_id: FIRST_CALL_ID }), greeting)));
                continue;
            }
            let params = json!({"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": self.profile.client_info()});
            let id = self.sdk_message_id(0);
            let message = json!({"method": "initialize", "params": params, "jsonrpc": "2.0", "id": id});
            match self.ask_during_setup(&config.name, message).map(|a| read_reply(&a, &id)) {
                Ok(Reply::Result(initialize)) => opened.push(Opened { config, initialize }),
                failed => self.servers.add(config, Err(setup_failure("initialize", failed))),
            }
        }
        opened
    }

    /// After the answer to the host's initialize: `notifications/initialized`
    /// (its answer is not read). The real CLI sends it at once, racing the
    /// host's first prompt (2 of 5 runs showed the prompt's
    /// session_state_changed first; 2.1.332 and 2.1.334).
    pub fn notify_sdk_servers(&mut self, opened: Vec<Opened>) {
        for Opened { config, initialize } in opened {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            match self.ask_during_setup(&config.name, note) {
                Ok(_) => self.sdk_opened.push(Opened { config, initialize }),
                Err(stop) => self.servers.add(config, Err(setup_failure("notifications/initialized", Err(stop)))),
            }
        }
    }

    /// The end of the handshake, `tools/list`: sent once the turn has
    /// started (after its session_state_changed, before init), as measured.
    pub fn list_sdk_servers(&mut self) {
        for Opened { config, initialize } in std::mem::take(&mut self.sdk_opened) {
            let id = self.sdk_message_id(1);
            let message = json!({"method": "tools/list", "jsonrpc": "2.0", "id": id});
            match self.ask_during_setup(&config.name, message).map(|a| read_reply(&a, &id)) {
                Ok(Reply::Result(listed)) => {
                    let tools = listed.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
                    self.servers.add(config, Ok((Link::Host(HostLink { next_id: FIRST_CALL_ID }), Greeting { initialize, tools })));
                }
                failed => self.servers.add(config, Err(setup_failure("tools/list", failed))),
            }
        }
    }

    fn ask_during_setup(&mut self, server: &str, message: Value) -> Result<Value, Stop> {
        let Some(host) = self.host.clone() else { return Err(Stop::Ended(super::host::Incoming::Eof)) };
        host.ask_deferring(&mut self.out, mcp_message(server, message), self.profile.flushes_control_requests())
    }

    /// Whether `server` is a connected SDK server.
    pub(super) fn on_host(&mut self, server: &str) -> bool {
        self.servers.host_link(server).is_some()
    }

    /// One tools/call on an SDK server, through the host; recorded as
    /// `sdk_server_call` (what the harness counts as the server's calls).
    pub(super) fn run_sdk_tool(&mut self, server: &str, tool: &str, id: &str, arguments: &Value) -> CallOutcome {
        let rid = match self.servers.host_link(server) {
            Some(link) => {
                link.next_id += 1;
                link.next_id - 1
            }
            None => return self.sdk_outcome(Rendered::error(format!("MCP server \"{server}\" is not connected")), Value::Null),
        };
        let meta = json!({"claudecode/toolUseId": id, "progressToken": rid});
        let params = json!({"name": tool, "arguments": arguments, "_meta": meta});
        let message_id = self.sdk_message_id(rid);
        let request = mcp_message(server, json!({"method": "tools/call", "params": params, "jsonrpc": "2.0", "id": message_id}));
        let answer = match self.host.clone() {
            Some(host) => host.ask(&mut self.out, request, self.profile.flushes_control_requests()),
            None => Err(Stop::Ended(super::host::Incoming::Eof)),
        };
        self.rec.record(&json!({
            "event": "sdk_server_call", "server": server, "tool": tool, "call_id": id, "arguments": arguments, "meta": meta,
            "answer": answer.as_ref().ok(),
        }));
        let reply = match &answer {
            Ok(a) => read_reply(a, &message_id),
            Err(stop) => return self.sdk_call_stopped(id, stop),
        };
        match reply {
            Reply::Result(result) => {
                let (rendered, status) = self.render_result(server, tool, &result);
                let mut o = self.sdk_outcome(rendered, result);
                o.item_status = status;
                o
            }
            Reply::Error(text) => self.sdk_outcome(Rendered::error(text), Value::Null),
            Reply::Unusable => {
                let stop = self.wait_out_call(server, tool, id);
                self.sdk_call_stopped(id, &stop)
            }
        }
    }

    /// Waits, as the real CLI does, after an answer it cannot use: until
    /// the host interrupts or its input ends.
    fn wait_out_call(&mut self, server: &str, tool: &str, id: &str) -> Stop {
        self.rec.record(&json!({"event": "sdk_server_unanswered", "server": server, "tool": tool, "call_id": id}));
        let Some(host) = self.host.clone() else { return Stop::Ended(super::host::Incoming::Eof) };
        let name = profile::model_tool_name(server, tool);
        let session_id = self.session_id.clone();
        let stamped = self.profile.stamps_sdk_events();
        let mut beat = |out: &mut super::output::Output, n: u64| {
            let mut event = json!({
                "type": "tool_progress", "tool_use_id": format!("{id}-heartbeat-{}", n - 1), "tool_name": name,
                "parent_tool_use_id": id, "elapsed_time_seconds": n * HEARTBEAT.as_secs(), "heartbeat": true,
                "session_id": session_id, "uuid": new_uuid(),
            });
            if stamped {
                event["written_at"] = json!(stream::timestamp());
            }
            out.event(event);
        };
        host.wait_out(&mut self.out, HEARTBEAT, &mut beat)
    }

    /// A call whose wait the host ended. Unmeasured for SDK servers: an
    /// interrupt ends the turn as one during a prompt does (the STOP text),
    /// and with the host gone the call fails as a closed connection.
    fn sdk_call_stopped(&mut self, id: &str, stop: &Stop) -> CallOutcome {
        match stop {
            Stop::Interrupted => {
                self.rec.record(&json!({"event": "interrupted", "tool_use_id": id, "while": "mcp_message"}));
                self.interrupted = true;
                let rendered = Rendered { content: json!(profile::REJECTED_STOP), is_error: true, tool_use_result: json!(profile::USER_REJECTED) };
                self.sdk_outcome(rendered, Value::Null)
            }
            Stop::Ended(_) => self.sdk_outcome(Rendered::error("MCP error -32000: Connection closed"), Value::Null),
        }
    }

    fn sdk_outcome(&self, rendered: Rendered, mcp_result: Value) -> CallOutcome {
        let failed = rendered.is_error;
        CallOutcome {
            decision: "allowed",
            prompted: false,
            answer: Value::Null,
            rendered,
            item_status: if failed { "failed" } else { "completed" },
            mcp_result,
            denied_event: None,
            denial: false,
            meta: None,
        }
    }
}

/// Why a server's handshake failed (unmeasured: the real CLI's wording).
fn setup_failure(step: &str, failed: Result<Reply, Stop>) -> String {
    match failed {
        Ok(Reply::Error(text)) => format!("{step} failed: {text}"),
        Ok(_) => format!("{step}: no usable answer"),
        Err(_) => format!("{step}: the SDK host is gone"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_as_measured() {
        let tools = json!({"tools": [{"name": "ping"}]});
        let good = json!({"initializeResult": {"protocolVersion": "2025-11-25", "serverInfo": {"name": "insdk"}}, "toolsListResult": tools});
        let old = json!({"initializeResult": {"protocolVersion": "2025-06-18"}, "toolsListResult": tools});
        let request = json!({"sdkMcpServers": ["a", "b", "c", "d", 5], "sdkMcpServerManifests": {"a": good, "b": old, "c": {"nope": 1}}});
        let (declared, parked) = from_initialize(&request);
        assert_eq!(declared.iter().map(|d| d.config.name.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        assert_eq!(parked, Some(json!({"a": "parked", "b": "protocol_version_mismatch", "c": "malformed"})));
        assert!(matches!(&declared[0].manifest, Some(Ok(g)) if g.tools.len() == 1));
        assert!(declared[3].manifest.is_none() && declared.iter().all(|d| d.config.source == "sdk"));
        let (_, none) = from_initialize(&json!({"sdkMcpServers": ["a"]}));
        assert_eq!(none, None);
        assert!(from_initialize(&json!({"sdkMcpServers": "a"})).0.is_empty());
    }

    #[test]
    fn replies_as_measured() {
        let ok = |m: Value| json!({"subtype": "success", "response": {"mcp_response": m}});
        assert_eq!(read_reply(&ok(json!({"id": 2, "result": {"content": []}})), &json!(2)), Reply::Result(json!({"content": []})));
        assert_eq!(read_reply(&ok(json!({"id": 3, "error": {"code": -32603, "message": "BROKE"}})), &json!(3)), Reply::Error("BROKE".into()));
        assert_eq!(read_reply(&json!({"subtype": "error", "error": "CTL"}), &json!(4)), Reply::Error("CTL".into()));
        assert_eq!(read_reply(&ok(json!({"id": 999, "result": {}})), &json!(2)), Reply::Unusable);
        assert_eq!(read_reply(&ok(json!({"id": 2})), &json!(2)), Reply::Unusable);
        assert_eq!(read_reply(&json!({"subtype": "success", "response": {}}), &json!(2)), Reply::Unusable);
    }
}
