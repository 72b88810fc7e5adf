//! CLI probes: what a provider CLI answers to one bad command line (a
//! settings file that is missing or not JSON, `mcpServers` that is not an
//! object, `-c` pairs on both sides of `codex exec`), facts no driver
//! scenario can show because no correct driver launches that way. `conformance probe` runs them on the real binaries and
//! writes `recordings/probes/<provider>/<version>/<probe>.json`; a test runs
//! each on the fake and compares exit code, stdout and stderr.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::recordings::PROBES as FOLDER;
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
    /// The reported regression (`../shared/REPORTED-REGRESSIONS.md` row) its
    /// recordings show does not happen in the simulated releases, if any.
    pub refutes: &'static str,
}

pub const PROBES: &[Probe] = &[
    Probe { name: "settings-missing", provider: Provider::Claude, args: &["-p", "hi", "--settings", "nope.json"], files: &[], shows: "absolute_settings_path", refutes: "" },
    Probe {
        name: "settings-not-json",
        provider: Provider::Claude,
        args: &["-p", "--settings", "bad.json"],
        files: &[("bad.json", "{bad")],
        shows: "warns_unreadable_settings, explains_unloaded_settings",
        refutes: "",
    },
    Probe {
        name: "mcp-servers-not-object",
        provider: Provider::Claude,
        args: &["-p", "hi", "--mcp-config", r#"{"mcpServers":5}"#],
        files: &[],
        shows: "typed_mcp_servers_error",
        refutes: "",
    },
    // A bad value on each side of `exec`: the error names the one the CLI
    // kept (the root's is checked first when both apply).
    Probe {
        name: "exec-overrides-after-root",
        provider: Provider::Codex,
        args: &["-c", r#"approval_policy="bogus""#, "exec", "--json", "-c", r#"sandbox_mode="bogus""#, "hi"],
        files: &[],
        shows: "exec_overrides_replace_root",
        refutes: "",
    },
    // The error lists the values the release knows: `writes` and the
    // server-level default are known from the first simulated release.
    Probe {
        name: "server-default-mode-unknown",
        provider: Provider::Codex,
        args: &["exec", "--json", "-c", r#"mcp_servers.lab.command="true""#, "-c", r#"mcp_servers.lab.default_tools_approval_mode="bogus""#, "hi"],
        files: &[],
        shows: "",
        refutes: "#8: `writes` and server `default_tools_approval_mode` new in 0.149.1 (older builds refuse them)",
    },
];

/// Output lines that depend on where the run directory is, not on the
/// release: Codex refuses to put its helper binaries below a temporary
/// directory, and every test's CODEX_HOME is one.
const PLACE_DEPENDENT: &[&str] = &["WARNING: proceeding, even though we could not create PATH aliases"];

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
/// fresh directory: HOME, CLAUDE_CONFIG_DIR and CODEX_HOME inside it, no
/// API reachable.
pub fn run(program: &Path, prefix: &[String], probe: &Probe, version: &str, dir: &Path) -> Result<ProbeRun, String> {
    let work = dir.join("work");
    for d in [&work, &dir.join("home"), &dir.join("cfg")] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    for (name, text) in probe.files {
        std::fs::write(work.join(name), text).map_err(|e| format!("{name}: {e}"))?;
    }
    let (stdout, stderr) = (dir.join("stdout"), dir.join("stderr"));
    let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut child = Command::new(program)
        .args(prefix)
        .args(probe.args)
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("CLAUDE_CONFIG_DIR", dir.join("cfg"))
        .env("CODEX_HOME", dir.join("home"))
        // Every probe ends before the model is asked; none is reachable.
        .env("ANTHROPIC_API_KEY", "probe")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("OPENAI_API_KEY", "probe")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9")
        .stdin(Stdio::null())
        .stdout(file(&stdout)?)
        .stderr(file(&stderr)?)
        // Its own group, so whatever it starts is killed with it.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let status = wait(&mut child, program)?;
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    let out = std::process::Output { status, stdout: read(&stdout)?, stderr: read(&stderr)? };
    // The real CLI resolves the directory's symlinks (/tmp may be one).
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let normalize = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes).replace(&real.display().to_string(), "<run>").replace(&dir.display().to_string(), "<run>");
        text.split_inclusive('\n').filter(|line| !PLACE_DEPENDENT.iter().any(|p| line.starts_with(p))).collect()
    };
    Ok(ProbeRun {
        probe: probe.name.into(),
        provider: probe.provider.as_str().into(),
        version: version.into(),
        exit: out.status.code().unwrap_or(-1),
        stdout: normalize(&out.stdout),
        stderr: normalize(&out.stderr),
    })
}

/// How long a probe may take; each real one ends within seconds.
const PROBE_TIMEOUT: Duration = Duration::from_secs(120);

/// The probe's exit status; on a stop ([`crate::stop`]) or a hang its
/// process group is killed and it is an error.
fn wait(child: &mut Child, program: &Path) -> Result<ExitStatus, String> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("{}: {e}", program.display()))? {
            return Ok(status);
        }
        let why = if crate::stop::requested() {
            "stopped"
        } else if started.elapsed() >= PROBE_TIMEOUT {
            "hung"
        } else {
            std::thread::sleep(crate::stop::POLL);
            continue;
        };
        // SAFETY: the child is unreaped, so the group it leads is its own.
        unsafe {
            libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
        }
        let _ = child.wait();
        return Err(format!("{}: {why}, killed after {:.1} s", program.display(), started.elapsed().as_secs_f64()));
    }
}

/// Where a probe's recording goes below `root`.
pub fn file(root: &Path, run: &ProbeRun) -> std::path::PathBuf {
    root.join(FOLDER).join(&run.provider).join(&run.version).join(format!("{}.json", run.probe))
}

/// Every probe recording below `root`/probes, sorted.
pub fn recordings(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = crate::recordings::by_provider_and_version(&root.join(FOLDER), &[]);
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_names_are_unique_and_each_shows_a_fact_or_refutes_a_report() {
        let mut names: Vec<&str> = PROBES.iter().map(|p| p.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PROBES.len());
        let claude: Vec<&str> = fakes::claude::profile::Profile { version: fakes::claude::profile::MEASURED[0] }.facts().into_iter().map(|(n, _)| n).collect();
        let codex: Vec<&str> = fakes::codex::profile::Profile { version: fakes::codex::profile::MEASURED[0] }.facts().into_iter().map(|(n, _)| n).collect();
        for p in PROBES {
            let facts = if p.provider == Provider::Codex { &codex } else { &claude };
            assert!(!p.shows.is_empty() || !p.refutes.is_empty(), "{}: shows no fact and refutes no report", p.name);
            for fact in p.shows.split(", ").filter(|f| !f.is_empty()) {
                assert!(facts.contains(&fact), "{}: no fact `{fact}`", p.name);
            }
        }
    }
}
