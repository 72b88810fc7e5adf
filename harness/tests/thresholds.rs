//! Every version fact of both fakes' profiles names, in its doc comment, a
//! committed recording that shows it, and every recording the profiles and
//! docs/reported-regressions.md name exists: a threshold with no evidence,
//! or evidence renamed away, fails here.

use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The doc comment right above `pub fn name(&self)` in `source`, its lines
/// joined (without a space after a line that ends inside a path).
fn doc_of(source: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = source.lines().collect();
    let at = lines.iter().position(|l| l.trim_start().starts_with(&format!("pub fn {name}(&self)")))?;
    let mut doc: Vec<&str> = lines[..at].iter().rev().map(|l| l.trim()).take_while(|l| l.starts_with("///") || l.starts_with("#[")).filter_map(|l| l.strip_prefix("///")).collect();
    doc.reverse();
    Some(doc.iter().map(|l| l.trim()).fold(String::new(), |text, line| if text.ends_with('/') || text.is_empty() { text + line } else { text + " " + line }))
}

/// The `recordings/...` paths `text` names.
fn cited(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == '`' || c == '(' || c == ',' || c == ';')
        .filter(|w| w.starts_with("recordings/"))
        .map(|w| w.trim_end_matches(['.', ')', ':']).to_string())
        .collect()
}

/// Whether `path` (below the checkout) exists; a `<...>` segment stands for
/// any entry of its folder.
fn exists(base: &Path, segments: &[&str]) -> bool {
    match segments.split_first() {
        None => true,
        Some((s, rest)) if s.starts_with('<') && s.ends_with('>') => {
            std::fs::read_dir(base).into_iter().flatten().flatten().any(|e| exists(&e.path(), rest))
        }
        Some((s, rest)) => base.join(s).exists() && exists(&base.join(s), rest),
    }
}

fn missing(paths: &[String]) -> Vec<String> {
    paths.iter().filter(|p| !exists(Path::new(ROOT), &p.split('/').filter(|s| !s.is_empty()).collect::<Vec<_>>())).cloned().collect()
}

#[test]
fn every_profile_fact_names_a_committed_recording() {
    let codex = fakes::codex::profile::Profile { version: fakes::codex::profile::MEASURED[0] };
    let claude = fakes::claude::profile::Profile { version: fakes::claude::profile::MEASURED[0] };
    let profiles = [
        ("fakes/src/codex/profile.rs", codex.facts().into_iter().map(|(n, _)| n).collect::<Vec<_>>()),
        ("fakes/src/claude/profile.rs", claude.facts().into_iter().map(|(n, _)| n).collect()),
    ];
    let mut problems = Vec::new();
    for (file, facts) in &profiles {
        let source = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        for fact in facts {
            let Some(doc) = doc_of(&source, fact) else {
                problems.push(format!("{file}: no `pub fn {fact}(&self)`"));
                continue;
            };
            let paths = cited(&doc);
            if paths.is_empty() {
                problems.push(format!("{file}: {fact} names no recording"));
            }
            problems.extend(missing(&paths).into_iter().map(|p| format!("{file}: {fact} names {p}, which does not exist")));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_recording_the_regression_outcomes_the_provider_facts_and_the_inventory_name_exists() {
    for file in ["docs/reported-regressions.md", "docs/providers.md", "fakes/src/claude/inventory.rs"] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        let text: String = text.lines().map(|l| l.trim_start().trim_start_matches("//!").trim()).collect::<Vec<_>>().join(" ");
        let paths = cited(&text);
        assert!(!paths.is_empty(), "{file} names no recording");
        assert_eq!(missing(&paths), Vec::<String>::new(), "{file}");
    }
}

#[test]
fn the_checks_can_fail() {
    assert_eq!(missing(&["recordings/codex/<V>/no-such-scenario.json".into()]).len(), 1);
    assert!(missing(&["recordings/codex/<V>/ask-forwards-default-prompts.json".into()]).is_empty());
    let doc = doc_of("/// first in 0.1.0 (recordings/codex/\n/// 0.1.0/x.json).\npub fn f(&self) -> bool {", "f").unwrap();
    assert_eq!(cited(&doc), ["recordings/codex/0.1.0/x.json"]);
}
