//! A trial's run directory: the fake MCP servers (stdio declarations and
//! running HTTP servers), the fake provider's script, and the wrapper at the
//! binary path the driver is given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fakes::script::{Action, Script, Turn};
use fakes::mcp::{start_http, Catalog, HttpServer};
use fakes::wire::Recorder;
use serde_json::{json, Value};

use super::providers::Fakes;
use super::{wrapper, TRANSCRIPT};
use crate::driver::{ServerSpec, Transport};
use crate::plan::Target;
use crate::scenario::{catalog, toml_to_json, Provider, Scenario, Step, TransportKind};

/// Files and processes prepared for one trial.
pub(super) struct Setup {
    pub wrapper: PathBuf,
    /// (attached, spec) per declared server, in declaration order.
    pub specs: Vec<(bool, ServerSpec)>,
    pub secrets: BTreeMap<String, String>,
    pub recordings: BTreeMap<String, PathBuf>,
    pub http: Vec<HttpServer>,
    /// The mock model API, for a run on a real provider.
    pub model: Option<fakes::model::MockModel>,
    dir: PathBuf,
}

impl Setup {
    pub fn create(scenario: &Scenario, target: Target, fakes: &Fakes, dir: &Path) -> std::io::Result<Setup> {
        let version = target.version;
        for d in ["bin", "home", "work", "mcp"] {
            std::fs::create_dir_all(dir.join(d))?;
        }
        let mut setup = Setup {
            wrapper: dir.join("bin").join(scenario.provider.as_str()),
            specs: Vec::new(),
            secrets: BTreeMap::new(),
            recordings: BTreeMap::new(),
            http: Vec::new(),
            model: None,
            dir: dir.to_path_buf(),
        };
        for decl in &scenario.servers {
            let name = decl.name.trim().to_string();
            let gateway = scenario.gateway.as_ref().filter(|g| g.server.trim() == name);
            let exposed = match gateway {
                Some(g) => crate::scenario::gateway_catalog(g),
                None => catalog(decl),
            };
            let tools: Vec<Value> = exposed
                .into_iter()
                .map(|(tool, c)| {
                    let mut t = json!({"name": tool});
                    if let Some(a) = &c.annotations {
                        t["annotations"] = toml_to_json(a);
                    }
                    if let Some(d) = &c.description {
                        t["description"] = json!(d);
                    }
                    if let Some(ms) = c.delay_ms {
                        t["delay_ms"] = json!(ms);
                    }
                    if let Some(q) = &c.elicits {
                        t["elicits"] = json!(q);
                    }
                    if let Some(url) = &c.elicit_url {
                        t["elicit_url"] = json!(url);
                    }
                    t
                })
                .collect();
            // A gateway blocks a target that needs OAuth until the vault has consent.
            let tools: Vec<Value> = tools
                .into_iter()
                .map(|mut t| {
                    let row = gateway.and_then(|g| g.catalog.iter().find(|r| json!(r.runtime_id()) == t["name"]));
                    if let Some(r) = row.filter(|r| r.oauth_provider.is_some()) {
                        t["oauth_target"] = json!(r.target);
                    }
                    t
                })
                .collect();
            let catalog_path = dir.join(format!("mcp/{name}.json"));
            let mut doc = json!({"server": name, "tools": tools});
            if gateway.is_some() {
                doc["vault"] = json!(setup.vault_file(&name));
            }
            std::fs::write(&catalog_path, doc.to_string())?;
            let record = dir.join(format!("mcp/{name}.jsonl"));
            setup.recordings.insert(name.clone(), record.clone());
            let transport = match decl.transport {
                TransportKind::Stdio => {
                    let mut args = fakes.mcp.prefix.clone();
                    args.extend([
                        "stdio".into(),
                        "--catalog".into(),
                        catalog_path.display().to_string(),
                        "--record".into(),
                        record.display().to_string(),
                    ]);
                    Transport::Stdio { command: fakes.mcp.program.display().to_string(), args }
                }
                TransportKind::Http => {
                    let token_file = decl.bearer_token_env.as_ref().map(|var| {
                        let secret = canary(&scenario.id);
                        setup.secrets.insert(var.clone(), secret.clone());
                        (setup.token_file(&name), secret)
                    });
                    if let Some((path, secret)) = &token_file {
                        std::fs::write(path, secret)?;
                    }
                    let cat = Catalog::load(&catalog_path).map_err(std::io::Error::other)?;
                    let server = start_http(cat, Recorder::open(&record)?, token_file.map(|(p, _)| p))?;
                    let url = server.url();
                    setup.http.push(server);
                    Transport::Http { url, bearer_token_env: decl.bearer_token_env.clone() }
                }
            };
            let tools = decl.tools.iter().map(|(t, p)| (t.clone(), p.approval_mode.clone())).collect();
            // Names go to the driver as written: normalizing them is its job.
            let spec = ServerSpec { name: decl.name.clone(), transport, reason: decl.reason.clone(), tools };
            setup.specs.push((decl.attached, spec));
        }
        let script = Script {
            version: version.map(|v| v.to_string()).unwrap_or_default(),
            transcript: dir.join(TRANSCRIPT),
            state: dir.join("provider-state.json"),
            turns: turns(scenario),
        };
        let script_path = dir.join("script.json");
        std::fs::write(&script_path, serde_json::to_string_pretty(&script).map_err(std::io::Error::other)?)?;
        let real = fakes.real_binary(scenario.provider, version);
        let claude_env = wrapper::claude_env(target.tool_search, scenario.mcp_tool_timeout_ms);
        match scenario.provider {
            Provider::Codex if real.is_some() => {
                let model = fakes::model::start(script.turns.clone(), Recorder::open(&dir.join("model.jsonl"))?)?;
                let codex = real.cloned().unwrap_or_default();
                wrapper::write_real_codex(&setup.wrapper, &fakes.relay, &dir.join(TRANSCRIPT), &codex, &model.openai_base())?;
                setup.model = Some(model);
            }
            Provider::Codex => wrapper::write_fake(&setup.wrapper, &fakes.codex, &script_path, "")?,
            Provider::Claude if real.is_some() => {
                let model = fakes::model::start(script.turns.clone(), Recorder::open(&dir.join("model.jsonl"))?)?;
                let claude = real.cloned().unwrap_or_default();
                let home = dir.join("claude-home");
                let own: Vec<String> = setup.http.iter().map(|s| s.url()).collect();
                let real = wrapper::RealClaude { program: &claude, model_base: &model.anthropic_base(), home: &home, own: &own };
                wrapper::write_real_claude(&setup.wrapper, &fakes.relay, &dir.join(TRANSCRIPT), &real, &claude_env)?;
                setup.model = Some(model);
            }
            Provider::Claude => {
                wrapper::write_fake(&setup.wrapper, &fakes.claude, &script_path, &claude_env)?
            }
            // No fake to simulate: record that the driver launched it at all.
            Provider::Cursor | Provider::Codebuddy => wrapper::write_launch_recorder(&setup.wrapper, &dir.join(TRANSCRIPT))?,
        }
        Ok(setup)
    }

