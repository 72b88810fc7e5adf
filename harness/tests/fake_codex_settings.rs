//! The fake `codex app-server` records, for every thread it opens, the
//! approval settings the thread ended up with and the config source of each
//! (`approval_settings`): what the judge reads to check a driver's rendering.

mod codex_lab;

use codex_lab::*;
use serde_json::json;

const EVENT: &str = fakes::codex::effective::EVENT;

#[test]
fn each_setting_is_reported_with_the_source_that_set_it() {
    let file = "[mcp_servers.lab.tools.plain]\napproval_mode = \"approve\"\n[mcp_servers.lab.tools.\"notes.append\"]\napproval_mode = \"prompt\"\n";
    let mut s = start("0.171.0", plain(), &["plain", "ro"], file, &["mcp_servers.lab.default_tools_approval_mode=\"prompt\""]).unwrap();
    let t = thread_id(&s.thread(json!({"config": {"mcp_servers.lab.tools.ro.approval_mode": "writes"}})));
    let events = s.events(EVENT);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((&events[0]["thread"], &events[0]["method"]), (&json!(t), &json!("thread/start")));
    assert_eq!(
        events[0]["servers"]["lab"],
        json!({"transport": "stdio", "enabled": true, "default_tools_approval_mode": "prompt",
               "tools": {"plain": "approve", "notes.append": "prompt", "ro": "writes"},
               "sources": {"default_tools_approval_mode": "-c",
                           "tools": {"plain": "config.toml", "notes.append": "config.toml", "ro": "thread/start config"}}})
    );
    // What it reports is what it applies: the server default makes `ro` ask
    // were it not for its own `writes` table, and `plain` runs.
    let (requests, items) = s.turn(&t, decline);
    assert!(requests.is_empty(), "{requests:?}");
    assert_eq!(items.len(), 2);
}

#[test]
fn a_rejoined_thread_reports_the_settings_it_kept_and_a_resumed_one_its_own() {
    let approve = json!({"mcp_servers.lab.tools.plain.approval_mode": "approve"});
    let prompt = json!({"mcp_servers.lab.tools.plain.approval_mode": "prompt"});
    let mut s = start_turns("0.171.0", plain(), &[&["plain"], &["plain"]], "", &[], json!({})).unwrap();
    let t = thread_id(&s.thread(json!({"config": approve})));
    s.turn(&t, decline);
    // Rejoining the loaded thread keeps its config, whatever the resume sent.
    s.request("thread/resume", json!({"threadId": t, "config": prompt})).unwrap();
    let events = s.events(EVENT);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!((&events[1]["rejoined"], &events[1]["method"]), (&json!(true), &json!("thread/resume")));
    assert_eq!(events[1]["servers"], events[0]["servers"]);
    assert_eq!(events[1]["servers"]["lab"]["tools"]["plain"], "approve");
    // A new app-server resuming the thread applies the resume's config.
    let mut s = s.relaunch(json!({}));
    s.request("thread/resume", json!({"threadId": t, "config": prompt})).unwrap();
    let events = s.events(EVENT);
    let last = &events[events.len() - 1]["servers"]["lab"];
    assert_eq!((&last["tools"]["plain"], &last["sources"]["tools"]["plain"]), (&json!("prompt"), &json!("thread/resume config")));
}

#[test]
fn a_thread_that_fails_to_open_reports_nothing() {
    let mut s = start("0.171.0", plain(), &[], "[mcp_servers.lab.tools.plain]\napproval_mode = \"bogus\"\n", &[]).unwrap();
    assert_eq!(s.thread(json!({}))["error"]["code"], -32600);
    assert_eq!((s.events("thread").len(), s.events(EVENT).len()), (0, 0));
}
