//! What is checked before the first trial, so a run that cannot be useful
//! says why at once (exit 2) instead of after every trial ran: a selection
//! that matches nothing, unknown versions and built-in drivers, a temp dir
//! that cannot hold run directories, report paths that cannot be written.
//! Reports are then written atomically (temp file in the same directory,
//! renamed), so two runs never leave a torn file.

use std::path::Path;
use std::sync::Arc;

use harness::plan::{self, Trial};
use harness::scenario::{Provider, Scenario};
use harness::source::DriverSource;

use crate::args::RunArgs;

pub fn check(o: &RunArgs, scenarios: &[Arc<Scenario>], trials: &[Trial]) -> Result<(), String> {
    for v in &o.versions {
        if !plan::simulates(Provider::Codex, *v) && !plan::simulates(Provider::Claude, *v) {
            return Err(format!(
                "--version {v}: not a release the fakes simulate (simulated: {}; {}; every registry release in those ranges, see `conformance versions`)",
                simulated(Provider::Codex),
                simulated(Provider::Claude)
            ));
        }
    }
    for d in &o.drivers {
        match d {
            DriverSource::Builtin(name) => {
                DriverSource::builtin(name).map_err(|e| format!("--driver: {} (see `conformance mutants`)", e.message))?;
            }
            DriverSource::Shim(cmd) => match cmd.first() {
                Some(program) if executable(program) => {}
                Some(program) => return Err(format!("--driver-cmd: no program `{program}` (not an executable file, nor on PATH)")),
                None => return Err("--driver-cmd: empty command".into()),
            },
        }
    }
    if scenarios.is_empty() {
        let mut what = Vec::new();
        if let Some(f) = &o.select.filter {
            what.push(format!("--filter `{f}`"));
        }
        if let Some(p) = o.select.provider {
            what.push(format!("--provider {}", p.provider().as_str()));
        }
        return Err(format!("no scenario matches {}", if what.is_empty() { "(the scenario directory is empty)".into() } else { what.join(" with ") }));
    }
    if trials.is_empty() {
        let versions: Vec<String> = o.versions.iter().map(|v| v.to_string()).collect();
        return Err(format!("the selected scenarios run on none of the selected versions ({})", versions.join(", ")));
    }
    let tmp = std::env::temp_dir();
    if !tmp.is_dir() {
        return Err(format!("temp dir {}: no such directory to hold run directories (set TMPDIR to a writable directory)", tmp.display()));
    }
    tempfile::tempdir().map_err(|e| format!("temp dir {}: cannot hold run directories: {} (set TMPDIR to a writable directory)", tmp.display(), os_words(&e)))?;
    for path in [&o.tap, &o.junit, &o.matrix].into_iter().flatten() {
        writable(path)?;
    }
    Ok(())
}

/// `program` names an executable file, by path or on PATH.
fn executable(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let runs = |p: &Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        return runs(Path::new(program));
    }
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| runs(&dir.join(program))))
}

/// The OS's words for an error, without the temp file name tempfile adds.
fn os_words(e: &std::io::Error) -> String {
    e.kind().to_string()
}

fn simulated(p: Provider) -> String {
    let all = plan::simulated_releases(p);
    match (all.first(), all.last()) {
        (Some(lo), Some(hi)) => format!("{} {lo} to {hi}", p.as_str()),
        _ => format!("{} none", p.as_str()),
    }
}

/// A report can be written at `path`: its directory takes a new file and
/// the path is not a directory.
fn writable(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!("{}: is a directory, not a report file", path.display()));
    }
    if !parent(path).is_dir() {
        return Err(format!("{}: cannot write a report there: no directory {}", path.display(), parent(path).display()));
    }
    tempfile::NamedTempFile::new_in(parent(path)).map(drop).map_err(|e| format!("{}: cannot write a report there: {}", path.display(), os_words(&e)))
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes `text` to `path` through a temp file in the same directory and a
/// rename, so a reader sees the old file or the new one, never half of one.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    harness::atomic::write(path, text)
}
