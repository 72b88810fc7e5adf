//! `conformance cache`: the real-binary cache's releases and sizes, and
//! `--prune` to keep only what the default run plays (and what is named).

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use fakes::version::Version;
use harness::cache::{entries, human, kept, prune};

pub fn run(do_prune: bool, keep: &[Version]) -> ExitCode {
    let Some(dir) = harness::trial::real::cache_dir() else {
        eprintln!("conformance: no cache directory: set HOME or XDG_CACHE_HOME");
        return ExitCode::from(2);
    };
    let all = entries(&dir);
    let mut out = String::new();
    let total: u64 = all.iter().map(|e| e.bytes).sum();
    let _ = writeln!(out, "{}: {} in {} folders", dir.display(), human(total), all.len());
    for e in &all {
        let what = e.version.map(|v| v.to_string()).unwrap_or_else(|| format!("{} (no release: an unfinished fetch)", e.path.file_name().unwrap_or_default().to_string_lossy()));
        let mark = if kept(e, keep) { "" } else { "  prunable" };
        let _ = writeln!(out, "{:<7} {:<12} {:>8}{mark}", e.provider.as_str(), what, human(e.bytes));
    }
    if do_prune {
        match prune(&all, keep) {
            Ok(gone) => {
                let freed: u64 = gone.iter().map(|e| e.bytes).sum();
                let _ = writeln!(out, "pruned {} folders, {} freed", gone.len(), human(freed));
            }
            Err(e) => {
                let _ = std::io::stdout().lock().write_all(out.as_bytes());
                eprintln!("conformance: cache --prune: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        let _ = writeln!(out, "(`prunable`: not a release the default run plays, the newest of its band; `--prune` removes them, `--keep X.Y.Z` spares one)");
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}
