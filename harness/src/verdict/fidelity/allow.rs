//! The allow-list of known differences between the fakes and the real CLIs
//! (`recordings/ALLOWED.toml`). Every entry says why its difference may
//! stand; a difference no entry covers fails the fidelity trial, and an
//! entry (or one of its pointers) that covers nothing in any comparison is
//! stale and fails too, so the list only shrinks as the fakes improve.

use std::collections::BTreeSet;

use fakes::version::{Version, VersionRange};
use serde::Deserialize;

use super::compare::{Difference, Kind};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    allow: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// `codex` or `claude`.
    provider: String,
    /// Provider versions it holds for (`>=0.171.0`); all when absent.
    versions: Option<String>,
    /// `provider` (driver <-> CLI) or `mcp` (CLI <-> any MCP server); both
    /// when absent.
    conversation: Option<String>,
    /// The message kind as reported (`tools/call`, `thread/start result`);
    /// a trailing `*` matches any kind starting with what precedes it; all
    /// when absent.
    message: Option<String>,
    /// `missing`, `extra`, `order` or `value`.
    kind: String,
    /// For `value`: JSON pointers into the message, each covering itself
    /// and everything under it; `*` matches one segment.
    #[serde(default)]
    pointers: Vec<String>,
    /// Why this difference may stand. Required.
    why: String,
}

struct Rule {
    entry: Entry,
    versions: VersionRange,
    kind: Kind,
}

/// A loaded allow-list.
pub struct AllowList {
    rules: Vec<Rule>,
}

/// One allow-list item that can go stale: (entry, pointer index or None).
pub type Use = (usize, Option<usize>);

impl AllowList {
    pub fn parse(text: &str) -> Result<AllowList, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut rules = Vec::new();
        for (i, entry) in file.allow.into_iter().enumerate() {
            let at = |m: &str| format!("[[allow]] #{} ({} {}): {m}", i + 1, entry.provider, entry.message.as_deref().unwrap_or("*"));
            let kind = match entry.kind.as_str() {
                "missing" => Kind::Missing,
                "extra" => Kind::Extra,
                "order" => Kind::Order,
                "value" => Kind::Value,
                other => return Err(at(&format!("kind `{other}`: expected missing, extra, order or value"))),
            };
            if entry.why.trim().is_empty() {
                return Err(at("`why` is empty: say why this difference may stand"));
            }
            if (kind == Kind::Value) == entry.pointers.is_empty() {
                return Err(at("`pointers` go with kind = \"value\", and only there"));
            }
            if let Some(p) = entry.pointers.iter().find(|p| !p.starts_with('/')) {
                return Err(at(&format!("pointer `{p}` does not start with /")));
            }
            if !matches!(entry.conversation.as_deref(), None | Some("provider" | "mcp")) {
                return Err(at("conversation: expected provider or mcp"));
            }
            let versions = match &entry.versions {
                Some(v) => v.parse::<VersionRange>().map_err(|e| at(&e))?,
                None => VersionRange::any(),
            };
            rules.push(Rule { entry, versions, kind });
        }
        Ok(AllowList { rules })
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The entry (and pointer) that allows `d` in a comparison of `provider`
    /// `version`, if any.
    pub fn allows(&self, provider: &str, version: Version, d: &Difference) -> Option<Use> {
        self.rules.iter().enumerate().find_map(|(i, r)| {
            let e = &r.entry;
            let conversation = if d.conversation == "provider" { "provider" } else { "mcp" };
            let fits = e.provider == provider
                && r.versions.contains(version)
                && r.kind == d.kind
                && e.conversation.as_deref().is_none_or(|c| c == conversation)
                && e.message.as_deref().is_none_or(|m| match m.strip_suffix('*') {
                    Some(prefix) => d.message.starts_with(prefix),
                    None => d.message == m,
                });
            if !fits {
                return None;
            }
            if r.kind != Kind::Value {
                return Some((i, None));
            }
            e.pointers.iter().position(|p| covers(p, &d.pointer)).map(|p| (i, Some(p)))
        })
    }

