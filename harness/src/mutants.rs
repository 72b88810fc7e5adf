//! Deliberately broken variants of the reference driver (the `sdk-` ones of
//! its Claude Code SDK host mode variant), one per known driver bug. Every
//! scenario names the mutants that must fail it, and every mutant must be
//! named by some scenario: together they prove each check can fail.

use std::collections::{BTreeMap, BTreeSet};

use drivers::gateway::{Binding, ConsentKey, GatewayApproval};
use drivers::{ApprovalPolicy, GlobalPolicy, McpServerSpec, Parts, ServerSet, SpecError};
use serde_json::{json, Value};

use crate::reference::{Mode, ReferenceDriver, Wiring};

/// A known driver bug: the reference driver with one part swapped or one
/// wiring fault switched on.
pub struct Mutant {
    pub name: &'static str,
    pub bug: &'static str,
    change: Change,
    /// Which reference it varies: `reference` (app-server, print mode),
    /// `reference-claude-sdk` or `reference-codex-exec`.
    mode: Mode,
}

enum Change {
    Parts(fn(&mut Parts)),
    Wiring(Wiring),
    Both(fn(&mut Parts), Wiring),
}

impl Mutant {
    /// A fresh broken driver.
    pub fn build(&self) -> ReferenceDriver {
        let driver = self.build_reference();
        driver.in_mode(self.mode)
    }

    fn build_reference(&self) -> ReferenceDriver {
        match self.change {
            Change::Parts(change) => {
                let mut parts = Parts::reference();
                change(&mut parts);
                ReferenceDriver::variant(self.name, parts, Wiring::default())
            }
            Change::Wiring(wiring) => ReferenceDriver::variant(self.name, Parts::reference(), wiring),
            Change::Both(change, wiring) => {
                let mut parts = Parts::reference();
                change(&mut parts);
                ReferenceDriver::variant(self.name, parts, wiring)
            }
        }
    }
}

fn parts(name: &'static str, bug: &'static str, change: fn(&mut Parts)) -> Mutant {
    Mutant { name, bug, change: Change::Parts(change), mode: Mode::Default }
}

fn wiring(name: &'static str, bug: &'static str, wiring: Wiring) -> Mutant {
    Mutant { name, bug, change: Change::Wiring(wiring), mode: Mode::Default }
}

fn both(name: &'static str, bug: &'static str, change: fn(&mut Parts), wiring: Wiring) -> Mutant {
    Mutant { name, bug, change: Change::Both(change, wiring), mode: Mode::Default }
}

/// A broken SDK host mode driver (Claude Code only, from 2.1.332).
fn sdk_parts(name: &'static str, bug: &'static str, change: fn(&mut Parts)) -> Mutant {
    Mutant { mode: Mode::ClaudeSdk, ..parts(name, bug, change) }
}

/// Codex: accepts every elicitation, answers the rest as the reference does.
fn accept_elicitations(m: &str, params: &Value, ctx: &drivers::codex::respond::Context, host: &mut dyn drivers::Host) -> drivers::codex::respond::Answer {
    if m == "mcpServer/elicitation/request" {
        Ok(json!({"action": "accept", "content": {}}))
    } else {
        drivers::codex::respond::respond(m, params, ctx, host)
    }
}

/// Codex: config.toml with each tool's policy under the keys `keys` gives
/// for its name instead of the name itself.
fn config_keyed(set: &ServerSet, keys: fn(&str) -> Vec<String>) -> String {
    let keyed: Vec<McpServerSpec> = set
        .servers()
        .map(|s| McpServerSpec { tools: s.tools.iter().flat_map(|(t, p)| keys(t).into_iter().map(move |k| (k, *p))).collect(), ..s.clone() })
        .collect();
    drivers::codex::projection::config_toml(&ServerSet::unchecked(keyed))
}

