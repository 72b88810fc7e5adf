//! The plan: which scenarios exist (discovery and the checks across them),
//! which provider versions (and configurations) each runs on (read from the
//! fakes' profiles), and the list of trials with their names and skip
//! reasons. Nothing runs here.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use fakes::version::{Version, VersionRange};

use crate::mutants::mutants;
use crate::scenario::{Provider, Scenario, ScenarioError};
use crate::source::DriverSource;

/// The scenario files compiled into the harness (the default suite).
pub const EMBEDDED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded_scenarios.rs"));

/// Parses the embedded scenarios; errors name the embedded file.
pub fn embedded() -> (Vec<Scenario>, Vec<ScenarioError>) {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (name, text) in EMBEDDED {
        match Scenario::parse(&Path::new("scenarios").join(name), text) {
            Ok(s) => ok.push(s),
            Err(e) => bad.push(e),
        }
    }
    (ok, bad)
}

/// Loads every scenario file below `dir`.
pub fn load_dir(dir: &Path) -> Result<(Vec<Scenario>, Vec<ScenarioError>), ScenarioError> {
    let files = crate::scenario::discover(dir)
        .map_err(|e| ScenarioError::unreadable(dir, format!("cannot list scenarios: {e}")))?;
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for f in files {
        match Scenario::load(&f) {
            Ok(s) => ok.push(s),
            Err(e) => bad.push(e),
        }
    }
    Ok((ok, bad))
}

/// Checks across scenarios: unique ids, and every `caught_by` names a
/// mutant; each problem located as `file:line:col`.
pub fn check_set(scenarios: &[Scenario]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut ids: std::collections::BTreeMap<&str, &Scenario> = std::collections::BTreeMap::new();
    let known: BTreeSet<&str> = mutants().iter().map(|m| m.name).collect();
    let at = |s: &Scenario, (line, col): (usize, usize)| format!("{}:{line}:{col}", s.path.display());
    for s in scenarios {
        if let Some(first) = ids.insert(&s.id, s) {
            problems.push(format!("{}: field `id`: `{}` is also the id of {}", at(s, s.id_at), s.id, at(first, first.id_at)));
            ids.insert(&s.id, first);
        }
        if s.generated.is_some() {
            // Generated cases expect nothing; a suite scenario must check something.
            problems.push(format!("{}: field `generated`: only a generated fidelity case has it, not a suite scenario", at(s, s.id_at)));
        }
        for (i, m) in s.caught_by.iter().enumerate() {
            if !known.contains(m.as_str()) {
                let pos = s.caught_by_at.get(i).copied().unwrap_or((1, 1));
                problems.push(format!("{}: field `caught_by[{}]`: no mutant `{m}` (see `conformance mutants`)", at(s, pos), i + 1));
            }
        }
    }
    problems
}

/// The versions a provider is run at by default, one trial each: the newest
/// release of each behaviour band (a band's releases all hold every fact of
/// the fake's profile alike, so one stands for all). Providers without a
/// fake have no versions: one trial, `None`.
pub fn versions(provider: Provider) -> Vec<Option<Version>> {
    match provider {
        Provider::Codex | Provider::Claude => {
            let all = simulated_releases(provider);
            let bands = crate::versions::bands(provider, &all);
            let newest = |i: usize| bands.get(i + 1) != bands.get(i);
            all.iter().enumerate().filter(|(i, _)| newest(*i)).map(|(_, v)| Some(*v)).collect()
        }
        Provider::Cursor | Provider::Codebuddy => vec![None],
    }
}

/// The releases measured on the real binaries (the fakes' MEASURED lists):
/// what the test suite, the mutant checks and the real-drivers matrix play,
/// so that `cargo test` keeps within CI's time however many bands there
/// are; the other bands are covered by replaying their recordings.
pub fn measured(provider: Provider) -> Vec<Option<Version>> {
    match provider {
        Provider::Codex | Provider::Claude => measured_list(provider).iter().copied().map(Some).collect(),
        Provider::Cursor | Provider::Codebuddy => vec![None],
    }
}

/// The fake's MEASURED list; empty for a provider without a fake.
fn measured_list(provider: Provider) -> &'static [Version] {
    match provider {
        Provider::Codex => &fakes::codex::profile::MEASURED,
        Provider::Claude => &fakes::claude::profile::MEASURED,
        Provider::Cursor | Provider::Codebuddy => &[],
    }
}

