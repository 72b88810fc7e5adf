//! Fidelity of the fakes. A trial's run directory is captured as the
//! judge-level summary plus every message of both conversations (driver <->
//! CLI, CLI <-> each MCP server), normalized and in a canonical order, so a
//! run on the fake can be compared message by message with a committed
//! recording of the same trial on the real CLI.

pub mod allow;
pub mod compare;
mod conversation;
mod normalize;
mod order;
mod summary;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

pub use summary::diff as summary_diff;

use crate::trial::{FakeCommand, Observations};

/// Conversation name (`provider`, `mcp/<server>`) -> its entries.
pub type Conversations = BTreeMap<String, Vec<Value>>;

/// What a trial leaves for fidelity comparisons.
#[derive(Debug, Default, Clone)]
pub struct Capture {
    pub summary: Value,
    pub conversations: Conversations,
}

/// Reads and normalizes a finished trial's run directory; `fake_mcp` is how
/// the trial started the fake MCP server.
pub fn capture(dir: &Path, obs: &Observations, fake_mcp: &FakeCommand) -> Capture {
    let provider = conversation::provider(&obs.provider.transcript);
    let mut mcp = BTreeMap::new();
    let files = std::fs::read_dir(dir.join("mcp")).into_iter().flatten().flatten().map(|e| e.path());
    for path in files.filter(|p| p.extension().is_some_and(|e| e == "jsonl")) {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        mcp.insert(name, conversation::mcp(&path));
    }
    let ordered = order::canonical(provider, mcp);
    let program = (fake_mcp.program.display().to_string(), fake_mcp.prefix.clone());
    let mut n = normalize::Normalizer::new(&dir.display().to_string(), &obs.run.secrets, program);
    // The provider conversation first: ids are named where they are made
    // (a thread id in thread/start's answer, not in an MCP call's `_meta`).
    let provider_first = ordered.get("provider").into_iter().chain(ordered.iter().filter(|(k, _)| *k != "provider").map(|(_, v)| v));
    provider_first.flatten().for_each(|e| n.learn(e));
    let conversations = ordered.into_iter().map(|(k, v)| (k, v.iter().map(|e| n.value(e)).collect())).collect();
    Capture { summary: n.value(&summary::summarize(obs)), conversations }
}

/// Every normalization and ordering rule, one `what: why` line each.
pub fn rules() -> Vec<String> {
    normalize::describe().into_iter().chain(order::describe()).collect()
}

/// A committed recording: `recordings/<provider>/<version>/<scenario>.json`
/// (`<version>+tool-search` for a run with Claude Code's tool search on).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    pub scenario: String,
    pub provider: String,
    pub version: String,
    /// Claude Code ran with its tool search on (written only when it did).
    #[serde(default)]
    pub tool_search: bool,
    pub driver: String,
    pub verdict: String,
    pub summary: Value,
    pub conversations: Conversations,
    /// A generated case's scenario text (its id is no suite scenario's).
    #[serde(default)]
    pub case: Option<String>,
}

impl Recording {
    pub fn parse(text: &str) -> Result<Recording, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// Pretty JSON with one message per line, so a re-recording's diff
    /// shows the messages that changed.
    pub fn to_text(&self) -> String {
        let mut out = String::from("{\n");
        for (k, v) in [("scenario", &self.scenario), ("provider", &self.provider), ("version", &self.version)] {
            out += &format!("  {}: {},\n", json!(k), json!(v));
        }
        if self.tool_search {
            out += "  \"tool_search\": true,\n";
        }
        for (k, v) in [("driver", &self.driver), ("verdict", &self.verdict)] {
            out += &format!("  {}: {},\n", json!(k), json!(v));
        }
        if let Some(case) = &self.case {
            out += &format!("  \"case\": {},\n", json!(case));
        }
        let summary = serde_json::to_string_pretty(&self.summary).unwrap_or_default().replace('\n', "\n  ");
        out += &format!("  \"summary\": {summary},\n  \"conversations\": {{");
        // The driver's conversation first, then the MCP servers'.
        let provider = self.conversations.iter().filter(|(k, _)| *k == "provider");
        let servers = self.conversations.iter().filter(|(k, _)| *k != "provider");
        for (i, (name, entries)) in provider.chain(servers).enumerate() {
            out += if i == 0 { "\n" } else { ",\n" };
            out += &format!("    {}: [", json!(name));
            for (j, e) in entries.iter().enumerate() {
                out += if j == 0 { "\n      " } else { ",\n      " };
                out += &e.to_string();
            }
            out += if entries.is_empty() { "]" } else { "\n    ]" };
        }
        out += if self.conversations.is_empty() { "}\n}\n" } else { "\n  }\n}\n" };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_reads_back_what_it_wrote() {
        let r = Recording {
            scenario: "s".into(),
            provider: "codex".into(),
            version: "0.171.0".into(),
            tool_search: false,
            driver: "reference".into(),
            verdict: "pass".into(),
            summary: json!({"outcomes": [{"step": 0}], "server_calls": [1]}),
            conversations: BTreeMap::from([
                ("mcp/files".to_string(), vec![]),
                ("provider".to_string(), vec![json!({"launch": ["app-server"]}), json!({"c2s": {"id": "<c0>", "method": "initialize"}})]),
            ]),
            case: None,
        };
        let text = r.to_text();
        assert!(text.contains("\n      {\"c2s\":{\"id\":\"<c0>\",\"method\":\"initialize\"}}\n"), "{text}");
        assert!(text.find("\"provider\": [") < text.find("\"mcp/files\": ["), "{text}");
        assert!(!text.contains("tool_search"), "{text}");
        let on = Recording { tool_search: true, ..r.clone() }.to_text();
        assert!(Recording::parse(&on).unwrap().tool_search, "{on}");
        let case = Recording { case: Some("id = \"gen-1-2\"\n".into()), ..r.clone() }.to_text();
        let back = Recording::parse(&text).unwrap();
        assert_eq!((back.summary, back.conversations, back.case), (r.summary, r.conversations, None));
        assert_eq!(Recording::parse(&case).unwrap().case.as_deref(), Some("id = \"gen-1-2\"\n"), "{case}");
    }
}