    pub fn vault_file(&self, server: &str) -> PathBuf {
        self.dir.join(format!("mcp/{}.vault", server.trim()))
    }

    pub fn token_file(&self, server: &str) -> PathBuf {
        self.dir.join(format!("mcp/{}.token", server.trim()))
    }

    /// Every secret value used in the run, initial and rotated, once each.
    pub fn all_secrets(&self, current: &BTreeMap<String, String>) -> Vec<String> {
        let all: std::collections::BTreeSet<&String> = self.secrets.values().chain(current.values()).collect();
        all.into_iter().cloned().collect()
    }
}


/// The fake's script: one turn per run of consecutive in-turn steps.
fn turns(scenario: &Scenario) -> Vec<Turn> {
    let mut turns = Vec::new();
    let mut current = Turn::default();
    for (i, step) in scenario.steps.iter().enumerate() {
        let action = match step {
            Step::ToolCall { server, tool, arguments, .. } => Some(Action::ToolCall {
                step: i,
                server: server.trim().to_string(),
                tool: tool.trim().to_string(),
                arguments: crate::scenario::call_arguments(i, arguments.as_ref()),
            }),
            Step::Request { request, server, .. } => Some(Action::Request {
                step: i,
                request: *request,
                server: server.as_ref().map(|s| s.trim().to_string()),
                raised_by: crate::scenario::raising_call(&scenario.steps, i),
            }),
            Step::RawRequest { method, params, .. } => Some(Action::Raw {
                step: i,
                method: method.clone(),
                params: params.as_ref().map(toml_to_json).unwrap_or(json!({})),
            }),
            _ => None,
        };
        match action {
            Some(a) => current.actions.push(a),
            None if !current.actions.is_empty() => turns.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.actions.is_empty() {
        turns.push(current);
    }
    turns
}


/// A made-up secret, unique per use, easy to search for in recordings.
pub(super) fn canary(scenario: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("canary-{}-{:x}{:x}", scenario.len(), nanos, N.fetch_add(1, Ordering::Relaxed))
}