/// [`measured`] of every provider, as a `--version` list for [`trials`].
pub fn measured_releases() -> Vec<Version> {
    [Provider::Codex, Provider::Claude].into_iter().flat_map(measured).flatten().collect()
}

/// Every release the fakes play, oldest first: the registry's releases from
/// the oldest to the newest measured version, and the measured ones.
pub fn simulated_releases(provider: Provider) -> Vec<Version> {
    let measured = measured_list(provider);
    if measured.is_empty() {
        return Vec::new();
    }
    // Parsed once per provider: the plan asks for every trial.
    static CODEX: OnceLock<Vec<Version>> = OnceLock::new();
    static CLAUDE: OnceLock<Vec<Version>> = OnceLock::new();
    let cell = if provider == Provider::Codex { &CODEX } else { &CLAUDE };
    cell.get_or_init(|| {
        let (Some(lo), Some(hi)) = (measured.first(), measured.last()) else { return Vec::new() };
        let registry = crate::versions::releases(provider).unwrap_or_default();
        let mut all: Vec<Version> = registry.into_iter().map(|r| r.version).filter(|v| (lo..=hi).contains(&v)).collect();
        all.extend(measured);
        all.sort();
        all.dedup();
        all
    })
    .clone()
}

/// Claude Code's tool search: from 2.1.332 the CLI defers MCP tools (the
/// model is only told their names and must load each with ToolSearch before
/// calling it) unless ENABLE_TOOL_SEARCH=false inlines them. Versions that
/// have it run both ways, one trial each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolSearch {
    /// ENABLE_TOOL_SEARCH=false (or a version without tool search).
    #[default]
    Off,
    /// The CLI's default: MCP tools deferred behind ToolSearch.
    On,
}

impl ToolSearch {
    /// What trial names, provider labels and recording directories append.
    pub fn suffix(self) -> &'static str {
        match self {
            ToolSearch::Off => "",
            ToolSearch::On => "+tool-search",
        }
    }

    /// The modes a provider version runs in (its fake's profile says).
    pub fn modes(provider: Provider, version: Option<Version>) -> Vec<ToolSearch> {
        let has = |v: Version| fakes::claude::profile::Profile { version: v }.defers_mcp_tools();
        match (provider, version) {
            (Provider::Claude, Some(v)) if has(v) => vec![ToolSearch::Off, ToolSearch::On],
            _ => vec![ToolSearch::Off],
        }
    }
}

/// What a trial runs on: a provider version (none for a provider without
/// versions) in one configuration. A bare version means tool search off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Target {
    pub version: Option<Version>,
    pub tool_search: ToolSearch,
}

impl From<Option<Version>> for Target {
    fn from(version: Option<Version>) -> Target {
        Target { version, tool_search: ToolSearch::Off }
    }
}

/// `codex 0.148.0`, `claude 2.1.332+tool-search`, or `cursor (no versions)`
/// for a provider without any.
pub fn provider_label(provider: Provider, target: impl Into<Target>) -> String {
    let t = target.into();
    match t.version {
        Some(v) => format!("{} {v}{}", provider.as_str(), t.tool_search.suffix()),
        None => format!("{} (no versions)", provider.as_str()),
    }
}

/// `codex-0.148.0::id`, `claude-2.1.332+tool-search::id`, `cursor::id`.
pub fn trial_name(scenario: &Scenario, target: impl Into<Target>) -> String {
    let t = target.into();
    match t.version {
        Some(v) => format!("{}-{v}{}::{}", scenario.provider.as_str(), t.tool_search.suffix(), scenario.id),
        None => format!("{}::{}", scenario.provider.as_str(), scenario.id),
    }
}

