//! The committed recordings of real CLI runs (`recordings/`): each one's
//! scenario is replayed on the fake with the driver that made it (the
//! reference, or a shim such as an Agent SDK example), and the two runs are
//! compared, summary and every message, against the allow-list of known
//! differences (`recordings/ALLOWED.toml`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fakes::version::Version;

use crate::driver::Driver;
use crate::plan::{Target, ToolSearch};
use crate::runner::run_with;
use crate::scenario::{Provider, Scenario};
use crate::trial::Fakes;
use crate::verdict::fidelity::allow::{AllowList, Use};
use crate::verdict::fidelity::compare::{compare, Comparison, Difference};
use crate::verdict::fidelity::{summary_diff, Recording};

/// The allow-list's file name inside the recordings directory.
pub const ALLOWED: &str = "ALLOWED.toml";

/// Longest list of differences a failure prints.
const SHOWN: usize = 40;

/// The folder of recordings made by drivers other than the reference:
/// `drivers/<driver name>/<provider>/<version>/<scenario>.json`.
pub const DRIVERS: &str = "drivers";
/// The CLI probes' folder (`probes.rs`): no trial recordings in it.
pub const PROBES: &str = "probes";
/// Lab measurements of behaviour no scenario plays (`scripts/labs/`, one
/// script per folder, named in docs/providers.md): no trial recordings in it.
pub const LABS: &str = "labs";

/// The reference driver's name, whose recordings sit at the top.
pub const REFERENCE: &str = "reference";

/// Runs one planned trial and captures it as a recording (None when the
/// trial was skipped); Err when its driver cannot start.
pub fn record_trial(t: &crate::plan::Trial, fakes: &Fakes) -> Result<(crate::verdict::Verdict, Option<Recording>), String> {
    let mut driver = t.driver.make(&fakes.supervise).map_err(|e| format!("{}: {e}", t.driver.label()))?;
    let outcome = run_with(&t.scenario, t.target, driver.as_mut(), fakes);
    let verdict = match &outcome.verdict {
        crate::verdict::Verdict::Skip(_) => return Ok((outcome.verdict, None)),
        crate::verdict::Verdict::Pass => "pass",
        _ => "fail",
    };
    let Some(v) = t.target.version else { return Ok((outcome.verdict, None)) };
    let recording = Recording {
        scenario: t.scenario.id.clone(),
        provider: t.scenario.provider.as_str().to_string(),
        version: v.to_string(),
        tool_search: t.target.tool_search == ToolSearch::On,
        driver: driver.name(),
        verdict: verdict.into(),
        summary: outcome.capture.summary,
        conversations: outcome.capture.conversations,
        case: None,
    };
    Ok((outcome.verdict, Some(recording)))
}

/// Where a recording of `driver` on `provider` `version` (with its tool
/// search suffix) goes under `root`.
pub fn folder(root: &Path, driver: &str, provider: &str, version: &str) -> PathBuf {
    let base = if driver == REFERENCE { root.to_path_buf() } else { root.join(DRIVERS).join(driver) };
    base.join(provider).join(version)
}

/// Every recording under `root` (`<provider>/<version>/<scenario>.json`,
/// `<version>+tool-search` for Claude Code's tool search on, and the same
/// below `drivers/<driver>/`), sorted.
pub fn files(root: &Path) -> Vec<PathBuf> {
    let mut roots = vec![root.to_path_buf()];
    roots.extend(std::fs::read_dir(root.join(DRIVERS)).into_iter().flatten().flatten().map(|d| d.path()));
    let mut files: Vec<PathBuf> = roots.iter().flat_map(|base| by_provider_and_version(base, &[DRIVERS, PROBES, LABS])).collect();
    files.sort();
    files
}

/// The `.json` files at `base/<provider>/<version>/`, folders named in
/// `skip` left out at the provider level (unsorted).
pub fn by_provider_and_version(base: &Path, skip: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let providers = std::fs::read_dir(base).into_iter().flatten().flatten().filter(|p| !skip.iter().any(|s| p.file_name() == *s));
    for provider in providers {
        for version in std::fs::read_dir(provider.path()).into_iter().flatten().flatten() {
            let found = std::fs::read_dir(version.path()).into_iter().flatten().flatten().map(|f| f.path());
            files.extend(found.filter(|f| f.extension().is_some_and(|e| e == "json")));
        }
    }
    files
}

