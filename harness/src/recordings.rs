//! The committed recordings of real CLI runs (`recordings/`): each one's
//! scenario is replayed on the fake with the reference driver, and the two
//! runs are compared, summary and every message, against the allow-list of
//! known differences (`recordings/ALLOWED.toml`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fakes::version::Version;

use crate::plan::{Target, ToolSearch};
use crate::reference::ReferenceDriver;
use crate::runner::run_with;
use crate::scenario::Scenario;
use crate::trial::Fakes;
use crate::verdict::fidelity::allow::{AllowList, Use};
use crate::verdict::fidelity::compare::{compare, Comparison, Difference};
use crate::verdict::fidelity::{summary_diff, Recording};

/// The allow-list's file name inside the recordings directory.
pub const ALLOWED: &str = "ALLOWED.toml";

/// Longest list of differences a failure prints.
const SHOWN: usize = 40;

/// Every recording under `root` (`<provider>/<version>/<scenario>.json`,
/// `<version>+tool-search` for Claude Code's tool search on), sorted.
pub fn files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for provider in std::fs::read_dir(root).into_iter().flatten().flatten() {
        for version in std::fs::read_dir(provider.path()).into_iter().flatten().flatten() {
            let found = std::fs::read_dir(version.path()).into_iter().flatten().flatten().map(|f| f.path());
            files.extend(found.filter(|f| f.extension().is_some_and(|e| e == "json")));
        }
    }
    files.sort();
    files
}

/// The allow-list in `root`.
pub fn allow_list(root: &Path) -> Result<AllowList, String> {
    let path = root.join(ALLOWED);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    AllowList::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// One recording compared with the fake.
pub struct Replay {
    pub file: PathBuf,
    pub summary_diff: Option<String>,
    pub comparison: Comparison,
    /// The allow-list items that covered a difference.
    pub used: BTreeSet<Use>,
    /// Differences no allow-list entry covers.
    pub unallowed: Vec<Difference>,
}

/// `fidelity::<provider>-<version>::<scenario>`, from the file's place.
pub fn trial_name(file: &Path) -> String {
    let part = |n: usize| file.iter().rev().nth(n).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    format!("fidelity::{}-{}::{}", part(2), part(1), part(0).trim_end_matches(".json"))
}

/// Runs the recording's scenario on the fake and compares.
pub fn replay(file: &Path, scenarios: &BTreeMap<String, Arc<Scenario>>, allow: &AllowList, fakes: &Fakes) -> Result<Replay, String> {
    let at = |e: String| format!("{}: {e}", file.display());
    let text = std::fs::read_to_string(file).map_err(|e| at(e.to_string()))?;
    let real = Recording::parse(&text).map_err(at)?;
    let scenario = scenarios.get(&real.scenario).ok_or_else(|| at(format!("no scenario `{}`", real.scenario)))?;
    let version: Version = real.version.parse().map_err(at)?;
    let tool_search = if real.tool_search { ToolSearch::On } else { ToolSearch::Off };
    let target = Target { version: Some(version), tool_search };
    let fake = run_with(scenario, target, &mut ReferenceDriver::new(), fakes).capture;
    let comparison = compare(&real.conversations, &fake.conversations);
    let mut used = BTreeSet::new();
    let mut unallowed = Vec::new();
    for d in &comparison.differences {
        match allow.allows(&real.provider, version, d) {
            Some(u) => {
                used.insert(u);
            }
            None => unallowed.push(d.clone()),
        }
    }
    Ok(Replay { file: file.to_path_buf(), summary_diff: summary_diff(&real.summary, &fake.summary), comparison, used, unallowed })
}

impl Replay {
    /// What failed, readably; None when the fake matches within the list.
    pub fn failure(&self) -> Option<String> {
        if self.summary_diff.is_none() && self.unallowed.is_empty() {
            return None;
        }
        let mut out = format!("the fake differs from the real recording {}:\n", self.file.display());
        if let Some(d) = &self.summary_diff {
            out += &format!("outcome summary:\n{d}");
        }
        if !self.unallowed.is_empty() {
            out += &format!("differences no entry of the allow-list ({ALLOWED}) covers: {}\n", self.unallowed.len());
            for d in self.unallowed.iter().take(SHOWN) {
                out += &format!("  {d}\n");
            }
            if self.unallowed.len() > SHOWN {
                out += &format!("  ... and {} more\n", self.unallowed.len() - SHOWN);
            }
        }
        Some(out)
    }
}

/// Messages compared and agreeing over all replays, for the closing line.
pub fn totals(replays: &[&Replay], allow: &AllowList) -> String {
    let sum = |f: fn(&Replay) -> usize| replays.iter().map(|r| f(r)).sum::<usize>();
    let messages = sum(|r| r.comparison.messages);
    let agreeing = sum(|r| r.comparison.agreeing);
    let differences = sum(|r| r.comparison.differences.len());
    let unallowed = sum(|r| r.unallowed.len());
    format!(
        "fidelity: {} recordings, {messages} messages compared, {agreeing} agreeing ({:.1}%); {differences} differences, {} allowed by {} entries of {ALLOWED}, {unallowed} not allowed",
        replays.len(),
        100.0 * agreeing as f64 / messages.max(1) as f64,
        differences - unallowed,
        allow.len(),
    )
}
