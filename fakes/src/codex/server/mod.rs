//! The app-server session loop: client requests in, notifications and server
//! requests out, every message recorded.

pub(crate) mod call_meta;
mod channel;
mod command;
mod patch;
mod permissions;
mod user_input;
mod notices;
mod rollout;
pub(crate) mod shapes;
pub(crate) mod thread;
pub(crate) mod turn;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use self::channel::Channel;
pub use self::channel::{decision_answer, elicitation_answer, permissions_answer, user_input_answer};
use self::rollout::Rollout;
use self::thread::{new_thread_id, target, Thread};
use self::turn::Turn;
use super::config::{self, BaseConfig, Settings};
use super::effective;
use super::profile::{self, Profile};
use crate::script::Script;
use crate::mcp_client::McpConnection;
use crate::wire::Recorder;

/// A thread/start or thread/resume that succeeded, with its result.
enum Opened {
    /// A new thread: announced with thread/started; its MCP servers start next.
    Started(Value),
    /// A thread loaded from its rollout, with its own config; its MCP servers
    /// start next, and the last turn's token usage is restored.
    Resumed { result: Value, last_turn: Option<String> },
    /// The thread this process already runs, unchanged; its last turn's
    /// token usage is reported again.
    Rejoined { result: Value, last_turn: Option<String> },
}

pub struct Server {
    profile: Profile,
    script: Script,
    rec: Recorder,
    base: BaseConfig,
    env: BTreeMap<String, String>,
    channel: Channel,
    initialized: bool,
    experimental_api: bool,
    /// The startup notices went out.
    announced: bool,
    /// `clientInfo.name` from initialize: the thread's `originator`.
    client_name: String,
    thread: Option<Thread>,
}

impl Server {
    pub fn new(
        profile: Profile,
        script: Script,
        rec: Recorder,
        base: BaseConfig,
        env: BTreeMap<String, String>,
    ) -> Server {
        Server {
            channel: Channel::stdio(rec.clone()),
            profile,
            script,
            rec,
            base,
            env,
            initialized: false,
            experimental_api: false,
            announced: false,
            client_name: String::new(),
            thread: None,
        }
    }

    pub fn run(mut self) -> i32 {
        while let Some(msg) = self.channel.next_message(None) {
            self.handle_client(msg);
        }
        self.rec.record(&json!({"event": "exit", "code": 0, "reason": "stdin closed"}));
        0
    }

