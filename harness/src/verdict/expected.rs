//! Expected-failure lists, kept with the driver: one entry per line,
//! `scenario-id` (the whole scenario may fail) or `scenario-id:check` (only
//! that check, e.g. `server_calls`, may fail). Strict: an entry that no
//! longer matches any failure fails the run, so fixed bugs leave the list.

use std::collections::BTreeSet;
use std::path::Path;

use super::Mismatch;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub scenario: String,
    pub check: Option<String>,
    pub line: usize,
    /// The first sentence of the comment paragraph above it: what the
    /// driver does wrong, for the matrix.
    pub finding: String,
}

#[derive(Debug, Clone, Default)]
pub struct ExpectedFailures {
    pub entries: Vec<Entry>,
}

impl ExpectedFailures {
    /// Parses a list; every scenario named must be one of `known`.
    pub fn parse(path: &Path, text: &str, known: &BTreeSet<String>) -> Result<ExpectedFailures, String> {
        let mut entries = Vec::new();
        let mut paragraph = String::new();
        let mut in_comment = false;
        for (i, raw) in text.lines().enumerate() {
            if let Some(comment) = raw.trim().strip_prefix('#') {
                // A lone `#` (or the first comment after entries) starts a new paragraph.
                if comment.trim().is_empty() || !in_comment {
                    paragraph.clear();
                }
                in_comment = true;
                paragraph.push_str(comment.trim());
                paragraph.push(' ');
                continue;
            }
            in_comment = false;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = format!("{}:{}:1", path.display(), i + 1);
            let (scenario, check) = match line.split_once(':') {
                Some((s, c)) => (s.trim(), Some(c.trim())),
                None => (line, None),
            };
            if !known.contains(scenario) {
                return Err(format!("{at}: no scenario `{scenario}` in this run"));
            }
            if check.is_some_and(|c| c.is_empty() || c.contains(char::is_whitespace)) {
                return Err(format!("{at}: `{line}` is not `scenario` or `scenario:check`"));
            }
            let finding = first_sentence(&paragraph);
            entries.push(Entry { scenario: scenario.to_string(), check: check.map(String::from), line: i + 1, finding });
        }
        Ok(ExpectedFailures { entries })
    }

    pub fn load(path: &Path, known: &BTreeSet<String>) -> Result<ExpectedFailures, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        ExpectedFailures::parse(path, &text, known)
    }

    /// The entries that excuse this failure, if together they excuse all of
    /// its mismatches; None if the failure is not expected.
    pub fn excuse(&self, scenario: &str, mismatches: &[Mismatch]) -> Option<Vec<&Entry>> {
        let mine: Vec<&Entry> = self.entries.iter().filter(|e| e.scenario == scenario).collect();
        if let Some(whole) = mine.iter().find(|e| e.check.is_none()) {
            return Some(vec![whole]);
        }
        let used: Vec<&Entry> =
            mine.into_iter().filter(|e| mismatches.iter().any(|m| Some(&m.field) == e.check.as_ref())).collect();
        let all_covered = !mismatches.is_empty()
            && mismatches.iter().all(|m| used.iter().any(|e| e.check.as_ref() == Some(&m.field)));
        all_covered.then_some(used)
    }
}

/// Up to and including the first `. ` (or all of it).
fn first_sentence(text: &str) -> String {
    let text = text.trim();
    text.find(". ").map_or(text, |end| &text[..=end]).to_string()
}

