//! CLI probes: what a provider CLI answers to one bad command line (a
//! settings file that is missing or not JSON, `mcpServers` that is not an
//! object), facts no driver scenario can show because no correct driver
//! launches that way. `conformance probe` runs them on the real binaries and
//! writes `recordings/probes/<provider>/<version>/<probe>.json`; a test runs
//! each on the fake and compares exit code, stdout and stderr.

use std::path::Path;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::scenario::Provider;

/// One bad command line, run in an empty working directory holding `files`,
/// with no input.
pub struct Probe {
    pub name: &'static str,
    pub provider: Provider,
    pub args: &'static [&'static str],
    pub files: &'static [(&'static str, &'static str)],
    /// The profile facts it shows.
    pub shows: &'static str,
}

pub const PROBES: &[Probe] = &[
    Probe { name: "settings-missing", provider: Provider::Claude, args: &["-p", "hi", "--settings", "nope.json"], files: &[], shows: "absolute_settings_path" },
    Probe {
        name: "settings-not-json",
        provider: Provider::Claude,
        args: &["-p", "--settings", "bad.json"],
        files: &[("bad.json", "{bad")],
        shows: "warns_unreadable_settings, explains_unloaded_settings",
    },
    Probe {
        name: "mcp-servers-not-object",
        provider: Provider::Claude,
        args: &["-p", "hi", "--mcp-config", r#"{"mcpServers":5}"#],
        files: &[],
        shows: "typed_mcp_servers_error",
    },
];

/// A probe's run, normalized: the run directory is `<run>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeRun {
    pub probe: String,
    pub provider: String,
    pub version: String,
    pub exit: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `probe` with `program` (and `prefix` before its arguments) in a
/// fresh directory: HOME and CLAUDE_CONFIG_DIR inside it, no API reachable.
pub fn run(program: &Path, prefix: &[String], probe: &Probe, version: &str, dir: &Path) -> Result<ProbeRun, String> {
    let work = dir.join("work");
    for d in [&work, &dir.join("home"), &dir.join("cfg")] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    for (name, text) in probe.files {
        std::fs::write(work.join(name), text).map_err(|e| format!("{name}: {e}"))?;
    }
    let out = Command::new(program)
        .args(prefix)
        .args(probe.args)
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("CLAUDE_CONFIG_DIR", dir.join("cfg"))
        // Every probe ends before the model is asked; none is reachable.
        .env("ANTHROPIC_API_KEY", "probe")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    // The real CLI resolves the directory's symlinks (/tmp may be one).
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let normalize = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(&real.display().to_string(), "<run>").replace(&dir.display().to_string(), "<run>");
    Ok(ProbeRun {
        probe: probe.name.into(),
        provider: probe.provider.as_str().into(),
        version: version.into(),
        exit: out.status.code().unwrap_or(-1),
        stdout: normalize(&out.stdout),
        stderr: normalize(&out.stderr),
    })
}

/// Where a probe's recording goes below `root`.
pub fn file(root: &Path, run: &ProbeRun) -> std::path::PathBuf {
    root.join("probes").join(&run.provider).join(&run.version).join(format!("{}.json", run.probe))
}

/// Every probe recording below `root`/probes, sorted.
pub fn recordings(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let providers = std::fs::read_dir(root.join("probes")).into_iter().flatten().flatten();
    for version in providers.flat_map(|p| std::fs::read_dir(p.path()).into_iter().flatten().flatten()) {
        out.extend(std::fs::read_dir(version.path()).into_iter().flatten().flatten().map(|f| f.path()).filter(|p| p.extension().is_some_and(|e| e == "json")));
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_names_are_unique_and_each_shows_a_fact() {
        let mut names: Vec<&str> = PROBES.iter().map(|p| p.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PROBES.len());
        let facts: Vec<&str> = fakes::claude::profile::Profile { version: fakes::claude::profile::MEASURED[0] }.facts().into_iter().map(|(n, _)| n).collect();
        for p in PROBES {
            for fact in p.shows.split(", ") {
                assert!(facts.contains(&fact), "{}: no fact `{fact}`", p.name);
            }
        }
    }
}
