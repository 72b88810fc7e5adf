//! Plays a scenario's steps through the driver: opens the session, runs
//! each turn with the simulated host, applies the host's own actions
//! (attach, resume, rotate a secret, change a policy ...) between turns.

use std::collections::BTreeMap;
use std::path::Path;

use super::host::HostLog;
use super::providers::Fakes;
use super::setup::{canary, Setup};
use super::{observe, HostSaw, Observations, StepObservation, TRANSCRIPT};
use crate::driver::{BridgeSpec, CatalogRow, Driver, GatewayApproval, GatewaySpec, Launch, Process, ServerSpec};
use crate::plan::Target;
use crate::scenario::{Provider, Scenario, Step};

/// The host's side of a trial: its declarations as they evolve.
struct HostState {
    servers: Vec<ServerSpec>,
    /// Declared with attached = false: available to `attach`.
    detachable: Vec<ServerSpec>,
    scoped: Vec<String>,
    secrets: BTreeMap<String, String>,
    gateway: Option<GatewaySpec>,
}


pub(super) fn play(scenario: &Scenario, target: Target, driver: &mut dyn Driver, fakes: &Fakes, dir: &Path) -> Observations {
    let mut obs = Observations::default();
    obs.run.path = dir.to_path_buf();
    obs.claimed = driver.capabilities();
    obs.steps = vec![StepObservation::default(); scenario.steps.len()];
    let mut setup = match Setup::create(scenario, target, fakes, dir) {
        Ok(s) => s,
        Err(e) => {
            obs.run.setup_error = Some(format!("harness could not set up the run: {e}"));
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
                    approval: if r.approval == "required" { GatewayApproval::Required } else { GatewayApproval::None },
                    oauth_provider: r.oauth_provider.clone(),
                    custom_parameters: r.custom_parameters.clone(),
                })
                .collect(),
        }),
    };
    let launch = |h: &HostState| Launch {
        provider: scenario.provider.as_str().into(),
        process: Process { binary: setup.wrapper.clone(), home: dir.join("home"), cwd: dir.join("work"), secrets: h.secrets.clone() },
        global: scenario.policy.global.clone(),
        servers: h.servers.clone(),
        bridge: scenario.bridge.as_ref().map(|b| BridgeSpec { server: b.server.clone(), tools: b.tools.keys().cloned().collect() }),
        gateway: h.gateway.clone(),
    };
    let mut saw = vec![HostSaw::default(); scenario.steps.len()];
    let vault = scenario.gateway.as_ref().map(|g| setup.vault_file(&g.server));
    let mut bridged_ids: Vec<String> = Vec::new();
    let mut stray = Vec::new();
    match driver.open(&launch(&host)) {
        Err(e) => obs.launch_error = Some(e),
        Ok(()) => {
            let mut turn: Vec<usize> = Vec::new();
            let mut turn_number = 0;
            for (i, step) in scenario.steps.iter().enumerate() {
                // A stopped run plays no further step; what ran is judged.
                if crate::stop::requested() {
                    break;
                }
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
                        saw: &mut saw,
                        vault: vault.clone(),
                        stray: &mut stray,
                        edited: None,
                    };
                    match driver.turn(&format!("turn {turn_number}"), &scoped, &mut log) {
                        Ok(out) => bridged_ids.extend(out.bridged.into_iter().map(|b| b.call_id)),
                        Err(e) => obs.steps[i].driver.error = Some(e),
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
                            obs.steps[i].driver.fingerprint = Some(fp);
                            Ok(())
                        }
                        Err(e) => Err(e),
                    },
                    Step::PermissionMode { mode } => driver.permission_mode(mode),
                    Step::ToolCall { .. } | Step::Request { .. } | Step::RawRequest { .. } => Ok(()),
                };
                if let Err(e) = result {
                    obs.steps[i].driver.error = Some(e);
                }
            }
        }
    }
    driver.close();
    super::settle_servers(&setup.recordings);
    let secrets = setup.all_secrets(&host.secrets);
    drop(setup.http);
    if setup.model.take().is_some() {
        obs.run.real = true;
        match scenario.provider {
            Provider::Claude => super::real::derive_claude_outcomes(scenario, &dir.join(TRANSCRIPT), &setup.recordings),
            _ => super::real::derive_outcomes(scenario, dir, &dir.join(TRANSCRIPT)),
        }
    }
    for (step, host) in obs.steps.iter_mut().zip(saw) {
        step.host = host;
    }
    obs.stray_prompts = stray;
    obs.run.secrets = secrets;
    observe::gather(scenario, dir, &setup.recordings, &mut obs);
    let bridge_server = scenario.bridge.as_ref().map(|b| b.server.trim());
    for (step, decl) in obs.steps.iter_mut().zip(&scenario.steps) {
        let call_id = step.outcome.as_ref().and_then(|o| o["call_id"].as_str()).unwrap_or("");
        step.driver.recorded = !call_id.is_empty() && bridged_ids.iter().any(|b| b == call_id);
        // For the host's own tools, "the server" is the host.
        if matches!(decl, Step::ToolCall { server, .. } if Some(server.trim()) == bridge_server) {
            step.server_calls = step.host.bridge_calls;
        }
    }
    obs
}