/// `scenario` or `scenario:check` lines that make the given failures expected.
pub fn baseline(failures: &[(String, Vec<Mismatch>)]) -> String {
    let mut lines = BTreeSet::new();
    for (scenario, mismatches) in failures {
        for m in mismatches {
            lines.insert(format!("{scenario}:{}", m.field));
        }
    }
    let mut out = String::from("# Expected failures: `scenario` or `scenario:check`, one per line.\n");
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Applies an expected-failure list: matching failures become expected,
/// and each entry that matched nothing becomes a failing record of its own.
pub fn apply(trials: &mut Vec<reports::Trial>, expected: &ExpectedFailures) {
    let used = excuse(trials, expected);
    for e in expected.entries.iter().filter(|e| !used.contains(&e.line)) {
        trials.push(reports::Trial {
            name: format!("expected-failures::{}", e.text()),
            scenario: e.scenario.clone(),
            provider: "expected-failures".into(),
            driver: trials.first().map(|t| t.driver.clone()).unwrap_or_default(),
            outcome: reports::Outcome::UnexpectedPass,
            note: Some(format!("line {}: `{}` no longer fails; remove it", e.line, e.text())),
            mismatches: Vec::new(),
            seconds: 0.0,
        });
    }
}

/// Only the first half of [`apply`]: matching failures become expected; an
/// entry that matched nothing is not reported (a shard of a partitioned
/// run may not hold the trials it is about). Returns the lines used.
pub fn excuse(trials: &mut [reports::Trial], expected: &ExpectedFailures) -> BTreeSet<usize> {
    let mut used = BTreeSet::new();
    for t in trials.iter_mut().filter(|t| t.outcome == reports::Outcome::Fail) {
        if let Some(entries) = expected.excuse(&t.scenario, &t.mismatches) {
            let names: Vec<String> = entries.iter().map(|e| e.text()).collect();
            used.extend(entries.iter().map(|e| e.line));
            t.outcome = reports::Outcome::ExpectedFail;
            t.note = Some(format!("expected by {}", names.join(", ")));
        }
    }
    used
}

impl Entry {
    /// `scenario` or `scenario:check`, as written.
    pub fn text(&self) -> String {
        match &self.check {
            Some(c) => format!("{}:{c}", self.scenario),
            None => self.scenario.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(field: &str) -> Mismatch {
        Mismatch { at: "step 1".into(), field: field.into(), expected: "a".into(), actual: "b".into() }
    }

    #[test]
    fn parses_and_excuses_whole_scenarios_or_single_checks() {
        let known: BTreeSet<String> = ["s1", "s2"].iter().map(|s| s.to_string()).collect();
        let list = ExpectedFailures::parse(Path::new("x.txt"), "# comment\ns1\ns2:server_calls  # why\n", &known).unwrap();
        assert!(list.excuse("s1", &[m("anything")]).is_some());
        assert!(list.excuse("s2", &[m("server_calls")]).is_some());
        assert!(list.excuse("s2", &[m("server_calls"), m("prompted")]).is_none());
        assert!(list.excuse("s3", &[m("server_calls")]).is_none());
    }

    #[test]
    fn unknown_scenarios_and_bad_lines_name_file_and_line() {
        let known: BTreeSet<String> = ["s1".to_string()].into();
        let e = ExpectedFailures::parse(Path::new("x.txt"), "s1\nnope\n", &known).unwrap_err();
        assert!(e.starts_with("x.txt:2:1: no scenario `nope`"), "{e}");
        let e = ExpectedFailures::parse(Path::new("x.txt"), "s1:two words\n", &known).unwrap_err();
        assert!(e.starts_with("x.txt:1:1:"), "{e}");
    }

    #[test]
    fn each_entry_carries_the_first_sentence_of_the_paragraph_above_it() {
        let known: BTreeSet<String> = ["s1", "s2", "s3"].iter().map(|s| s.to_string()).collect();
        let text = "# Header. Not a finding.\n#\n# Drops the policy. Because\n# of this.\ns1\ns2\n# Asks twice\ns3\n";
        let list = ExpectedFailures::parse(Path::new("x.txt"), text, &known).unwrap();
        let findings: Vec<&str> = list.entries.iter().map(|e| e.finding.as_str()).collect();
        assert_eq!(findings, ["Drops the policy.", "Drops the policy.", "Asks twice"]);
    }

    #[test]
    fn baseline_lists_each_failed_check_once() {
        let b = baseline(&[("s1".into(), vec![m("prompted"), m("prompted")]), ("s2".into(), vec![m("answer")])]);
        assert!(b.ends_with("s1:prompted\ns2:answer\n"), "{b}");
    }
}