/// Codex: config.toml with every per-tool policy left out.
fn config_without_policies(set: &ServerSet) -> String {
    let stripped: Vec<McpServerSpec> = set.servers().map(|s| McpServerSpec { tools: Default::default(), ..s.clone() }).collect();
    drivers::codex::projection::config_toml(&ServerSet::build(stripped).unwrap_or_default())
}

pub fn mutants() -> Vec<Mutant> {
    vec![
        parts("reject-all-requests", "refuses every server request, so a prompted tool the host approves never runs", |p| {
            p.respond = |m, _, _, _| Err((-32601, format!("unsupported `{m}`")));
            p.claude_permission = |name, _, _, _| json!({"behavior": "deny", "message": format!("{name} refused")});
        }),
        parts("global-never", "maps auto-approve to approvalPolicy `never`, an in-CLI denial on Codex 0.148+", |p| {
            p.approval_policy = |g, _| match g {
                GlobalPolicy::AutoApprove => json!("never"),
                GlobalPolicy::Ask => json!("on-request"),
            }
        }),
        parts("blanket-accept", "accepts every elicitation and permission prompt, not only those it may settle", |p| {
            p.claude_permission = |_, input, _, _| json!({"behavior": "allow", "updatedInput": input});
            p.respond = accept_elicitations;
        }),
        parts("accept-commands", "approves command, file-change and permission requests without the host", |p| {
            p.respond = |m, params, ctx, host| match m {
                "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => Ok(json!({"decision": "accept"})),
                "item/permissions/requestApproval" => {
                    Ok(json!({"permissions": params.get("permissions").cloned().unwrap_or(json!({})), "scope": "session"}))
                }
                _ => drivers::codex::respond::respond(m, params, ctx, host),
            }
        }),
        parts("print-mode-unnamed", "names no --permission-mode, so Claude Code 2.1.285..2.1.301 runs print mode in auto mode and a gated call never reaches the host", |p| {
            p.claude_print_mode = None;
        }),
        parts("print-mode-auto", "launches print mode with --permission-mode auto, so a gated call goes to Claude Code's classifier, never to the host", |p| {
            p.claude_print_mode = Some("auto");
        }),
        parts("prompt-answer-free-text", "answers the permission prompt tool's yes as free text, not a behavior object, so Claude Code refuses the call the host approved", |p| {
            p.claude_permission = |name, input, ctx, host| {
                let verdict = drivers::claude::permission(name, input, ctx, host);
                if verdict["behavior"] == "allow" { json!("yes please") } else { verdict }
            };
        }),
        parts("ack-unknown-requests", "answers server requests it does not understand with an empty result", |p| {
            p.respond = |m, params, ctx, host| match drivers::codex::respond::respond(m, params, ctx, host) {
                Err((-32601, _)) => Ok(json!({})),
                other => other,
            }
        }),
        // Broken fail-closed drivers (they do not claim host-prompts).
        parts("fail-closed-accepts-prompts", "fail-closed, yet accepts a prompted tool's approval itself with nobody asked", |p| {
            p.host_prompts = false;
            p.respond = accept_elicitations;
            // Claude Code: lets every declared tool through, prompt tools too.
            p.claude_rules = |set| drivers::parts::ClaudeRules { allow: set.servers().map(|s| format!("mcp__{}", s.name)).collect(), ask: Vec::new() };
        }),
        parts("fail-closed-empty-success", "fail-closed, but answers every prompt with an empty success instead of a refusal", |p| {
            p.host_prompts = false;
            p.respond = |m, _, _, _| if m == "item/tool/requestUserInput" { Ok(json!({"answers": {}})) } else { Ok(json!({})) };
        }),
        parts("fail-closed-unprojected", "fail-closed and refuses every request, but projects no per-tool policy, so an approved tool never runs", |p| {
            p.host_prompts = false;
            p.respond = |m, _, _, _| Err((-32601, format!("unsupported `{m}`")));
            p.claude_rules = |_| drivers::parts::ClaudeRules::default();
            p.codex_config = config_without_policies;
        }),
        parts("drop-policy", "silently drops per-tool policies from the provider config", |p| {
            p.claude_rules = |_| drivers::parts::ClaudeRules::default();
            p.codex_config = config_without_policies;
        }),
        parts("server-wide-approve", "approves a whole server when one of its tools is approved", |p| {
            p.claude_rules = |set| {
                let mut rules = drivers::parts::claude_rules(set);
                for s in set.servers().filter(|s| s.tools.values().any(|p| *p == ApprovalPolicy::Approve)) {
                    rules.allow.push(format!("mcp__{}", s.name));
                }
                rules
            };
            p.codex_config = |set| {
                let mut text = drivers::codex::projection::config_toml(set);
                for s in set.servers() {
                    if s.tools.values().any(|p| *p == ApprovalPolicy::Approve) {
                        text.push_str(&format!("\n[mcp_servers.{}]\ndefault_tools_approval_mode = \"approve\"\n", s.name));
                    }
                }
                // Appending a second [mcp_servers.X] header is invalid
                // TOML; merge by re-parsing.
                merge_duplicate_tables(&text)
            }
        }),
        parts(
            "server-default-prompt",
            "adds `default_tools_approval_mode = \"prompt\"` to every server, so tools the host gave no policy ask even when read-only",
            |p| {
                p.codex_config = |set| {
                    let mut text = drivers::codex::projection::config_toml(set);
                    for s in set.servers() {
                        text.push_str(&format!("\n[mcp_servers.{}]\ndefault_tools_approval_mode = \"prompt\"\n", s.name));
                    }
                    merge_duplicate_tables(&text)
                }
            },
        ),
        parts(
            "extra-tool-table",
            "renders each policy under the model-facing tool name (`tools.notes_append`) as well as the real key: a table for a tool the host gave no policy",
            |p| {
                p.codex_config = |set| config_keyed(set, |t| vec![t.to_string(), codex_model_name(t)]);
            },
        ),
        parts(
            "claude-dotted-names",
            "names Claude Code tools with their dots (`mcp__notes__notes.append`), but the CLI renames them to `notes_append`: the allow rule matches nothing and the prompt tool's name matches no policy",
            |p| {
                p.claude_rules = |set| {
                    let mut rules = drivers::parts::ClaudeRules::default();
                    for s in set.servers() {
                        for (tool, policy) in &s.tools {
                            let name = format!("mcp__{}__{tool}", s.name);
                            match policy {
                                ApprovalPolicy::Approve => rules.allow.push(name),
                                ApprovalPolicy::Prompt => rules.ask.push(name),
                            }
                        }
                    }
                    rules
                };
                // Looks the renamed name up literally: a dotted tool's policy is never found.
                p.claude_permission = |name, input, ctx, host| {
                    let literal: Vec<McpServerSpec> = ctx
                        .servers
                        .servers()
                        .map(|s| McpServerSpec {
                            tools: s.tools.iter().filter(|(t, _)| !t.contains('.')).map(|(t, p)| (t.clone(), *p)).collect(),
                            ..s.clone()
                        })
                        .collect();
                    let servers = ServerSet::unchecked(literal);
                    let ctx = drivers::codex::respond::Context { servers: &servers, ..*ctx };
                    drivers::claude::permission(name, input, &ctx, host)
                };
            },
        ),
        parts(
            "codex-renamed-tool-keys",
            "keys Codex per-tool policies by the model-facing name (`tools.notes_append`), which Codex does not match against `notes.append`",
            |p| {
                p.codex_config = |set| config_keyed(set, |t| vec![codex_model_name(t)]);
            },
        ),
        parts(
            "dotted-keys-split",
            "writes a dotted tool's policy key unquoted (`tools.notes.publish`, as @openai/codex-sdk 0.163.0 flattens its config), so Codex files it under a tool `notes` and the dotted tool's own policy is lost",
            |p| {
                p.codex_config = |set| config_keyed(set, |t| vec![t.split('.').next().unwrap_or(t).to_string()]);
            },
        ),
        parts(
            "name-only-match",
            "matches approvals by tool name alone, so another server's same-named tool is approved too",
            |p| {
                p.claude_permission = |name, input, ctx, host| {
                    let approved = ctx
                        .servers
                        .servers()
                        .any(|s| s.tools.iter().any(|(t, p)| *p == ApprovalPolicy::Approve && name.ends_with(&format!("__{t}"))));
                    if approved {
                        json!({"behavior": "allow", "updatedInput": input})
                    } else {
                        drivers::claude::permission(name, input, ctx, host)
                    }
                };
                p.respond = |m, params, ctx, host| {
                    if m == "mcpServer/elicitation/request" {
                        if let Some(tool) = drivers::codex::respond::approval_tool_name(params) {
                            if ctx.servers.servers().any(|s| s.tools.get(&tool) == Some(&ApprovalPolicy::Approve)) {
                                return Ok(json!({"action": "accept", "content": {}}));
                            }
                        }
                    }
                    drivers::codex::respond::respond(m, params, ctx, host)
                }
            },
        ),
        parts("meta-tool-name-only", "identifies the tool only by _meta.tool_name, which Codex sends from 0.167.2 on", |p| {
            p.respond = |m, params, ctx, host| {
                let mut params = params.clone();
                if params.pointer("/_meta/tool_name").is_none() {
                    params["message"] = json!("");
                }
                drivers::codex::respond::respond(m, &params, ctx, host)
            }
        }),
        parts("persist-always", "answers approvals with _meta.persist = always, so one yes outlives the policy", |p| {
            p.respond = |m, params, ctx, host| {
                let mut answer = drivers::codex::respond::respond(m, params, ctx, host);
                if let Ok(v) = &mut answer {
                    if v.get("action") == Some(&json!("accept")) {
                        v["_meta"] = json!({"persist": "always"});
                    }
                }
                answer
            }
        }),
        parts(
            "approval-reply-decision",
            "answers an approval elicitation's yes as `{\"decision\": \"accept\"}` (the command-approval shape), which Codex reads as a decline",
            |p| {
                p.respond = |m, params, ctx, host| {
                    let answer = drivers::codex::respond::respond(m, params, ctx, host);
                    match answer {
                        Ok(v) if v.get("action") == Some(&json!("accept")) => Ok(json!({"decision": "accept"})),
                        other => other,
                    }
                }
            },
        ),
        parts(
            "fingerprint-ignores-policy",
            "fingerprint covers servers but not tool policies, so a policy change reuses the old provider",
            |p| p.fingerprint = policy_blind_fingerprint,
        ),
        both(
            "policy-via-thread-resume",
            "changes tool policies by resuming the thread with them as config on the running app-server instead of relaunching it",
            |p| p.fingerprint = policy_blind_fingerprint,
            Wiring { resume_sends_thread_config: true, ..Wiring::default() },
        ),
        parts("no-normalization", "takes declarations verbatim: no trimming, later duplicates silently win", |p| {
            p.build = build_verbatim
        }),
        parts("reject-all-duplicates", "refuses identical duplicate declarations that should merge", |p| {
            p.build = build_rejecting_duplicates
        }),
        wiring(
            "lenient-modes",
            "drops unknown approval modes instead of refusing to launch",
            Wiring { lenient_modes: true, ..Wiring::default() },
        ),
        wiring(
            "sticky-scoped-servers",
            "keeps call-scoped servers attached after their call",
            Wiring { sticky_scoped: true, ..Wiring::default() },
        ),
        wiring(
            "resume-drops-policies",
            "re-declares servers without their tool policies on resume",
            Wiring { resume_drops_policies: true, ..Wiring::default() },
        ),
        parts("secret-inline", "writes the bearer token itself into the child's arguments instead of naming its env var", |p| {
            p.claude_auth_header = |_, value| format!("Bearer {value}")
        }),
        parts(
            "bridge-never",
            "bridges its tools under approvalPolicy `never` (QA finding F1): Codex 0.148+ denies every bridged call in the CLI",
            |p| p.approval_policy = |g, bridged| if bridged { json!("never") } else { (drivers::parts::Parts::reference().approval_policy)(g, bridged) },
        ),
        wiring(
            "silent-downgrade",
            "launches a provider without a per-tool primitive anyway, dropping the policies",
            Wiring { silent_downgrade: true, ..Wiring::default() },
        ),
        parts(
            "bridge-keeps-annotations",
            "passes host tool results to the child verbatim, annotations and user-only blocks included",
            |p| p.bridge_result = |r| r.clone(),
        ),
        parts("bridge-sends-twice", "sends each bridged result block to the child twice", |p| {
            p.bridge_result = |r| {
                let mut out = drivers::bridge::model_facing(r);
                let blocks = out["content"].as_array().cloned().unwrap_or_default();
                out["content"] = Value::Array(blocks.iter().chain(blocks.iter()).cloned().collect());
                out
            }
        }),
        parts(
            "bridge-forwards-user-blocks",
            "strips annotations from bridged results but forwards blocks meant only for the user",
            |p| {
                p.bridge_result = |r| {
                    let mut out = r.clone();
                    if let Some(blocks) = out["content"].as_array_mut() {
                        blocks.iter_mut().filter_map(Value::as_object_mut).for_each(|b| {
                            b.remove("annotations");
                        });
                    }
                    out
                }
            },
        ),
        parts(
            "bridge-keyed-by-progress-token",
            "records bridged results under the MCP progress token instead of the child's call id",
            |p| p.bridge_call_id = |meta, _| meta.get("progressToken").map(|t| t.to_string()).unwrap_or_default(),
        ),
        parts(
            "gateway-no-interrupt",
            "runs gateway tools whose catalog row requires approval without an approval interrupt",
            |p| {
                p.gateway_respond = |params, bindings, consents, host| {
                    respond_with(params, bindings, consents, host, |b| b.approval = GatewayApproval::None)
                }
            },
        ),
        parts(
            "gateway-policy-by-raw-name",
            "takes a gateway tool's policy from the first catalog row with the same raw tool name, whatever its target",
            |p| {
                p.gateway_bind = |spec| {
                    let first: BTreeMap<&str, GatewayApproval> =
                        spec.catalog.iter().rev().map(|r| (r.raw_tool.as_str(), r.approval)).collect();
                    bind_with(spec, |b| b.approval = first.get(b.raw_tool.as_str()).copied().unwrap_or(b.approval))
                }
            },
        ),
        parts("gateway-skips-oauth", "lets gateway calls through without the OAuth consent their target needs", |p| {
            p.gateway_respond =
                |params, bindings, consents, host| respond_with(params, bindings, consents, host, |b| b.oauth_provider_id = None)
        }),
        parts(
            "gateway-consent-ignores-parameters",
            "keeps OAuth consent across changed customParameters (binding keyed without its digest)",
            |p| p.gateway_bind = |spec| bind_with(spec, |b| b.custom_parameters_digest = "ignored".into()),
        ),
        parts("gateway-unbound-runs", "lets gateway tools that no catalog row binds run ungoverned", |p| {
            p.gateway_respond = |params, bindings, consents, host| {
                let tool = drivers::codex::respond::approval_tool_name(params).unwrap_or_default();
                if bindings.contains_key(&tool) {
                    drivers::gateway::respond(params, bindings, consents, host)
                } else {
                    json!({"action": "accept", "content": {}})
                }
            }
        }),
        wiring(
            "resume-is-noop",
            "resume keeps the running provider, so rotated secrets and changed policies never arrive",
            Wiring { resume_is_noop: true, ..Wiring::default() },
        ),
        sdk_parts("sdk-blanket-accept", "SDK host mode: accepts every server elicitation itself; the host never sees the question", |p| {
            p.claude_elicitation = |_, _| json!({"action": "accept", "content": {}});
        }),
        sdk_parts("sdk-refuse-elicitations", "SDK host mode: answers a server's elicitation with an empty result, never asking the host, so Claude Code cancels it", |p| {
            p.claude_elicitation = |_, _| json!({});
        }),
        sdk_parts("sdk-allow-all", "SDK host mode: answers every can_use_tool with allow, never asking the host", |p| {
            p.claude_can_use_tool = |_, input, _, _| json!({"behavior": "allow", "updatedInput": input});
        }),
        sdk_parts("sdk-drops-edits", "SDK host mode: answers an accepted prompt with the model's input, dropping the host's edit", |p| {
            p.claude_can_use_tool = |name, input, ctx, host| match drivers::claude::respond::decide(name, ctx, host) {
                Ok(decision) => drivers::claude_sdk::answer::answer(decision, name, input),
                Err(why) => json!({"behavior": "deny", "message": why}),
            };
        }),
        sdk_parts("sdk-cancel-as-decline", "SDK host mode: a host's cancel becomes a plain deny, so the model goes on with its turn", |p| {
            p.claude_can_use_tool = |name, input, ctx, host| {
                let mut behavior = drivers::claude_sdk::answer::can_use_tool(name, input, ctx, host);
                if let Some(b) = behavior.as_object_mut() {
                    b.remove("interrupt");
                }
                behavior
            };
        }),
        sdk_parts("sdk-hook-allows-mcp", "SDK host mode: a PreToolUse hook allows every MCP tool, so a tool without a policy under global ask runs unasked", |p| {
            p.claude_hooks = || json!({"PreToolUse": [{"matcher": "mcp__.*", "hookCallbackIds": ["mcp_trusted"]}]});
            p.claude_hook_answer = |_| {
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "MCP tools are trusted"}})
            };
        }),
        sdk_parts("sdk-hook-denies-mcp", "SDK host mode: a PreToolUse hook denies every MCP tool, so an approved tool never runs", |p| {
            p.claude_hooks = || json!({"PreToolUse": [{"matcher": "mcp__.*", "hookCallbackIds": ["mcp_untrusted"]}]});
            p.claude_hook_answer = |_| {
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "MCP tools are not trusted"}})
            };
        }),
        sdk_parts("sdk-mode-bypass", "SDK host mode: carries out any permission mode change as bypassPermissions, so every tool runs unasked", |p| {
            p.claude_permission_mode = |_| "bypassPermissions".into();
        }),
        sdk_parts(
            "sdk-server-wide-allowed-tools",
            "SDK host mode: projects `approve` as a server-wide `mcp__S` allowedTools entry, so the server's other tools run unasked",
            |p| {
                p.claude_rules = |set| {
                    let mut rules = drivers::parts::claude_rules(set);
                    rules.allow = set
                        .servers()
                        .filter(|s| s.tools.values().any(|p| *p == ApprovalPolicy::Approve))
                        .map(|s| format!("mcp__{}", drivers::claude::projection::claude_part(&s.name)))
                        .collect();
                    rules
                };
            },
        ),
        exec_parts("exec-drops-policy", "codex exec: leaves the per-tool policies out of the config, so approved tools fail under exec's `never`", |p| {
            p.codex_config = config_without_policies;
        }),
        exec_parts("exec-full-access", "codex exec: runs with `--sandbox danger-full-access` so approved tools work, and with it every tool runs unasked", |p| {
            p.codex_exec_args = |set, global| [drivers::codex::projection::exec_args(set, global), vec!["--sandbox".into(), "danger-full-access".into()]].concat();
        }),
        exec_parts("exec-untrusted", "codex exec: passes global `ask` as `-c approval_policy=\"untrusted\"`, which exec refuses from 0.149.0 (exit 1, nothing runs)", |p| {
            p.codex_exec_args = |set, global| [drivers::codex::projection::exec_args(set, global), vec!["-c".into(), "approval_policy=\"untrusted\"".into()]].concat();
        }),
        exec_parts("exec-ignores-auto-approve", "codex exec: drops global `auto-approve`, so tools without a policy fail in the CLI instead of running", |p| {
            p.codex_exec_args = |_, _| Vec::new();
        }),
        exec_parts("exec-server-wide-approve", "codex exec: approves every server's tools by default under global `ask` too, so tools without a policy run unasked", |p| {
            p.codex_exec_args = |set, _| drivers::codex::projection::exec_args(set, GlobalPolicy::AutoApprove);
        }),
        Mutant {
            mode: Mode::CodexExec,
            ..wiring("exec-stale-resume", "codex exec: resume keeps the declarations of the first turn, so changed policies and rotated secrets never reach the next `exec resume`", Wiring { resume_is_noop: true, ..Wiring::default() })
        },
    ]
}

