//! The provider-neutral contract: normalization, conflicts, fingerprints
//! (property tests) and the exact Codex projection (snapshots).

use std::collections::BTreeMap;

use drivers::codex::projection::config_toml;
use drivers::fingerprint::fingerprint;
use drivers::{ApprovalPolicy, GlobalPolicy, McpServerSpec, ServerSet, Transport};
use proptest::prelude::*;

fn stdio(name: &str, tools: &[(&str, ApprovalPolicy)]) -> McpServerSpec {
    McpServerSpec {
        name: name.to_string(),
        transport: Transport::Stdio { command: "srv".into(), args: vec!["--flag".into()], env: BTreeMap::new() },
        reason: "test".into(),
        tools: tools.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
    }
}

#[test]
fn projection_is_exactly_per_tool_tables() {
    let set = ServerSet::build([
        stdio("files", &[("write_file", ApprovalPolicy::Prompt), ("read_file", ApprovalPolicy::Approve)]),
        McpServerSpec {
            name: "tracker".into(),
            transport: Transport::Http { url: "http://127.0.0.1:9/mcp".into(), bearer_token_env: Some("TRACKER_TOKEN".into()) },
            reason: "issues".into(),
            tools: [("search.v2".to_string(), ApprovalPolicy::Approve)].into(),
        },
    ])
    .unwrap();
    insta::assert_snapshot!(config_toml(&set));
}

#[test]
fn projection_parses_as_toml_and_round_trips_every_policy() {
    let set = ServerSet::build([stdio("a-b_c", &[("x.y", ApprovalPolicy::Approve), ("z", ApprovalPolicy::Prompt)])]).unwrap();
    let table: toml::Table = config_toml(&set).parse().unwrap();
    assert_eq!(table["mcp_servers"]["a-b_c"]["tools"]["x.y"]["approval_mode"].as_str(), Some("approve"));
    assert_eq!(table["mcp_servers"]["a-b_c"]["tools"]["z"]["approval_mode"].as_str(), Some("prompt"));
}

#[test]
fn closed_enum_is_case_sensitive() {
    assert_eq!(ApprovalPolicy::parse("approve"), Ok(ApprovalPolicy::Approve));
    for bad in ["Approve", "APPROVE", "auto", "always", "never", "", " approve"] {
        assert_eq!(ApprovalPolicy::parse(bad).unwrap_err().kind, "invalid-policy", "{bad:?}");
    }
}

#[test]
fn duplicates_conflict_unless_identical() {
    let a = stdio("files", &[("read", ApprovalPolicy::Approve)]);
    assert!(ServerSet::build([a.clone(), a.clone()]).is_ok());
    let b = stdio("files", &[("read", ApprovalPolicy::Prompt)]);
    assert_eq!(ServerSet::build([a.clone(), b]).unwrap_err().kind, "duplicate-conflict");
    let padded = stdio(" files ", &[(" read ", ApprovalPolicy::Approve)]);
    assert_eq!(ServerSet::build([a.clone(), padded]).unwrap(), ServerSet::build([a]).unwrap());
    let clash = stdio("files", &[("read", ApprovalPolicy::Approve), (" read", ApprovalPolicy::Prompt)]);
    assert_eq!(ServerSet::build([clash]).unwrap_err().kind, "duplicate-conflict");
}

#[test]
fn bad_names_are_refused() {
    for bad in ["", "has space", "dot.ted", "ünïcode"] {
        assert_eq!(ServerSet::build([stdio(bad, &[])]).unwrap_err().kind, "invalid-name", "{bad:?}");
    }
    assert_eq!(ServerSet::build([stdio("ok", &[("bad tool", ApprovalPolicy::Approve)])]).unwrap_err().kind, "invalid-name");
}

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_-]{0,8}"
}

fn policy() -> impl Strategy<Value = ApprovalPolicy> {
    prop_oneof![Just(ApprovalPolicy::Prompt), Just(ApprovalPolicy::Approve)]
}

fn specs() -> impl Strategy<Value = Vec<McpServerSpec>> {
    proptest::collection::btree_map(name(), proptest::collection::btree_map(name(), policy(), 0..4), 1..4).prop_map(|m| {
        m.into_iter()
            .map(|(server, tools)| McpServerSpec {
                name: server,
                transport: Transport::Stdio { command: "srv".into(), args: vec![], env: BTreeMap::new() },
                reason: "r".into(),
                tools,
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn fingerprint_ignores_order_and_padding(specs in specs(), seed in any::<u64>()) {
        let base = ServerSet::build(specs.clone()).unwrap();
        let mut shuffled = specs.clone();
        let n = shuffled.len();
        shuffled.rotate_left((seed as usize) % n);
        if seed % 2 == 0 { shuffled.reverse(); }
        let padded: Vec<McpServerSpec> = shuffled.into_iter().map(|mut s| {
            s.name = format!("  {}\t", s.name);
            s.tools = s.tools.into_iter().map(|(t, p)| (format!(" {t} "), p)).collect();
            s
        }).collect();
        let other = ServerSet::build(padded).unwrap();
        prop_assert_eq!(&base, &other);
        prop_assert_eq!(fingerprint(&base, GlobalPolicy::Ask), fingerprint(&other, GlobalPolicy::Ask));
        prop_assert_eq!(config_toml(&base), config_toml(&other));
    }

    #[test]
    fn fingerprint_sees_every_policy_change(specs in specs(), pick in any::<prop::sample::Index>(), new_tool in "[A-Z]{1,4}") {
        let base = ServerSet::build(specs.clone()).unwrap();
        let fp = fingerprint(&base, GlobalPolicy::Ask);
        // Flip, remove or add one tool policy: each must change the fingerprint.
        let mut changed = specs.clone();
        let i = pick.index(changed.len());
        match changed[i].tools.keys().next().cloned() {
            Some(t) => {
                let flipped = match changed[i].tools[&t] { ApprovalPolicy::Approve => ApprovalPolicy::Prompt, ApprovalPolicy::Prompt => ApprovalPolicy::Approve };
                let mut flip = changed.clone();
                flip[i].tools.insert(t.clone(), flipped);
                prop_assert_ne!(&fp, &fingerprint(&ServerSet::build(flip).unwrap(), GlobalPolicy::Ask));
                changed[i].tools.remove(&t);
            }
            None => { changed[i].tools.insert(new_tool, ApprovalPolicy::Approve); }
        }
        prop_assert_ne!(&fp, &fingerprint(&ServerSet::build(changed).unwrap(), GlobalPolicy::Ask));
        prop_assert_ne!(&fp, &fingerprint(&base, GlobalPolicy::AutoApprove));
    }

    #[test]
    fn normalization_is_idempotent(specs in specs()) {
        let once = ServerSet::build(specs).unwrap();
        let twice = ServerSet::build(once.servers().cloned().collect::<Vec<_>>()).unwrap();
        prop_assert_eq!(once, twice);
    }
}