/// Every simulated release (of either provider) that has recordings below
/// `root`, as [`files`] finds them.
pub fn releases(root: &Path) -> Result<Vec<Version>, String> {
    if !root.is_dir() {
        return Err(format!("{}: no such directory of recordings", root.display()));
    }
    let mut out = Vec::new();
    for file in files(root) {
        let folder = |p: Option<&Path>| p.and_then(|p| p.file_name()).and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let (version, provider) = (folder(file.parent()), folder(file.parent().and_then(Path::parent)));
        let provider = match provider.as_str() {
            "codex" => Provider::Codex,
            "claude" => Provider::Claude,
            _ => continue,
        };
        // `<version>+tool-search` is the same release.
        if let Ok(v) = version.split('+').next().unwrap_or_default().parse::<Version>() {
            if crate::plan::simulates(provider, v) && !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out.sort();
    Ok(out)
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

/// `fidelity::<provider>-<version>::<scenario>` from the file's place, with
/// `<driver>::` after `fidelity::` for another driver's recording.
pub fn trial_name(file: &Path) -> String {
    let part = |n: usize| file.iter().rev().nth(n).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let driver = if part(4) == DRIVERS { format!("{}::", part(3)) } else { String::new() };
    format!("fidelity::{driver}{}-{}::{}", part(2), part(1), part(0).trim_end_matches(".json"))
}

/// A recording read from its file.
pub fn load(file: &Path) -> Result<Recording, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    Recording::parse(&text).map_err(|e| format!("{}: {e}", file.display()))
}

/// Runs the recording's scenario on the fake with `driver` (one that
/// reports the recording's driver name) and compares.
pub fn replay(
    file: &Path,
    real: &Recording,
    driver: &mut dyn Driver,
    scenarios: &BTreeMap<String, Arc<Scenario>>,
    allow: &AllowList,
    fakes: &Fakes,
) -> Result<Replay, String> {
    let at = |e: String| format!("{}: {e}", file.display());
    // A generated case carries its own scenario.
    let own = match &real.case {
        Some(text) => Some(Arc::new(Scenario::parse(&file.with_extension("toml"), text).map_err(|e| at(e.to_string()))?)),
        None => None,
    };
    let scenario = own.as_ref().or_else(|| scenarios.get(&real.scenario)).ok_or_else(|| at(format!("no scenario `{}`", real.scenario)))?;
    let version: Version = real.version.parse().map_err(at)?;
    let tool_search = if real.tool_search { ToolSearch::On } else { ToolSearch::Off };
    let target = Target { version: Some(version), tool_search };
    let name = driver.name();
    if name != real.driver {
        return Err(at(format!("recorded with driver `{}`, replayed with `{name}`", real.driver)));
    }
    let fake = run_with(scenario, target, driver, fakes).capture;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_releases_are_the_simulated_versions_with_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["codex/0.148.0", "codex/0.99.0", "claude/2.1.332+tool-search", "drivers/x/codex/0.171.0", "codex/notes"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
            std::fs::write(dir.path().join(sub).join("s.json"), "{}").unwrap();
        }
        let got: Vec<String> = releases(dir.path()).unwrap().iter().map(|v| v.to_string()).collect();
        assert_eq!(got, ["0.148.0", "0.171.0", "2.1.332"]);
        assert!(releases(&dir.path().join("none")).is_err());
    }

    #[test]
    fn another_drivers_recordings_sit_below_drivers_and_are_named_for_it() {
        let root = tempfile::tempdir().unwrap();
        let reference = folder(root.path(), REFERENCE, "claude", "2.1.334");
        let shim = folder(root.path(), "claude-agent-sdk-ts", "claude", "2.1.334+tool-search");
        assert_eq!(reference, root.path().join("claude/2.1.334"));
        assert_eq!(shim, root.path().join("drivers/claude-agent-sdk-ts/claude/2.1.334+tool-search"));
        for dir in [&reference, &shim] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("s.json"), "{}").unwrap();
        }
        let names: Vec<String> = files(root.path()).iter().map(|f| trial_name(f)).collect();
        assert_eq!(names, ["fidelity::claude-2.1.334::s", "fidelity::claude-agent-sdk-ts::claude-2.1.334+tool-search::s"]);
    }
}
