//! The real-binary cache (`trial::real::cache_dir`): what it holds, how big
//! each release is, and pruning it. A release is about 330 MB (Codex) or
//! 280 MB (Claude Code), so a sweep over every release fills a disk fast.

use std::path::{Path, PathBuf};

use fakes::version::Version;

use crate::scenario::Provider;

/// One folder of the cache: a fetched release, or the scratch folder of a
/// fetch that never finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub provider: Provider,
    /// None: not a release (a `.fetch-*` leftover or a stray folder).
    pub version: Option<Version>,
    pub path: PathBuf,
    pub bytes: u64,
}

/// Every folder below `cache/<provider>/`, providers then versions in order.
pub fn entries(cache: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    for provider in [Provider::Codex, Provider::Claude] {
        let mut here: Vec<Entry> = std::fs::read_dir(cache.join(provider.as_str()))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .map(|path| {
                let version = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse().ok());
                Entry { provider, version, bytes: size(&path), path }
            })
            .collect();
        here.sort_by(|a, b| (a.version, &a.path).cmp(&(b.version, &b.path)));
        out.extend(here);
    }
    out
}

/// Bytes of the files below `path` (symlinks not followed).
pub fn size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).into_iter().flatten().flatten().map(|e| size(&e.path())).sum()
}

/// What pruning keeps: the releases the default run plays (each band's
/// newest), and any named.
pub fn kept(entry: &Entry, keep: &[Version]) -> bool {
    let Some(v) = entry.version else { return false };
    keep.contains(&v) || crate::plan::versions(entry.provider).contains(&Some(v))
}

/// Removes each of `entries` (as [`entries`] read them) that `kept` does
/// not keep; returns what went.
pub fn prune(entries: &[Entry], keep: &[Version]) -> Result<Vec<Entry>, String> {
    let mut gone = Vec::new();
    for e in entries.iter().filter(|e| !kept(e, keep)) {
        std::fs::remove_dir_all(&e.path).map_err(|err| format!("{}: {err}", e.path.display()))?;
        gone.push(e.clone());
    }
    Ok(gone)
}

/// `1.2 GB`, `330 MB`, `12 KB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000)];
    for (unit, size) in UNITS {
        if bytes >= size {
            let scaled = bytes as f64 / size as f64;
            return if scaled < 10.0 { format!("{scaled:.1} {unit}") } else { format!("{scaled:.0} {unit}") };
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_sizes_and_prune_keep_the_default_runs_releases_and_named_ones() {
        let cache = tempfile::tempdir().unwrap();
        let stand_ins: Vec<Version> = crate::plan::versions(Provider::Codex).into_iter().flatten().collect();
        let newest = *stand_ins.last().unwrap();
        let others: Vec<Version> = crate::plan::simulated_releases(Provider::Codex).into_iter().filter(|v| !stand_ins.contains(v)).collect();
        let (dropped, named) = (others[0], others[1]);
        for (dir, bytes) in [(format!("codex/{newest}"), 3000), (format!("codex/{dropped}"), 2000), (format!("codex/{named}"), 10), ("codex/.fetch-x1".into(), 5)] {
            std::fs::create_dir_all(cache.path().join(&dir).join("package")).unwrap();
            std::fs::write(cache.path().join(&dir).join("package/bin"), vec![0u8; bytes]).unwrap();
        }
        let all = entries(cache.path());
        let versions: Vec<Option<Version>> = all.iter().map(|e| e.version).collect();
        assert_eq!(versions, [None, Some(dropped), Some(named), Some(newest)]);
        assert_eq!(all.iter().map(|e| e.bytes).sum::<u64>(), 5015);
        let gone = prune(&all, &[named]).unwrap();
        let gone: Vec<Option<Version>> = gone.iter().map(|e| e.version).collect();
        assert_eq!(gone, [None, Some(dropped)], "the leftover and the release neither a stand-in nor named");
        assert!(cache.path().join(format!("codex/{newest}")).is_dir() && cache.path().join(format!("codex/{named}")).is_dir());
        assert_eq!(human(330_400_000), "330 MB");
        assert_eq!(human(1_234_000_000), "1.2 GB");
        assert_eq!(human(999), "999 B");
    }
}