    fn handle_client(&mut self, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str).map(String::from);
        let id = msg.get("id").cloned();
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        // Notifications and stray responses need no answer; once the
        // client is initialized, the startup notices follow.
        if id.is_none() && method.as_deref() == Some("initialized") && self.initialized && !self.announced {
            self.announce_startup();
        }
        let (Some(method), Some(id)) = (method, id) else { return };
        let result = match method.as_str() {
            "initialize" => self.initialize(&params),
            _ if !self.initialized => Err((-32600, profile::NOT_INITIALIZED.to_string())),
            "thread/start" | "thread/resume" => return self.answer_thread(&id, &method, &params),
            "turn/start" => return self.start_turn(&id, &params),
            "turn/interrupt" => Ok(json!({})),
            other => Err((-32601, profile::unknown_method(other))),
        };
        self.channel.respond(&id, result);
    }

    /// What every app-server sends once it is up, whatever the client does
    /// next: the sandbox warning (when it applies) and the remote-control status.
    fn announce_startup(&mut self) {
        self.announced = true;
        if let Some(warning) = notices::config_warning(self.env.get("PATH").map(String::as_str)) {
            self.channel.notify("configWarning", warning);
        }
        self.channel.notify("remoteControl/status/changed", notices::remote_control(&self.base.home));
    }

    /// Answers thread/start or thread/resume, with the notifications the
    /// real app-server sends around the answer.
    fn answer_thread(&mut self, id: &Value, method: &str, params: &Value) {
        let opened = match self.open_thread(method, params) {
            Ok(o) => o,
            Err(e) => return self.channel.respond(id, Err(e)),
        };
        let Some(thread_id) = self.thread.as_ref().map(|t| t.id.clone()) else { return };
        if method == "thread/resume" && self.profile.resume_warns_full_history() {
            self.channel.notify("deprecationNotice", json!({"summary": profile::FULL_HISTORY_DEPRECATED, "details": null}));
        }
        match opened {
            Opened::Started(result) => {
                let info = result["thread"].clone();
                self.channel.respond(id, Ok(result));
                self.channel.notify("thread/started", json!({"thread": info}));
                self.start_servers();
            }
            Opened::Resumed { result, last_turn } => {
                self.channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "idle"}}));
                self.channel.respond(id, Ok(result));
                self.channel.notify("thread/goal/cleared", json!({"threadId": thread_id}));
                self.start_servers();
                self.restore_usage(&thread_id, last_turn);
            }
            // Measured 2026-12-03 on 0.146.0 and 0.171.0: no status change,
            // no server restart; the usage, then the goal.
            Opened::Rejoined { result, last_turn } => {
                self.channel.respond(id, Ok(result));
                self.restore_usage(&thread_id, last_turn);
                self.channel.notify("thread/goal/cleared", json!({"threadId": thread_id}));
            }
        }
    }

    /// A resumed thread's last turn's token usage, reported again.
    fn restore_usage(&mut self, thread_id: &str, last_turn: Option<String>) {
        if let Some(turn_id) = last_turn {
            self.channel.notify("thread/tokenUsage/updated", notices::token_usage(thread_id, &turn_id));
        }
    }

    fn initialize(&mut self, params: &Value) -> Result<Value, (i64, String)> {
        if self.initialized {
            return Err((-32600, profile::ALREADY_INITIALIZED.into()));
        }
        self.initialized = true;
        self.experimental_api = params.pointer("/capabilities/experimentalApi").and_then(Value::as_bool) == Some(true);
        let name = params.pointer("/clientInfo/name").and_then(Value::as_str).unwrap_or("unknown");
        self.client_name = name.to_string();
        Ok(json!({
            "userAgent": format!("{name}/{} (fake)", self.profile.version),
            "codexHome": self.base.home.display().to_string(),
            "platformFamily": "unix",
            "platformOs": "linux",
        }))
    }

    fn open_thread(&mut self, method: &str, params: &Value) -> Result<Opened, (i64, String)> {
        let resume = if method == "thread/resume" {
            match params.get("threadId").and_then(Value::as_str) {
                // Real Codex writes a thread's rollout at its first turn; a
                // thread that never had one cannot be resumed.
                Some(t) => match Rollout::find(&self.base.home, t) {
                    Some(rollout) => Some((t.to_string(), rollout)),
                    None => return Err((-32600, profile::no_rollout(t))),
                },
                None => return Err((-32600, profile::MISSING_THREAD_ID.to_string())),
            }
        } else {
            None
        };
        let policy = params.get("approvalPolicy").cloned().unwrap_or(json!("on-request"));
        match &policy {
            Value::String(s) if ["untrusted", "on-failure", "on-request", "never"].contains(&s.as_str()) => {}
            Value::Object(o) if o.contains_key("granular") => {
                if !self.experimental_api {
                    return Err((-32600, profile::GRANULAR_NEEDS_EXPERIMENTAL_API.into()));
                }
            }
            other => return Err((-32600, profile::unknown_approval_policy(other))),
        }
        // Resuming the thread this process has loaded rejoins it: it keeps
        // the approval policy, sandbox, config and MCP servers it started
        // with, and its result reports them; those sent with the resume are
        // not applied, and no server starts again (measured on every MEASURED
        // version: a policy change needs a new app-server).
        if let (Some((id, _)), Some(thread)) = (&resume, &self.thread) {
            if thread.id == *id {
                self.rec.record(&json!({
                    "event": "thread", "method": method, "id": id, "rejoined": true,
                    "approvalPolicy": thread.approval_policy, "sandbox": thread.sandbox,
                }));
                self.rec.record(&json!({
                    "event": effective::EVENT, "thread": id, "method": method, "rejoined": true, "servers": thread.approval_settings,
                }));
                let cwd = thread.info["cwd"].as_str().unwrap_or("/").to_string();
                let opened = shapes::thread_opened(&self.profile, &thread.info, &cwd, &thread.approval_policy, &thread.sandbox);
                let history = thread.rollout.history(&self.profile);
                let last_turn = history.last_turn_id().map(String::from);
                return Ok(Opened::Rejoined { result: shapes::thread_resumed(&self.profile, opened, &history), last_turn });
            }
        }
        let sandbox = params.get("sandbox").and_then(Value::as_str).unwrap_or("read-only").to_string();
        let settings: Settings = self.base.for_thread(params.get("config")).map_err(|e| (-32600, e))?;
        let source = if resume.is_some() { config::THREAD_RESUME } else { config::THREAD_START };
        let approval_settings = effective::describe(&settings, &self.base.sources(params.get("config"), source));
        let (id, rollout) = match resume {
            Some(found) => found,
            None => {
                let id = new_thread_id(&self.script, self.channel.next_request_id());
                let rollout = Rollout::for_new_thread(&self.base.home, &id);
                (id, rollout)
            }
        };
        self.rec.record(&json!({"event": "thread", "method": method, "id": id, "approvalPolicy": policy, "sandbox": sandbox}));
        // What the judge reads to check the driver's rendering, whichever
        // config source it used.
        self.rec.record(&json!({"event": effective::EVENT, "thread": id, "method": method, "servers": approval_settings}));
        self.thread = None; // stop the old thread's MCP servers first
        let cwd = match params.get("cwd").and_then(Value::as_str) {
            Some(c) => c.to_string(),
            None => std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| "/".into()),
        };
        let info = shapes::thread_object(&self.profile, &id, &cwd, &self.client_name, &rollout.path_text());
        let result = shapes::thread_opened(&self.profile, &info, &cwd, &policy, &sandbox);
        let mut first_turn = None;
        let opened = if rollout.exists() {
            // Each resume of a written rollout records the settings it
            // applied, turn or not (two resumes before a turn move the
            // cursors by two: gen-21-293 on 0.155.1).
            if self.profile.rollout_records_resumed_settings() {
                rollout.event("thread_settings_applied", json!({}));
            }
            let history = rollout.history(&self.profile);
            first_turn = history.turns.first().and_then(|t| t["id"].as_str()).map(String::from);
            let last_turn = history.last_turn_id().map(String::from);
            Opened::Resumed { result: shapes::thread_resumed(&self.profile, result, &history), last_turn }
        } else {
            Opened::Started(result)
        };
        self.thread = Some(Thread {
            id,
            info,
            approval_policy: policy,
            sandbox,
            settings,
            approval_settings,
            servers: BTreeMap::new(),
            approved_for_session: BTreeSet::new(),
            rollout,
            first_turn,
        });
        Ok(opened)
    }

    /// Connects every enabled MCP server of the thread, announcing each
    /// start as the real CLI does.
    fn start_servers(&mut self) {
        let Some(thread) = self.thread.as_ref() else { return };
        let thread_id = thread.id.clone();
        let enabled: Vec<_> = thread
            .settings
            .mcp_servers
            .iter()
            .filter(|(_, s)| s.enabled.unwrap_or(true))
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect();
        let client = self.profile.mcp_client();
        for (name, settings) in enabled {
            let starting = shapes::startup_status(&self.profile, &thread_id, &name, "starting", Value::Null);
            self.channel.notify("mcpServer/startupStatus/updated", starting);
            let conn = target(&settings, &self.env).and_then(|t| McpConnection::connect(&t, &self.env, &client));
            let (status, error) = match &conn {
                Ok(_) => ("ready", Value::Null),
                Err(e) => ("failed", json!(e)),
            };
            self.rec.record(&json!({"event": "mcp_startup", "server": name, "status": status, "error": error}));
            let done = shapes::startup_status(&self.profile, &thread_id, &name, status, error);
            self.channel.notify("mcpServer/startupStatus/updated", done);
            if let Some(t) = self.thread.as_mut() {
                t.servers.insert(name, conn);
            }
        }
    }

    fn start_turn(&mut self, id: &Value, params: &Value) {
        let Some(thread) = self.thread.as_mut() else {
            return self.channel.respond(id, Err((-32600, profile::NO_ACTIVE_THREAD.into())));
        };
        if params.get("threadId").and_then(Value::as_str) != Some(thread.id.as_str()) {
            let asked = params.get("threadId").unwrap_or(&Value::Null);
            return self.channel.respond(id, Err((-32600, profile::thread_not_found(asked))));
        }
        let turn = Turn {
            profile: self.profile,
            script: &self.script,
            home: &self.base.home,
            rec: &self.rec,
            channel: &mut self.channel,
            thread,
            call_meta: Default::default(),
            experimental_api: self.experimental_api,
            raised: Vec::new(),
            patched: Vec::new(),
        };
        turn.play(id, params);
    }
}