/// A broken `codex exec` driver (`reference-codex-exec`).
fn exec_parts(name: &'static str, bug: &'static str, change: fn(&mut Parts)) -> Mutant {
    Mutant { mode: Mode::CodexExec, ..parts(name, bug, change) }
}

/// The name Codex shows the model for a tool: outside `[A-Za-z0-9_]`, `_`.
fn codex_model_name(tool: &str) -> String {
    tool.replace(|c: char| !(c.is_ascii_alphanumeric() || c == '_'), "_")
}

/// The reference fingerprint of the declarations without their tool policies.
fn policy_blind_fingerprint(set: &ServerSet, g: GlobalPolicy) -> String {
    let stripped: Vec<McpServerSpec> = set.servers().map(|s| McpServerSpec { tools: Default::default(), ..s.clone() }).collect();
    drivers::fingerprint::fingerprint(&ServerSet::build(stripped).unwrap_or_default(), g)
}

fn build_verbatim(specs: Vec<McpServerSpec>) -> Result<ServerSet, SpecError> {
    Ok(ServerSet::unchecked(specs))
}

fn build_rejecting_duplicates(specs: Vec<McpServerSpec>) -> Result<ServerSet, SpecError> {
    let mut seen = BTreeSet::new();
    for s in &specs {
        if !seen.insert(s.name.trim().to_string()) {
            return Err(SpecError::new("duplicate-conflict", format!("server `{}` declared twice", s.name)));
        }
    }
    ServerSet::build(specs)
}