    /// Entries and pointers no comparison used, described.
    pub fn stale(&self, used: &BTreeSet<Use>) -> Vec<String> {
        let mut out = Vec::new();
        for (i, r) in self.rules.iter().enumerate() {
            let e = &r.entry;
            let name = format!(
                "[[allow]] #{} {} {} {} {}",
                i + 1,
                e.provider,
                e.versions.as_deref().unwrap_or("*"),
                e.message.as_deref().unwrap_or("*"),
                e.kind
            );
            if r.kind != Kind::Value {
                if !used.contains(&(i, None)) {
                    out.push(name);
                }
                continue;
            }
            for (p, pointer) in e.pointers.iter().enumerate() {
                if !used.contains(&(i, Some(p))) {
                    out.push(format!("{name} {pointer}"));
                }
            }
        }
        out
    }
}

/// `pattern` is `pointer` or a prefix of it, segment by segment; `*` is any
/// one segment.
fn covers(pattern: &str, pointer: &str) -> bool {
    let pat: Vec<&str> = pattern.split('/').skip(1).collect();
    let ptr: Vec<&str> = pointer.split('/').skip(1).collect();
    pat.len() <= ptr.len() && pat.iter().zip(&ptr).all(|(a, b)| *a == "*" || a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(kind: Kind, message: &str, pointer: &str) -> Difference {
        Difference {
            conversation: "mcp/files".into(),
            kind,
            message: message.into(),
            real_at: Some(1),
            fake_at: Some(1),
            pointer: pointer.into(),
            real: None,
            fake: None,
        }
    }

    #[test]
    fn entries_match_by_provider_version_kind_message_and_pointer_prefix() {
        let list = AllowList::parse(
            r#"
            [[allow]]
            provider = "codex"
            versions = ">=0.171.0"
            conversation = "mcp"
            message = "tools/call"
            kind = "value"
            pointers = ["/params/_meta/x-codex-turn-metadata", "/params/*/windowId"]
            why = "not simulated yet"

            [[allow]]
            provider = "codex"
            message = "item/*"
            kind = "missing"
            why = "not simulated yet"
            "#,
        )
        .unwrap();
        let v = |s: &str| s.parse::<Version>().unwrap();
        let meta = diff(Kind::Value, "tools/call", "/params/_meta/x-codex-turn-metadata/model");
        assert_eq!(list.allows("codex", v("0.171.0"), &meta), Some((0, Some(0))));
        assert_eq!(list.allows("codex", v("0.153.4"), &meta), None);
        assert_eq!(list.allows("claude", v("0.171.0"), &meta), None);
        assert_eq!(list.allows("codex", v("0.171.0"), &diff(Kind::Value, "tools/call", "/params/_meta/windowId")), Some((0, Some(1))));
        assert_eq!(list.allows("codex", v("0.171.0"), &diff(Kind::Value, "tools/call", "/params/_meta")), None);
        assert_eq!(list.allows("codex", v("0.146.0"), &diff(Kind::Missing, "item/started userMessage", "")), Some((1, None)));
        let used = BTreeSet::from([(0, Some(0))]);
        assert_eq!(list.stale(&used).len(), 2);
    }

    #[test]
    fn every_entry_needs_a_reason_and_known_fields() {
        let bad = [
            ("provider = \"codex\"\nkind = \"missing\"\nwhy = \" \"", "`why` is empty"),
            ("provider = \"codex\"\nkind = \"gone\"\nwhy = \"x\"", "kind `gone`"),
            ("provider = \"codex\"\nkind = \"value\"\nwhy = \"x\"", "`pointers` go with"),
            ("provider = \"codex\"\nkind = \"missing\"\nwhy = \"x\"\nbecause = \"y\"", "unknown field"),
            ("provider = \"codex\"\nkind = \"missing\"", "missing field `why`"),
        ];
        for (body, needle) in bad {
            let err = AllowList::parse(&format!("[[allow]]\n{body}\n")).err().unwrap_or_default();
            assert!(err.contains(needle), "{body}: {err}");
        }
    }
}
