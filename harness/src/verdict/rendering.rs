//! Codex rendering: the approval settings every thread ended up with, which
//! the fake Codex records from each config source it honours, must hold
//! exactly the per-tool tables the host declared and no server-wide default.
//!
//! Always on for a Codex trial whose driver claims `per-tool-approval`,
//! whatever the scenario is about: a correct driver renders exactly on every
//! launch, and an extra table or a server default changes tools the host
//! gave no policy, which no step may happen to call. Accepted:
//! - on each declared server present, tool tables (name -> mode) equal to
//!   its declared policies, names trimmed, in one of the states the scenario
//!   passes through (`set_policy` changes them; a detached call-scoped
//!   server is simply absent);
//! - on the driver's bridge server, `approve` tables for the bridge's own
//!   tools (it may settle its own tools so instead of accepting prompts);
//! - under global `auto-approve`, `default_tools_approval_mode = "approve"`
//!   on a server (how a driver refusing every prompt may project it; the
//!   per-tool tables still override it).
//!
//! The gateway server is not judged here: its tables follow the host's
//! catalog, which the gateway scenarios check call by call. Real CLIs report
//! no settings, so a real run without them is not judged.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Mismatch;
use crate::scenario::{Provider, Scenario, Step};
use crate::trial::Observations;

/// The claim that makes a driver's rendering judged.
pub const CLAIM: &str = "per-tool-approval";

/// One server's tool tables: tool -> approval mode.
type Tables = BTreeMap<String, String>;

pub fn check(scenario: &Scenario, obs: &Observations) -> Vec<Mismatch> {
    let mut out = Vec::new();
    if scenario.provider != Provider::Codex || !obs.claimed.contains(CLAIM) {
        return out;
    }
    let recorded = obs.provider.approval_settings();
    let threads = obs.provider.threads();
    if recorded.len() < threads {
        if obs.run.real && recorded.is_empty() {
            return out;
        }
        out.push(Mismatch {
            at: "provider config".into(),
            field: "approval_settings".into(),
            expected: format!("the effective settings of each of the {threads} threads opened"),
            actual: format!("{} recorded", recorded.len()),
        });
    }
    let rules = Rules::of(scenario);
    for (n, event) in recorded.iter().enumerate() {
        let at = format!("config of thread {} ({})", n + 1, event["method"].as_str().unwrap_or("?"));
        for (server, settings) in event["servers"].as_object().into_iter().flatten() {
            for (field, expected, actual) in rules.judge(server, settings) {
                out.push(Mismatch { at: at.clone(), field, expected, actual });
            }
        }
    }
    out
}

/// What the scenario allows a thread's config to hold.
struct Rules<'a> {
    declared: BTreeMap<String, Vec<Tables>>,
    bridge: Option<(&'a str, Vec<&'a str>)>,
    gateway: Option<&'a str>,
    auto_approve: bool,
}

impl<'a> Rules<'a> {
    fn of(scenario: &'a Scenario) -> Rules<'a> {
        Rules {
            declared: declared_states(scenario),
            bridge: scenario.bridge.as_ref().map(|b| (b.server.trim(), b.tools.keys().map(|t| t.trim()).collect())),
            gateway: scenario.gateway.as_ref().map(|g| g.server.trim()),
            auto_approve: scenario.policy.global == "auto-approve",
        }
    }

    /// (field, expected, actual) for each way `settings` of `server` are
    /// not what the host declared.
    fn judge(&self, server: &str, settings: &Value) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        if Some(server) == self.gateway {
            return out;
        }
        // `"mode" (from <config source>)`.
        let shown = |mode: &str, source: &Value| format!("\"{mode}\" (from {})", source.as_str().unwrap_or("an unknown source"));
        const DEFAULT: &str = "default_tools_approval_mode";
        if let Some(mode) = settings[DEFAULT].as_str() {
            if !(self.auto_approve && mode == "approve") {
                let expected = if self.auto_approve { "absent, or \"approve\" under global auto-approve" } else { "absent" };
                out.push((format!("mcp_servers.{}.{DEFAULT}", quoted(server)), expected.into(), shown(mode, &settings["sources"][DEFAULT])));
            }
        }
        let tables: Tables = settings["tools"]
            .as_object()
            .into_iter()
            .flatten()
            // A table without approval_mode changes nothing.
            .filter_map(|(t, m)| Some((t.clone(), m.as_str()?.to_string())))
            .collect();
        let field = |tool: &str| format!("mcp_servers.{}.tools.{}.approval_mode", quoted(server), quoted(tool));
        let table = |tool: &str, mode: &str| shown(mode, &settings["sources"]["tools"][tool]);
        if let Some((_, own)) = self.bridge.as_ref().filter(|(name, _)| *name == server) {
            for (tool, mode) in tables.iter().filter(|(t, m)| !(own.contains(&t.as_str()) && *m == "approve")) {
                out.push((field(tool), "no table, or \"approve\" for one of the bridge's own tools".into(), table(tool, mode)));
            }
            return out;
        }
        let Some(states) = self.declared.get(server) else {
            for (tool, mode) in &tables {
                out.push((field(tool), format!("no table: the scenario declares no server `{server}`"), table(tool, mode)));
            }
            return out;
        };
        if states.contains(&tables) {
            return out;
        }
        // Named against the declared state it is closest to.
        let closest = states.iter().min_by_key(|s| differing(s, &tables).count()).cloned().unwrap_or_default();
        let of = if states.len() > 1 { format!(" (one of {} declared states)", states.len()) } else { String::new() };
        for tool in differing(&closest, &tables) {
            let expected = closest.get(tool).map_or("no table".to_string(), |m| format!("\"{m}\""));
            let actual = tables.get(tool).map_or("no table".to_string(), |m| table(tool, m));
            out.push((field(tool), format!("{expected}{of}"), actual));
        }
        out
    }
}

