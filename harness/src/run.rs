//! Runs one trial: a scenario against one driver on one provider version.
//! Sets up an isolated run directory with the fakes, plays the steps through
//! the driver, then gathers what the fakes recorded into [`Observations`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fakes::codex::script::{Action, Script, Turn};
use fakes::mcp::{start_http, Catalog, HttpServer};
use fakes::version::Version;
use fakes::wire::{read_jsonl, Recorder};
use serde_json::{json, Value};

use crate::driver::{
    BridgeSpec, CatalogRow, Driver, Failure, GatewayEvent, GatewaySpec, Host, HostAnswer, Launch, Prompt, ResumeAnswer, ServerSpec,
    Transport,
};
use crate::scenario::{catalog, toml_to_json, Provider, Scenario, Step, TransportKind};

/// How to start a fake: a program plus leading arguments, so one executable
/// can serve as several fakes.
#[derive(Debug, Clone)]
pub struct FakeCommand {
    pub program: PathBuf,
    pub prefix: Vec<String>,
}

/// Where the fake executables live, and which trials run on real binaries.
#[derive(Debug, Clone)]
pub struct Fakes {
    pub codex: FakeCommand,
    pub claude: FakeCommand,
    pub mcp: FakeCommand,
    /// Records the wire in front of a real provider (`conformance relay`).
    pub relay: FakeCommand,
    /// Real provider binaries by trial key (`codex-0.171.0`): those trials
    /// run on the real CLI against the mock model instead of the fake.
    pub real: BTreeMap<String, PathBuf>,
    /// Only real runs: trials without a real binary are skipped.
    pub real_only: bool,
}

impl Fakes {
    /// Separate `fake-codex`, `fake-claude` and `fake-mcp` executables and
    /// the CLI for `relay` (the test case).
    pub fn from_bins(codex: &str, claude: &str, mcp: &str, cli: &str) -> Fakes {
        let bin = |p: &str| FakeCommand { program: p.into(), prefix: Vec::new() };
        let relay = FakeCommand { program: cli.into(), prefix: vec!["relay".into()] };
        Fakes { codex: bin(codex), claude: bin(claude), mcp: bin(mcp), relay, real: BTreeMap::new(), real_only: false }
    }

    /// One executable that becomes a fake when its first argument says so
    /// (the CLI case: `conformance fake-codex ...`).
    pub fn multicall(program: PathBuf) -> Fakes {
        let sub = |name: &str| FakeCommand { program: program.clone(), prefix: vec![name.to_string()] };
        Fakes {
            codex: sub("fake-codex"),
            claude: sub("fake-claude"),
            mcp: sub("fake-mcp"),
            relay: sub("relay"),
            real: BTreeMap::new(),
            real_only: false,
        }
    }

    /// Runs on the real binaries cached for every measured version (see
    /// scripts/fetch-provider.sh) instead of the fakes.
    pub fn with_cached_real_binaries(mut self) -> Fakes {
        for provider in [Provider::Codex, Provider::Claude] {
            for v in crate::suite::versions_for(provider) {
                if let Some(bin) = crate::real::cached_binary(provider, v) {
                    self.real.insert(format!("{}-{v}", provider.as_str()), bin);
                }
            }
        }
        self.real_only = true;
        self
    }

    /// The real binary this trial runs on, if any.
    pub fn real_binary(&self, provider: Provider, version: Version) -> Option<&PathBuf> {
        self.real.get(&format!("{}-{version}", provider.as_str()))
    }
}

/// The provider's transcript in a run directory, whichever fake wrote it.
pub const TRANSCRIPT: &str = "provider.jsonl";

/// Everything observed during one trial.
#[derive(Debug, Default)]
pub struct Observations {
    pub launch_error: Option<Failure>,
    /// Provider processes started (from the fake's own launch records).
    pub provider_launches: usize,
    pub steps: Vec<StepObservation>,
    /// Host prompts no step accounts for.
    pub stray_prompts: Vec<Prompt>,
    /// Every approvalPolicy the provider's threads were opened with.
    pub approval_policies: Vec<Value>,
    /// Whether each initialize asked for experimentalApi.
    pub experimental_api: Vec<bool>,
    /// Problems found in the recordings regardless of expectations.
    pub violations: Vec<String>,
    pub run_dir: PathBuf,
    /// The trial hit its time limit.
    pub timed_out: bool,
}