/// Why a trial does not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// The scenario's version range excludes this version.
    OutOfRange { provider: &'static str, range: String },
    ProviderNotClaimed(&'static str),
    /// The scenario says why a `codex exec` driver cannot play it.
    NotInExec(String),
    CapabilitiesNotClaimed(Vec<String>),
    /// Only a fake can play it (e.g. a scripted provider request).
    NeedsFake(String),
    /// The driver says it cannot drive this version (`provider_versions`).
    DriverVersions { provider: &'static str, range: String },
    /// A real run was asked for and no real binary is cached.
    NoRealBinary { provider: &'static str, version: String },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::OutOfRange { provider, range } => write!(f, "not applicable: needs {provider} {range}"),
            SkipReason::ProviderNotClaimed(p) => write!(f, "driver does not claim provider {p}"),
            SkipReason::NotInExec(why) => write!(f, "not applicable to codex exec: {why}"),
            SkipReason::CapabilitiesNotClaimed(c) => write!(f, "driver does not claim: {}", c.join(", ")),
            SkipReason::NeedsFake(why) => write!(f, "{why}"),
            SkipReason::DriverVersions { provider, range } => write!(f, "driver supports only {provider} {range}"),
            SkipReason::NoRealBinary { provider, version } => {
                write!(f, "no real {provider} {version}: run scripts/fetch-provider.sh {provider} {version}")
            }
        }
    }
}

/// Why a trial does not apply to a driver with these capabilities, if it does not.
pub fn skip_reason(scenario: &Scenario, version: Option<Version>, capabilities: &BTreeSet<String>) -> Option<SkipReason> {
    let provider = scenario.provider.as_str();
    if version.is_some_and(|v| !scenario.version_range().contains(v)) {
        return Some(SkipReason::OutOfRange { provider, range: scenario.versions.clone() });
    }
    if !capabilities.contains(provider) {
        return Some(SkipReason::ProviderNotClaimed(provider));
    }
    let missing: Vec<String> = scenario.requires.iter().filter(|c| !capabilities.contains(*c)).cloned().collect();
    if !missing.is_empty() {
        return Some(SkipReason::CapabilitiesNotClaimed(missing));
    }
    if crate::scenario::design::Design::of(capabilities, scenario.provider) == crate::scenario::design::Design::Exec {
        return scenario.not_in_exec.clone().map(SkipReason::NotInExec);
    }
    None
}

/// Why a trial is skipped for a driver that drives only `ranges` of some
/// providers' versions, if it is.
pub fn driver_version_skip(scenario: &Scenario, version: Option<Version>, ranges: &BTreeMap<String, VersionRange>) -> Option<SkipReason> {
    let provider = scenario.provider.as_str();
    let (range, v) = (ranges.get(provider)?, version?);
    (!range.contains(v)).then(|| SkipReason::DriverVersions { provider, range: range.to_string() })
}

/// One planned trial: a scenario, on one provider version in one tool
/// search mode, against one driver.
#[derive(Debug, Clone)]
pub struct Trial {
    pub scenario: Arc<Scenario>,
    pub target: Target,
    pub driver: DriverSource,
}

impl Trial {
    pub fn name(&self) -> String {
        trial_name(&self.scenario, self.target)
    }

    pub fn provider_label(&self) -> String {
        provider_label(self.scenario.provider, self.target)
    }
}

/// Every trial of a run, in report order: driver, then scenario, then
/// version, then tool search mode. `only` keeps just those versions when not
/// empty (a provider without versions then has no trial).
pub fn trials(scenarios: &[Arc<Scenario>], drivers: &[DriverSource], only: &[Version]) -> Vec<Trial> {
    let mut out = Vec::new();
    for driver in drivers {
        for s in scenarios {
            for target in targets_among(s.provider, only) {
                out.push(Trial { scenario: Arc::clone(s), target, driver: driver.clone() });
            }
        }
    }
    out
}

/// The targets of `provider` on the versions in `only` (all simulated ones
/// when it is empty). A release between two simulated versions is played
/// by the fake as its profile's facts have it (its behaviour band), so a
/// regression reported against any release can be run by its number.
pub fn targets_among(provider: Provider, only: &[Version]) -> Vec<Target> {
    if only.is_empty() {
        return targets(provider);
    }
    let each = |version| ToolSearch::modes(provider, version).into_iter().map(move |tool_search| Target { version, tool_search });
    only.iter().filter(|v| simulates(provider, **v)).flat_map(|v| each(Some(*v))).collect()
}

/// Whether the fakes can play `provider` `version`: a simulated version, or
/// a registry release between the oldest and the newest simulated one.
pub fn simulates(provider: Provider, version: Version) -> bool {
    simulated_releases(provider).contains(&version)
}

/// Every version of a provider in every tool search mode it has.
pub fn targets(provider: Provider) -> Vec<Target> {
    let each = |version| ToolSearch::modes(provider, version).into_iter().map(move |tool_search| Target { version, tool_search });
    versions(provider).into_iter().flat_map(each).collect()
}

/// Why a scenario cannot run on a real provider binary, if it cannot.
pub fn real_run_skip(scenario: &Scenario) -> Option<SkipReason> {
    use crate::scenario::Step;
    use fakes::script::RequestKind;
    if !matches!(scenario.provider, Provider::Codex | Provider::Claude) {
        return Some(SkipReason::NeedsFake(format!("no real {} to run", scenario.provider.as_str())));
    }
    // A server's own elicitation is real: its server sends it; so are a
    // Codex command or patch approval, for the mock model's escalated shell
    // command or its apply_patch under the read-only sandbox, and a Codex
    // user-input or permissions request, for its request_user_input or
    // request_permissions call.
    let real = |s: &Step| match s {
        Step::Request { raised_by: Some(_), .. } => true,
        Step::Request { request: RequestKind::Command | RequestKind::FileChange | RequestKind::UserInput | RequestKind::Permissions, .. } => {
            scenario.provider == Provider::Codex
        }
        Step::RawRequest { .. } | Step::Request { .. } => false,
        _ => true,
    };
    if !scenario.steps.iter().all(real) {
        return Some(SkipReason::NeedsFake("needs the fake: a real provider cannot be scripted to send this request".into()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_search_runs_both_ways_only_where_the_version_has_it() {
        let measured = fakes::claude::profile::MEASURED;
        let (old, new) = (measured[0], measured[measured.len() - 1]);
        assert_eq!(ToolSearch::modes(Provider::Claude, Some(old)), [ToolSearch::Off]);
        assert_eq!(ToolSearch::modes(Provider::Claude, Some(new)), [ToolSearch::Off, ToolSearch::On]);
        assert_eq!(ToolSearch::modes(Provider::Codex, fakes::codex::profile::MEASURED.last().copied()), [ToolSearch::Off]);
        let claude = targets(Provider::Claude);
        // Bands without tool search once; every later band both ways.
        let with: usize = versions(Provider::Claude).into_iter().map(|v| ToolSearch::modes(Provider::Claude, v).len()).sum();
        assert_eq!(claude.len(), with);
        assert!(with > versions(Provider::Claude).len(), "some band has tool search");
        assert_eq!(claude.last(), Some(&Target { version: Some(new), tool_search: ToolSearch::On }));
        let (scenarios, _) = embedded();
        let s = scenarios.iter().find(|s| s.provider == Provider::Claude).unwrap();
        let on = Target { version: Some(new), tool_search: ToolSearch::On };
        assert_eq!(trial_name(s, on), format!("claude-{new}+tool-search::{}", s.id));
        assert_eq!(trial_name(s, Some(new)), format!("claude-{new}::{}", s.id));
        assert_eq!(provider_label(Provider::Claude, on), format!("claude {new}+tool-search"));
    }

    #[test]
    fn the_default_versions_are_the_newest_release_of_each_band() {
        for provider in [Provider::Codex, Provider::Claude] {
            let all = simulated_releases(provider);
            let chosen: Vec<Version> = versions(provider).into_iter().flatten().collect();
            assert_eq!(chosen.last(), all.last(), "the newest release stands for its band");
            let bands = crate::versions::bands(provider, &all);
            assert_eq!(chosen.len(), *bands.last().unwrap(), "{provider:?}: one version per band");
            for (v, band) in all.iter().zip(&bands) {
                let stand_in = chosen.iter().find(|c| bands[all.iter().position(|a| a == *c).unwrap()] == *band).unwrap();
                assert!(stand_in >= v, "{v} is played by the newest of its band, {stand_in}");
                assert_eq!(crate::versions::facts(provider, *v), crate::versions::facts(provider, *stand_in));
            }
        }
        assert!(simulates(Provider::Codex, fakes::codex::profile::MEASURED[0]));
        assert!(!simulates(Provider::Codex, "0.145.0".parse().unwrap()), "older than the oldest measured");
        assert!(!simulates(Provider::Codex, "0.170.0".parse().unwrap()), "no such release");
    }

    #[test]
    fn a_driver_naming_a_range_skips_the_versions_outside_it() {
        let (old, new) = (fakes::claude::profile::MEASURED[0], fakes::claude::profile::MEASURED[2]);
        let (scenarios, _) = embedded();
        let s = scenarios.iter().find(|s| s.provider == Provider::Claude).unwrap();
        let ranges = BTreeMap::from([("claude".to_string(), format!(">={new}").parse::<VersionRange>().unwrap())]);
        let skip = driver_version_skip(s, Some(old), &ranges).map(|r| r.to_string());
        assert_eq!(skip, Some(format!("driver supports only claude >={new}")));
        assert!(driver_version_skip(s, Some(new), &ranges).is_none());
        let codex_only = BTreeMap::from([("codex".to_string(), ">=0.171.0".parse::<VersionRange>().unwrap())]);
        assert!(driver_version_skip(s, Some(old), &codex_only).is_none(), "a provider not named runs on every version");
    }
}