/// Tools whose table differs between `a` and `b`, or exists in one only.
fn differing<'t>(a: &'t Tables, b: &'t Tables) -> impl Iterator<Item = &'t String> + 't {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter().filter(move |k| a.get(*k) != b.get(*k))
}

/// A TOML key as config.toml writes it: names with dots or spaces are quoted.
fn quoted(key: &str) -> String {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// Every state of each declared server's policies the scenario passes
/// through, by trimmed server name, tool names trimmed. Declarations are
/// held as the host holds them (`set_policy` names a server as declared);
/// a server declared twice has the union of its declarations' tools.
fn declared_states(scenario: &Scenario) -> BTreeMap<String, Vec<Tables>> {
    let mut decls: Vec<(&str, BTreeMap<String, String>)> = scenario
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.tools.iter().map(|(t, p)| (t.clone(), p.approval_mode.clone())).collect()))
        .collect();
    let mut states: BTreeMap<String, Vec<Tables>> = BTreeMap::new();
    let mut snapshot = |decls: &[(&str, BTreeMap<String, String>)]| {
        let mut now: BTreeMap<String, Tables> = BTreeMap::new();
        for (name, tools) in decls {
            let tables = now.entry(name.trim().to_string()).or_default();
            tables.extend(tools.iter().map(|(t, m)| (t.trim().to_string(), m.clone())));
        }
        for (name, tables) in now {
            let seen = states.entry(name).or_default();
            if !seen.contains(&tables) {
                seen.push(tables);
            }
        }
    };
    snapshot(&decls);
    for step in &scenario.steps {
        if let Step::SetPolicy { server, tool, approval_mode } = step {
            for (_, tools) in decls.iter_mut().filter(|(name, _)| name == server) {
                match approval_mode {
                    Some(m) => tools.insert(tool.clone(), m.clone()),
                    None => tools.remove(tool),
                };
            }
            snapshot(&decls);
        }
    }
    states
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;

    /// A Codex scenario under `global` with server ` files ` (padded, as a
    /// host may write it): `read_file` approve, `search` prompt; then `more`
    /// and one call.
    fn scenario(global: &str, more: &str) -> Scenario {
        let text = format!(
            "id = \"t\"\ntitle = \"t\"\ncovers = [\"AC-2\"]\nprovider = \"codex\"\ncaught_by = [\"extra-tool-table\"]\n\
             [policy]\nglobal = \"{global}\"\n\
             [[servers]]\nname = \" files \"\ntransport = \"stdio\"\nreason = \"r\"\n\
             tools.\" read_file \".approval_mode = \"approve\"\ntools.search.approval_mode = \"prompt\"\n{more}\n\
             [[steps]]\nkind = \"tool_call\"\nserver = \"files\"\ntool = \"read_file\"\nexpect = {{ prompted = false }}\n"
        );
        Scenario::parse(Path::new("t.toml"), &text).unwrap()
    }

    const BRIDGE: &str = "[bridge]\nserver = \"host\"\ntools.lookup = { content = [] }\n";

    /// A server's settings as the fake records them: `tools` and an
    /// optional server default, everything from config.toml.
    fn server(tools: Value, default: Option<&str>) -> Value {
        let sources: serde_json::Map<String, Value> = tools.as_object().unwrap().keys().map(|t| (t.clone(), json!("config.toml"))).collect();
        json!({"transport": "stdio", "enabled": true, "default_tools_approval_mode": default, "tools": tools,
               "sources": {"tools": sources, "default_tools_approval_mode": "-c"}})
    }

    /// Observations of a fake run whose threads ended up with `configs`,
    /// by a driver claiming per-tool-approval.
    fn observed(configs: &[Value]) -> Observations {
        let mut obs = Observations::default();
        for servers in configs {
            obs.provider.transcript.push(json!({"event": "thread", "method": "thread/start", "approvalPolicy": "on-request"}));
            obs.provider.transcript.push(json!({"event": "approval_settings", "method": "thread/start", "servers": servers}));
        }
        obs.claimed.insert(CLAIM.to_string());
        obs
    }

    fn exact() -> Value {
        server(json!({"read_file": "approve", "search": "prompt"}), None)
    }

    fn fields(m: &[Mismatch]) -> Vec<&str> {
        m.iter().map(|m| m.field.as_str()).collect()
    }

    #[test]
    fn accepts_exactly_the_declared_tables_under_trimmed_names() {
        assert_eq!(check(&scenario("ask", ""), &observed(&[json!({"files": exact()})])), vec![]);
        // A table without approval_mode changes nothing.
        let empty = server(json!({"read_file": "approve", "search": "prompt", "other": null}), None);
        assert_eq!(check(&scenario("ask", ""), &observed(&[json!({"files": empty})])), vec![]);
    }

    #[test]
    fn rejects_an_extra_a_missing_or_a_changed_table_naming_server_tool_and_source() {
        let extra = server(json!({"read_file": "approve", "search": "prompt", "delete_file": "prompt"}), None);
        let got = check(&scenario("ask", ""), &observed(&[json!({"files": extra})]));
        assert_eq!(fields(&got), ["mcp_servers.files.tools.delete_file.approval_mode"]);
        assert_eq!((got[0].expected.as_str(), got[0].actual.as_str()), ("no table", "\"prompt\" (from config.toml)"));
        assert_eq!(got[0].at, "config of thread 1 (thread/start)");
        let changed = server(json!({"read_file": "prompt", "search": "prompt"}), None);
        let got = check(&scenario("ask", ""), &observed(&[json!({"files": changed})]));
        assert_eq!((got.len(), got[0].expected.as_str()), (1, "\"approve\""));
        let missing = server(json!({"read_file": "approve"}), None);
        let got = check(&scenario("ask", ""), &observed(&[json!({"files": missing})]));
        assert_eq!((fields(&got), got[0].actual.as_str()), (vec!["mcp_servers.files.tools.search.approval_mode"], "no table"));
        // A dotted tool is named as config.toml keys it.
        let dotted = server(json!({"read_file": "approve", "search": "prompt", "notes.append": "approve"}), None);
        assert_eq!(fields(&check(&scenario("ask", ""), &observed(&[json!({"files": dotted})]))), ["mcp_servers.files.tools.\"notes.append\".approval_mode"]);
    }

    #[test]
    fn rejects_a_table_on_a_server_the_scenario_does_not_declare() {
        let other = server(json!({"x": "approve"}), None);
        let got = check(&scenario("ask", ""), &observed(&[json!({"files": exact(), "other": other})]));
        assert_eq!(fields(&got), ["mcp_servers.other.tools.x.approval_mode"]);
        // Without tables or a default, another server is not this check's business.
        assert_eq!(check(&scenario("ask", ""), &observed(&[json!({"files": exact(), "other": server(json!({}), None)})])), vec![]);
    }

    #[test]
    fn rejects_any_server_default_under_ask() {
        for mode in ["approve", "prompt"] {
            let got = check(&scenario("ask", ""), &observed(&[json!({"files": server(json!({"read_file": "approve", "search": "prompt"}), Some(mode))})]));
            assert_eq!(fields(&got), ["mcp_servers.files.default_tools_approval_mode"], "{mode}");
            assert_eq!(got[0].actual, format!("\"{mode}\" (from -c)"));
        }
        let other = server(json!({}), Some("prompt"));
        assert_eq!(fields(&check(&scenario("ask", ""), &observed(&[json!({"files": exact(), "other": other})]))), ["mcp_servers.other.default_tools_approval_mode"]);
    }

    #[test]
    fn accepts_a_server_default_approve_under_auto_approve_only() {
        let approve = server(json!({"read_file": "approve", "search": "prompt"}), Some("approve"));
        assert_eq!(check(&scenario("auto-approve", ""), &observed(&[json!({"files": approve})])), vec![]);
        let prompt = server(json!({"read_file": "approve", "search": "prompt"}), Some("prompt"));
        assert_eq!(fields(&check(&scenario("auto-approve", ""), &observed(&[json!({"files": prompt})]))), ["mcp_servers.files.default_tools_approval_mode"]);
        // The per-tool tables must still be the declared ones.
        let no_tables = server(json!({}), Some("approve"));
        assert_eq!(check(&scenario("auto-approve", ""), &observed(&[json!({"files": no_tables})])).len(), 2);
    }

    #[test]
    fn accepts_approve_tables_for_the_bridges_own_tools_only() {
        let s = scenario("ask", BRIDGE);
        let own = server(json!({"lookup": "approve"}), None);
        assert_eq!(check(&s, &observed(&[json!({"files": exact(), "host": own})])), vec![]);
        let prompt = server(json!({"lookup": "prompt"}), None);
        assert_eq!(fields(&check(&s, &observed(&[json!({"files": exact(), "host": prompt})]))), ["mcp_servers.host.tools.lookup.approval_mode"]);
        let stranger = server(json!({"lookup": "approve", "rm": "approve"}), None);
        assert_eq!(fields(&check(&s, &observed(&[json!({"files": exact(), "host": stranger})]))), ["mcp_servers.host.tools.rm.approval_mode"]);
    }

    #[test]
    fn leaves_the_gateway_server_to_its_catalog() {
        let gw = "[[servers]]\nname = \"gw\"\ntransport = \"http\"\nreason = \"r\"\n\
                  [gateway]\nserver = \"gw\"\n[[gateway.catalog]]\nrow = \"r1\"\ntarget = \"crm\"\ntool = \"lookup\"\napproval = \"none\"\n";
        let rendered = server(json!({"gateway_crm___lookup": "approve"}), Some("prompt"));
        assert_eq!(check(&scenario("ask", gw), &observed(&[json!({"files": exact(), "gw": rendered.clone()})])), vec![]);
        // The same settings on any other server are judged.
        assert_eq!(check(&scenario("ask", gw), &observed(&[json!({"files": exact(), "gw2": rendered})])).len(), 2);
    }

    #[test]
    fn accepts_every_declared_state_a_set_policy_passes_through_and_no_other() {
        let s = scenario("ask", "[[steps]]\nkind = \"set_policy\"\nserver = \" files \"\ntool = \"search\"\napproval_mode = \"approve\"\n");
        let before = exact();
        let after = server(json!({"read_file": "approve", "search": "approve"}), None);
        assert_eq!(check(&s, &observed(&[json!({"files": before}), json!({"files": after})])), vec![]);
        let never = server(json!({"search": "approve"}), None);
        let got = check(&s, &observed(&[json!({"files": never})]));
        assert_eq!(fields(&got), ["mcp_servers.files.tools.read_file.approval_mode"]);
        assert!(got[0].expected.contains("one of 2 declared states"), "{got:?}");
    }

    #[test]
    fn a_thread_without_settings_fails_on_the_fakes_and_is_not_judged_on_a_real_run() {
        let mut obs = observed(&[json!({"files": exact()})]);
        obs.provider.transcript.push(json!({"event": "thread", "method": "thread/resume"}));
        assert_eq!(fields(&check(&scenario("ask", ""), &obs)), ["approval_settings"]);
        let mut real = Observations::default();
        real.claimed.insert(CLAIM.to_string());
        real.run.real = true;
        real.provider.transcript.push(json!({"event": "thread", "derived": true}));
        assert_eq!(check(&scenario("ask", ""), &real), vec![]);
    }

    #[test]
    fn only_codex_trials_of_drivers_claiming_per_tool_approval_are_judged() {
        let bad = json!({"files": server(json!({}), Some("prompt"))});
        let mut obs = observed(std::slice::from_ref(&bad));
        assert_eq!(check(&scenario("ask", ""), &obs).len(), 3);
        obs.claimed.clear();
        assert_eq!(check(&scenario("ask", ""), &obs), vec![]);
        let mut claude = scenario("ask", "");
        claude.provider = Provider::Claude;
        assert_eq!(check(&claude, &observed(&[bad])), vec![]);
    }
}