fn merge_duplicate_tables(text: &str) -> String {
    let mut merged = toml::Table::new();
    for chunk in
        text.split("\n[mcp_servers.").enumerate().map(|(i, c)| if i == 0 { c.to_string() } else { format!("[mcp_servers.{c}") })
    {
        if let Ok(t) = chunk.parse::<toml::Table>() {
            merge(&mut merged, t);
        }
    }
    toml::to_string(&merged).unwrap_or_default()
}

fn merge(into: &mut toml::Table, from: toml::Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

/// The reference gateway answer, given bindings changed by `change`.
fn respond_with(
    params: &Value,
    bindings: &BTreeMap<String, Binding>,
    consents: &mut BTreeSet<ConsentKey>,
    host: &mut dyn drivers::Host,
    change: fn(&mut Binding),
) -> Value {
    let mut changed = bindings.clone();
    changed.values_mut().for_each(change);
    drivers::gateway::respond(params, &changed, consents, host)
}

/// The reference gateway bindings, each changed by `change`.
fn bind_with(
    spec: &drivers::gateway::GatewaySpec,
    change: impl FnMut(&mut Binding),
) -> Result<BTreeMap<String, Binding>, drivers::DriverError> {
    let mut bindings = drivers::gateway::bind(spec)?;
    bindings.values_mut().for_each(change);
    Ok(bindings)
}