#[derive(Debug, Default, Clone)]
pub struct StepObservation {
    /// The fake provider's outcome record for this step, if any.
    pub outcome: Option<Value>,
    pub server_calls: u64,
    pub host_asked: bool,
    /// Calls of the host's own tool this step made through the bridge.
    pub bridge_calls: u64,
    /// The driver reported a bridged record under this step's call id.
    pub driver_recorded: bool,
    /// Gateway pauses the driver made for this step, and the row it bound.
    pub interrupted: bool,
    pub oauth_required: bool,
    pub bound_row: Option<String>,
    pub fingerprint: Option<String>,
    /// A driver call made for this step (turn, resume ...) failed.
    pub driver_error: Option<Failure>,
}

struct HostLog<'a> {
    scenario: &'a Scenario,
    /// Steps of the turn in progress: (index, step).
    turn: Vec<usize>,
    asked: &'a mut Vec<bool>,
    bridge_calls: &'a mut Vec<u64>,
    /// Per step: (approval interrupt, OAuth pause, bound catalog row).
    gateway: &'a mut Vec<(bool, bool, Option<String>)>,
    /// The gateway's token vault, written when the user consents.
    vault: Option<PathBuf>,
    stray: &'a mut Vec<Prompt>,
}

impl Host for HostLog<'_> {
    fn decide(&mut self, prompt: &Prompt) -> HostAnswer {
        let found = self.turn.iter().copied().find(|&i| {
            !self.asked[i]
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
                self.asked[i] = true;
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

    fn interrupt(&mut self, event: &GatewayEvent) -> ResumeAnswer {
        let (binding, oauth) = match event {
            GatewayEvent::ApprovalInterrupt { binding } => (binding, false),
            GatewayEvent::OauthRequired { binding } => (binding, true),
        };
        let gateway = self.scenario.gateway.as_ref().map(|g| g.server.trim().to_string()).unwrap_or_default();
        let step = self.turn.iter().copied().find(|&i| {
            let seen = if oauth { self.gateway[i].1 } else { self.gateway[i].0 };
            !seen && matches!(&self.scenario.steps[i], Step::ToolCall { server, tool, .. } if server.trim() == gateway && tool.trim() == binding.runtime_id)
        });
        let Some(i) = step else {
            self.stray.push(Prompt::ToolCall { server: gateway, tool: format!("{} ({})", binding.runtime_id, if oauth { "oauth" } else { "approval" }) });
            return if oauth { ResumeAnswer::Declined } else { ResumeAnswer::Deny };
        };
        let entry = &mut self.gateway[i];
        entry.2 = Some(binding.catalog_row_id.clone());
        let Step::ToolCall { host, consent, .. } = &self.scenario.steps[i] else { return ResumeAnswer::Deny };
        if oauth {
            entry.1 = true;
            if *consent == Some(crate::scenario::Consent::Grant) {
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
            entry.0 = true;
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
        self.bridge_calls[step] += 1;
        let decl = bridge.tools.get(tool)?;
        Some(json!({"content": decl.content.iter().map(toml_to_json).collect::<Vec<_>>(), "isError": decl.is_error}))
    }
}

fn request_matches(kind: fakes::codex::script::RequestKind, server: Option<&str>, p: &Prompt) -> bool {
    use fakes::codex::script::RequestKind as K;
    match (kind, p) {
        (K::Command, Prompt::Command) | (K::FileChange, Prompt::FileChange) | (K::Permissions, Prompt::Permissions) => true,
        (K::UrlElicitation, Prompt::UrlElicitation { server: s }) | (K::FormElicitation, Prompt::FormElicitation { server: s }) => {
            server.map(str::trim) == Some(s.as_str())
        }
        _ => false,
    }
}

/// The host's side of a trial: its declarations as they evolve.
struct HostState {
    servers: Vec<ServerSpec>,
    /// Declared with attached = false: available to `attach`.
    detachable: Vec<ServerSpec>,
    scoped: Vec<String>,
    secrets: BTreeMap<String, String>,
    gateway: Option<GatewaySpec>,
}

pub fn run_trial(scenario: &Scenario, version: Version, driver: &mut dyn Driver, fakes: &Fakes, dir: &Path) -> Observations {
    let mut obs = Observations { run_dir: dir.to_path_buf(), ..Observations::default() };
    obs.steps = vec![StepObservation::default(); scenario.steps.len()];
    let mut setup = match Setup::create(scenario, version, fakes, dir) {
        Ok(s) => s,
        Err(e) => {
            obs.violations.push(format!("harness could not set up the run: {e}"));
            return obs;
        }
    };
    let mut host = HostState {
        servers: setup.specs.iter().filter(|(attached, _)| *attached).map(|(_, s)| s.clone()).collect(),
        detachable: setup.specs.iter().filter(|(attached, _)| !*attached).map(|(_, s)| s.clone()).collect(),
        scoped: Vec::new(),
        secrets: setup.secrets.clone(),
        gateway: scenario.gateway.as_ref().map(|g| GatewaySpec {
            server: g.server.clone(),
            session: g.session.clone(),
            catalog: g
                .catalog
                .iter()
                .map(|r| CatalogRow {
                    row_id: r.row.clone(),
                    target_id: r.target.clone(),
                    raw_tool: r.tool.clone(),
                    approval: r.approval.clone(),
                    oauth_provider: r.oauth_provider.clone(),
                    custom_parameters: r.custom_parameters.clone(),
                })
                .collect(),
        }),
    };
    let launch = |h: &HostState| Launch {
        provider: scenario.provider.as_str().into(),
        binary: setup.wrapper.clone(),
        home: dir.join("home"),
        cwd: dir.join("work"),
        secrets: h.secrets.clone(),
        global: scenario.policy.global.clone(),
        servers: h.servers.clone(),
        bridge: scenario.bridge.as_ref().map(|b| BridgeSpec { server: b.server.clone(), tools: b.tools.keys().cloned().collect() }),
        gateway: h.gateway.clone(),
    };
    let mut asked = vec![false; scenario.steps.len()];
    let mut bridge_calls = vec![0; scenario.steps.len()];
    let mut gateway_seen = vec![(false, false, None); scenario.steps.len()];
    let vault = scenario.gateway.as_ref().map(|g| setup.vault_file(&g.server));
    let mut bridged_ids: Vec<String> = Vec::new();
    let mut stray = Vec::new();
    match driver.open(&launch(&host)) {
        Err(e) => obs.launch_error = Some(e),
        Ok(()) => {
            let mut turn: Vec<usize> = Vec::new();
            let mut turn_number = 0;
            for (i, step) in scenario.steps.iter().enumerate() {
                if step.in_turn() {
                    turn.push(i);
                    if scenario.steps.get(i + 1).is_some_and(Step::in_turn) {
                        continue;
                    }
                    turn_number += 1;
                    let scoped: Vec<ServerSpec> =
                        host.detachable.iter().filter(|s| host.scoped.contains(&s.name)).cloned().collect();
                    let mut log = HostLog {
                        scenario,
                        turn: std::mem::take(&mut turn),
                        asked: &mut asked,
                        bridge_calls: &mut bridge_calls,
                        gateway: &mut gateway_seen,
                        vault: vault.clone(),
                        stray: &mut stray,
                    };
                    match driver.turn(&format!("turn {turn_number}"), &scoped, &mut log) {
                        Ok(out) => bridged_ids.extend(out.bridged.into_iter().map(|b| b.call_id)),
                        Err(e) => obs.steps[i].driver_error = Some(e),
                    }
                    continue;
                }
                let result = match step {
                    Step::Attach { server } => {
                        host.scoped.push(server.clone());
                        Ok(())
                    }
                    Step::Detach { server } => {
                        host.scoped.retain(|s| s != server);
                        Ok(())
                    }
                    Step::Resume {} => driver.resume(&launch(&host)),
                    Step::RotateSecret { server } => {
                        let var = scenario.server(server).and_then(|s| s.bearer_token_env.clone()).unwrap_or_default();
                        let secret = canary(&scenario.id);
                        host.secrets.insert(var, secret.clone());
                        let _ = std::fs::write(setup.token_file(server), &secret);
                        driver.resume(&launch(&host))
                    }
                    Step::SetPolicy { server, tool, approval_mode } => {
                        for s in host.servers.iter_mut().chain(host.detachable.iter_mut()).filter(|s| s.name == *server) {
                            match approval_mode {
                                Some(m) => s.tools.insert(tool.clone(), m.clone()),
                                None => s.tools.remove(tool),
                            };
                        }
                        Ok(())
                    }
                    Step::ReorderServers {} => {
                        host.servers.reverse();
                        Ok(())
                    }
                    Step::SetCustomParameters { target, custom_parameters } => {
                        for row in host.gateway.iter_mut().flat_map(|g| g.catalog.iter_mut()).filter(|r| &r.target_id == target) {
                            row.custom_parameters = custom_parameters.clone();
                        }
                        Ok(())
                    }
                    Step::Fingerprint { .. } => match driver.fingerprint(&host.servers, &scenario.policy.global) {
                        Ok(fp) => {
                            obs.steps[i].fingerprint = Some(fp);
                            Ok(())
                        }
                        Err(e) => Err(e),
                    },
                    Step::ToolCall { .. } | Step::Request { .. } | Step::RawRequest { .. } => Ok(()),
                };
                if let Err(e) = result {
                    obs.steps[i].driver_error = Some(e);
                }
            }
        }
    }
    driver.close();
    let secrets = setup.all_secrets(&host.secrets);
    drop(setup.http);
    if setup.model.take().is_some() {
        match scenario.provider {
            Provider::Claude => crate::real::derive_claude_outcomes(scenario, &dir.join(TRANSCRIPT), &setup.recordings),
            _ => crate::real::derive_outcomes(scenario, dir, &dir.join(TRANSCRIPT)),
        }
    }
    for (i, a) in asked.into_iter().enumerate() {
        obs.steps[i].host_asked = a;
        obs.steps[i].bridge_calls = bridge_calls[i];
        let (interrupted, oauth, row) = gateway_seen[i].clone();
        obs.steps[i].interrupted = interrupted;
        obs.steps[i].oauth_required = oauth;
        obs.steps[i].bound_row = row;
    }
    obs.stray_prompts = stray;
    gather(scenario, version, dir, &setup.recordings, &secrets, &mut obs);
    let bridge_server = scenario.bridge.as_ref().map(|b| b.server.trim());
    for (step, decl) in obs.steps.iter_mut().zip(&scenario.steps) {
        let call_id = step.outcome.as_ref().and_then(|o| o["call_id"].as_str()).unwrap_or("");
        step.driver_recorded = !call_id.is_empty() && bridged_ids.iter().any(|b| b == call_id);
        // For the host's own tools, "the server" is the host.
        if matches!(decl, Step::ToolCall { server, .. } if Some(server.trim()) == bridge_server) {
            step.server_calls = step.bridge_calls;
        }
    }
    obs
}

/// Files and processes prepared for one trial.
struct Setup {
    wrapper: PathBuf,
    /// (attached, spec) per declared server, in declaration order.
    specs: Vec<(bool, ServerSpec)>,
    secrets: BTreeMap<String, String>,
    recordings: BTreeMap<String, PathBuf>,
    http: Vec<HttpServer>,
    /// The mock model API, for a run on a real provider.
    model: Option<fakes::model::MockModel>,
    dir: PathBuf,
}

impl Setup {
    fn create(scenario: &Scenario, version: Version, fakes: &Fakes, dir: &Path) -> std::io::Result<Setup> {
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
            version: version.to_string(),
            transcript: dir.join(TRANSCRIPT),
            state: dir.join("provider-state.json"),
            turns: turns(scenario),
        };
        let script_path = dir.join("script.json");
        std::fs::write(&script_path, serde_json::to_string_pretty(&script).map_err(std::io::Error::other)?)?;
        let real = fakes.real_binary(scenario.provider, version);
        match scenario.provider {
            Provider::Codex if real.is_some() => {
                let model = fakes::model::start(script.turns.clone(), Recorder::open(&dir.join("model.jsonl"))?)?;
                let codex = real.cloned().unwrap_or_default();
                crate::real::write_codex_wrapper(&setup.wrapper, &fakes.relay, &dir.join(TRANSCRIPT), &codex, &model.openai_base())?;
                setup.model = Some(model);
            }
            Provider::Codex => write_wrapper(&setup.wrapper, &fakes.codex, &script_path)?,
            Provider::Claude if real.is_some() => {
                let model = fakes::model::start(script.turns.clone(), Recorder::open(&dir.join("model.jsonl"))?)?;
                let claude = real.cloned().unwrap_or_default();
                let home = dir.join("claude-home");
                crate::real::write_claude_wrapper(&setup.wrapper, &fakes.relay, &dir.join(TRANSCRIPT), &claude, &model.anthropic_base(), &home)?;
                setup.model = Some(model);
            }
            Provider::Claude => write_wrapper(&setup.wrapper, &fakes.claude, &script_path)?,
            // No fake to simulate: record that the driver launched it at all.
            Provider::Cursor | Provider::Codebuddy => write_launch_recorder(&setup.wrapper, &dir.join(TRANSCRIPT))?,
        }
        Ok(setup)
    }

    fn vault_file(&self, server: &str) -> PathBuf {
        self.dir.join(format!("mcp/{}.vault", server.trim()))
    }

    fn token_file(&self, server: &str) -> PathBuf {
        self.dir.join(format!("mcp/{}.token", server.trim()))
    }

    /// Every secret value used in the run, initial and rotated, once each.
    fn all_secrets(&self, current: &BTreeMap<String, String>) -> Vec<String> {
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
                arguments: call_arguments(i, arguments.as_ref()),
            }),
            Step::Request { request, server, .. } => {
                Some(Action::Request { step: i, request: *request, server: server.as_ref().map(|s| s.trim().to_string()) })
            }
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

/// Unique default arguments let the judge attribute server calls to steps.
fn call_arguments(step: usize, given: Option<&toml::Table>) -> Value {
    given.map(toml_to_json).unwrap_or_else(|| json!({"note": format!("step {}", step + 1)}))
}

/// The scenario reaches the fake through this wrapper at the binary path the
/// driver is given, so nothing depends on the driver passing env through.
fn write_wrapper(path: &Path, fake: &FakeCommand, script: &Path) -> std::io::Result<()> {
    let args = ["--run".to_string(), script.display().to_string()];
    write_exec_script(path, "", fake, &args)
}

/// A stand-in CLI for providers the fakes do not simulate: it appends a
/// launch record and fails.
fn write_launch_recorder(path: &Path, transcript: &Path) -> std::io::Result<()> {
    let target = shell_quote(&transcript.display().to_string());
    std::fs::write(path, format!("#!/bin/sh\necho '{{\"event\":\"launch\"}}' >> {target}\nexit 1\n"))?;
    make_executable(path)
}

/// A single-quoted shell word.
pub(crate) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// An executable `/bin/sh` script at `path` that runs `preamble` (already
/// shell text), then execs `command` with `args` and its own arguments.
pub(crate) fn write_exec_script(path: &Path, preamble: &str, command: &FakeCommand, args: &[String]) -> std::io::Result<()> {
    let mut line = vec![shell_quote(&command.program.display().to_string())];
    line.extend(command.prefix.iter().chain(args).map(|a| shell_quote(a)));
    std::fs::write(path, format!("#!/bin/sh\n{preamble}exec {} \"$@\"\n", line.join(" ")))?;
    make_executable(path)
}

pub(crate) fn make_executable(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// A made-up secret, unique per use, easy to search for in recordings.
fn canary(scenario: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("canary-{}-{:x}{:x}", scenario.len(), nanos, N.fetch_add(1, Ordering::Relaxed))
}

fn gather(
    scenario: &Scenario,
    version: Version,
    dir: &Path,
    recordings: &BTreeMap<String, PathBuf>,
    secrets: &[String],
    obs: &mut Observations,
) {
    let codex = read_jsonl(&dir.join(TRANSCRIPT)).unwrap_or_default();
    obs.provider_launches = codex.iter().filter(|e| e["event"] == "launch").count();
    obs.approval_policies = codex.iter().filter(|e| e["event"] == "thread").map(|e| e["approvalPolicy"].clone()).collect();
    obs.experimental_api = codex
        .iter()
        .filter(|e| e["dir"] == "c2s" && e["msg"]["method"] == "initialize")
        .map(|e| e["msg"]["params"]["capabilities"]["experimentalApi"] == json!(true))
        .collect();
    for e in codex.iter().filter(|e| e["event"] == "outcome") {
        if let Some(i) = e["step"].as_u64().map(|s| s as usize) {
            if let Some(step) = obs.steps.get_mut(i) {
                step.outcome = Some(e.clone());
            }
        }
    }
    // Server calls, attributed by server, tool and exact arguments.
    let calls: Vec<(String, Value)> = recordings
        .iter()
        .flat_map(|(server, path)| {
            read_jsonl(path)
                .unwrap_or_default()
                .into_iter()
                .filter(|e| e["event"] == "tools/call")
                .map(move |e| (server.clone(), e))
        })
        .collect();
    for (i, step) in scenario.steps.iter().enumerate() {
        if let Step::ToolCall { server, tool, arguments, .. } = step {
            let args = call_arguments(i, arguments.as_ref());
            obs.steps[i].server_calls = calls
                .iter()
                .filter(|(s, e)| s == server.trim() && e["tool"] == json!(tool.trim()) && e["arguments"] == args)
                .count() as u64;
        }
    }
    // Each server request must be answered at most once.
    let mut replies: BTreeMap<String, usize> = BTreeMap::new();
    for e in &codex {
        if e["dir"] == "c2s" && e["msg"].get("method").is_none() {
            if let Some(id) = e["msg"].get("id") {
                *replies.entry(id.to_string()).or_default() += 1;
            }
        }
    }
    for (id, n) in replies.iter().filter(|(_, n)| **n > 1) {
        obs.violations.push(format!("the driver answered server request {id} {n} times"));
    }
    // Every wire message must be one the real Codex of this version sends or accepts.
    if scenario.provider == Provider::Codex {
        for problem in crate::schema::check_transcript(&version.to_string(), &codex) {
            obs.violations.push(format!("schema: {problem}"));
        }
    }
    // Secrets must not be written anywhere the harness can see.
    for secret in secrets {
        for path in files_below(dir) {
            if path.extension().is_some_and(|e| e == "token") {
                continue; // the fake server's own copy of the expected token
            }
            if std::fs::read(&path).is_ok_and(|b| contains(&b, secret.as_bytes())) {
                obs.violations.push(format!("a secret value was written to {}", path.strip_prefix(dir).unwrap_or(&path).display()));
            }
        }
    }
}

fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(entries) = std::fs::read_dir(&d) {
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push(p);
                }
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Kills the provider processes the fake recorded launching in `dir`.
pub fn kill_providers(dir: &Path) {
    for e in read_jsonl(&dir.join(TRANSCRIPT)).unwrap_or_default() {
        if e["event"] == "launch" {
            if let Some(pid) = e["pid"].as_u64() {
                let _ = std::process::Command::new("kill")
                    .args(["-s", "KILL", "--", &pid.to_string()])
                    .stderr(std::process::Stdio::null())
                    .status();
            }
        }
    }
}
