//! Deliberately broken variants of the reference driver, one per known
//! driver bug. Every scenario names the mutants that must fail it, and every
//! mutant must be named by some scenario: together they prove each check can
//! fail.

use std::collections::BTreeSet;

use drivers::{ApprovalPolicy, GlobalPolicy, McpServerSpec, Parts, ServerSet, SpecError};
use serde_json::{json, Value};

use crate::reference::{ReferenceDriver, Wiring};

/// A known driver bug, as a constructor of the broken driver.
pub struct Mutant {
    pub name: &'static str,
    pub bug: &'static str,
    pub build: fn() -> ReferenceDriver,
}

fn with_parts(name: &str, change: impl FnOnce(&mut Parts)) -> ReferenceDriver {
    let mut parts = Parts::reference();
    change(&mut parts);
    ReferenceDriver::variant(name, parts, Wiring::default())
}

fn with_wiring(name: &str, wiring: Wiring) -> ReferenceDriver {
    ReferenceDriver::variant(name, Parts::reference(), wiring)
}

pub fn mutants() -> Vec<Mutant> {
    vec![
        Mutant {
            name: "reject-all-requests",
            bug: "refuses every server request, so a prompted tool the host approves never runs",
            build: || {
                with_parts("reject-all-requests", |p| {
                    p.respond = |m, _, _, _| Err((-32601, format!("unsupported `{m}`")));
                    p.claude_permission = |name, _, _, _| json!({"behavior": "deny", "message": format!("{name} refused")});
                })
            },
        },
        Mutant {
            name: "global-never",
            bug: "maps auto-approve to approvalPolicy `never`, an in-CLI denial on Codex 0.148+",
            build: || {
                with_parts("global-never", |p| {
                    p.approval_policy = |g, _| match g {
                        GlobalPolicy::AutoApprove => json!("never"),
                        GlobalPolicy::Ask => json!("on-request"),
                    }
                })
            },
        },
        Mutant {
            name: "blanket-accept",
            bug: "accepts every elicitation and permission prompt, not only those it may settle",
            build: || {
                with_parts("blanket-accept", |p| {
                    p.claude_permission = |_, input, _, _| json!({"behavior": "allow", "updatedInput": input});
                    p.respond = |m, params, ctx, host| {
                        if m == "mcpServer/elicitation/request" {
                            Ok(json!({"action": "accept", "content": {}}))
                        } else {
                            drivers::codex::respond::respond(m, params, ctx, host)
                        }
                    }
                })
            },
        },
        Mutant {
            name: "accept-commands",
            bug: "approves command, file-change and permission requests without the host",
            build: || {
                with_parts("accept-commands", |p| {
                    p.respond = |m, params, ctx, host| match m {
                        "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => Ok(json!({"decision": "accept"})),
                        "item/permissions/requestApproval" => {
                            Ok(json!({"permissions": params.get("permissions").cloned().unwrap_or(json!({})), "scope": "session"}))
                        }
                        _ => drivers::codex::respond::respond(m, params, ctx, host),
                    }
                })
            },
        },
        Mutant {
            name: "ack-unknown-requests",
            bug: "answers server requests it does not understand with an empty result",
            build: || {
                with_parts("ack-unknown-requests", |p| {
                    p.respond = |m, params, ctx, host| match drivers::codex::respond::respond(m, params, ctx, host) {
                        Err((-32601, _)) => Ok(json!({})),
                        other => other,
                    }
                })
            },
        },
        Mutant {
            name: "drop-policy",
            bug: "silently drops per-tool policies from the provider config",
            build: || {
                with_parts("drop-policy", |p| {
                    p.claude_rules = |_| drivers::parts::ClaudeRules::default();
                    p.codex_config = |set| {
                        let stripped: Vec<McpServerSpec> =
                            set.servers().map(|s| McpServerSpec { tools: Default::default(), ..s.clone() }).collect();
                        drivers::codex::projection::config_toml(&ServerSet::build(stripped).unwrap_or_default())
                    }
                })
            },
        },
        Mutant {
            name: "server-wide-approve",
            bug: "approves a whole server when one of its tools is approved",
            build: || {
                with_parts("server-wide-approve", |p| {
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
                })
            },
        },
        Mutant {
            name: "name-only-match",
            bug: "matches approvals by tool name alone, so another server's same-named tool is approved too",
            build: || {
                with_parts("name-only-match", |p| {
                    p.claude_permission = |name, input, ctx, host| {
                        let approved = ctx.servers.servers().any(|s| {
                            s.tools.iter().any(|(t, p)| *p == ApprovalPolicy::Approve && name.ends_with(&format!("__{t}")))
                        });
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
                })
            },
        },
        Mutant {
            name: "meta-tool-name-only",
            bug: "identifies the tool only by _meta.tool_name, which Codex sends from 0.167.2 on",
            build: || {
                with_parts("meta-tool-name-only", |p| {
                    p.respond = |m, params, ctx, host| {
                        let mut params = params.clone();
                        if params.pointer("/_meta/tool_name").is_none() {
                            params["message"] = json!("");
                        }
                        drivers::codex::respond::respond(m, &params, ctx, host)
                    }
                })
            },
        },
        Mutant {
            name: "persist-always",
            bug: "answers approvals with _meta.persist = always, so one yes outlives the policy",
            build: || {
                with_parts("persist-always", |p| {
                    p.respond = |m, params, ctx, host| {
                        let mut answer = drivers::codex::respond::respond(m, params, ctx, host);
                        if let Ok(v) = &mut answer {
                            if v.get("action") == Some(&json!("accept")) {
                                v["_meta"] = json!({"persist": "always"});
                            }
                        }
                        answer
                    }
                })
            },
        },
        Mutant {
            name: "fingerprint-ignores-policy",
            bug: "fingerprint covers servers but not tool policies, so a policy change reuses the old provider",
            build: || {
                with_parts("fingerprint-ignores-policy", |p| {
                    p.fingerprint = |set, g| {
                        let stripped: Vec<McpServerSpec> =
                            set.servers().map(|s| McpServerSpec { tools: Default::default(), ..s.clone() }).collect();
                        drivers::fingerprint::fingerprint(&ServerSet::build(stripped).unwrap_or_default(), g)
                    }
                })
            },
        },
        Mutant {
            name: "no-normalization",
            bug: "takes declarations verbatim: no trimming, later duplicates silently win",
            build: || with_parts("no-normalization", |p| p.build = build_verbatim),
        },
        Mutant {
            name: "reject-all-duplicates",
            bug: "refuses identical duplicate declarations that should merge",
            build: || with_parts("reject-all-duplicates", |p| p.build = build_rejecting_duplicates),
        },
        Mutant {
            name: "lenient-modes",
            bug: "drops unknown approval modes instead of refusing to launch",
            build: || with_wiring("lenient-modes", Wiring { lenient_modes: true, ..Wiring::default() }),
        },
        Mutant {
            name: "sticky-scoped-servers",
            bug: "keeps call-scoped servers attached after their call",
            build: || with_wiring("sticky-scoped-servers", Wiring { sticky_scoped: true, ..Wiring::default() }),
        },
        Mutant {
            name: "resume-drops-policies",
            bug: "re-declares servers without their tool policies on resume",
            build: || with_wiring("resume-drops-policies", Wiring { resume_drops_policies: true, ..Wiring::default() }),
        },
        Mutant {
            name: "secret-inline",
            bug: "writes the bearer token itself into the child's arguments instead of naming its env var",
            build: || with_parts("secret-inline", |p| p.claude_auth_header = |_, value| format!("Bearer {value}")),
        },
        Mutant {
            name: "bridge-plain-on-request",
            bug: "bridges its tools under plain on-request instead of granular approval with experimentalApi",
            build: || with_parts("bridge-plain-on-request", |p| p.approval_policy = |_, _| json!("on-request")),
        },
        Mutant {
            name: "silent-downgrade",
            bug: "launches a provider without a per-tool primitive anyway, dropping the policies",
            build: || with_wiring("silent-downgrade", Wiring { silent_downgrade: true, ..Wiring::default() }),
        },
        Mutant {
            name: "bridge-keeps-annotations",
            bug: "passes host tool results to the child verbatim, annotations and user-only blocks included",
            build: || with_parts("bridge-keeps-annotations", |p| p.bridge_result = |r| r.clone()),
        },
        Mutant {
            name: "bridge-sends-twice",
            bug: "sends each bridged result block to the child twice",
            build: || {
                with_parts("bridge-sends-twice", |p| {
                    p.bridge_result = |r| {
                        let mut out = drivers::bridge::model_facing(r);
                        let blocks = out["content"].as_array().cloned().unwrap_or_default();
                        out["content"] = Value::Array(blocks.iter().chain(blocks.iter()).cloned().collect());
                        out
                    }
                })
            },
        },
        Mutant {
            name: "bridge-forwards-user-blocks",
            bug: "strips annotations from bridged results but forwards blocks meant only for the user",
            build: || {
                with_parts("bridge-forwards-user-blocks", |p| {
                    p.bridge_result = |r| {
                        let mut out = r.clone();
                        if let Some(blocks) = out["content"].as_array_mut() {
                            blocks.iter_mut().filter_map(Value::as_object_mut).for_each(|b| {
                                b.remove("annotations");
                            });
                        }
                        out
                    }
                })
            },
        },
        Mutant {
            name: "bridge-keyed-by-progress-token",
            bug: "records bridged results under the MCP progress token instead of the child's call id",
            build: || {
                with_parts("bridge-keyed-by-progress-token", |p| {
                    p.bridge_call_id = |meta, _| meta.get("progressToken").map(|t| t.to_string()).unwrap_or_default()
                })
            },
        },
        Mutant {
            name: "gateway-no-interrupt",
            bug: "runs gateway tools whose catalog row requires approval without an approval interrupt",
            build: || {
                with_parts("gateway-no-interrupt", |p| {
                    p.gateway_respond = |params, bindings, consents, host| {
                        let relaxed = bindings
                            .iter()
                            .map(|(k, b)| (k.clone(), drivers::gateway::Binding { approval: drivers::gateway::GatewayApproval::None, ..b.clone() }))
                            .collect();
                        drivers::gateway::respond(params, &relaxed, consents, host)
                    }
                })
            },
        },
        Mutant {
            name: "gateway-policy-by-raw-name",
            bug: "takes a gateway tool's policy from the first catalog row with the same raw tool name, whatever its target",
            build: || {
                with_parts("gateway-policy-by-raw-name", |p| {
                    p.gateway_bind = |spec| {
                        let mut bindings = drivers::gateway::bind(spec)?;
                        let first: std::collections::BTreeMap<String, drivers::gateway::GatewayApproval> =
                            spec.catalog.iter().rev().map(|r| (r.raw_tool.clone(), r.approval)).collect();
                        for b in bindings.values_mut() {
                            b.approval = first[&b.raw_tool];
                        }
                        Ok(bindings)
                    }
                })
            },
        },
        Mutant {
            name: "gateway-skips-oauth",
            bug: "lets gateway calls through without the OAuth consent their target needs",
            build: || {
                with_parts("gateway-skips-oauth", |p| {
                    p.gateway_respond = |params, bindings, consents, host| {
                        let no_oauth = bindings
                            .iter()
                            .map(|(k, b)| (k.clone(), drivers::gateway::Binding { oauth_provider_id: None, ..b.clone() }))
                            .collect();
                        drivers::gateway::respond(params, &no_oauth, consents, host)
                    }
                })
            },
        },
        Mutant {
            name: "gateway-consent-ignores-parameters",
            bug: "keeps OAuth consent across changed customParameters (binding keyed without its digest)",
            build: || {
                with_parts("gateway-consent-ignores-parameters", |p| {
                    p.gateway_bind = |spec| {
                        let mut bindings = drivers::gateway::bind(spec)?;
                        bindings.values_mut().for_each(|b| b.custom_parameters_digest = "ignored".into());
                        Ok(bindings)
                    }
                })
            },
        },
        Mutant {
            name: "gateway-unbound-runs",
            bug: "lets gateway tools that no catalog row binds run ungoverned",
            build: || {
                with_parts("gateway-unbound-runs", |p| {
                    p.gateway_respond = |params, bindings, consents, host| {
                        let tool = drivers::codex::respond::approval_tool_name(params).unwrap_or_default();
                        if bindings.contains_key(&tool) {
                            drivers::gateway::respond(params, bindings, consents, host)
                        } else {
                            json!({"action": "accept", "content": {}})
                        }
                    }
                })
            },
        },
        Mutant {
            name: "resume-is-noop",
            bug: "resume keeps the running provider, so rotated secrets and changed policies never arrive",
            build: || with_wiring("resume-is-noop", Wiring { resume_is_noop: true, ..Wiring::default() }),
        },
    ]
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
    for chunk in text.split("\n[mcp_servers.").enumerate().map(|(i, c)| if i == 0 { c.to_string() } else { format!("[mcp_servers.{c}") }) {
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

