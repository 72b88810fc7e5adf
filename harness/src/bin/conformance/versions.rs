//! `conformance versions PROVIDER`: the real releases, with what this
//! machine and the repository hold of each, and their behaviour bands.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use harness::scenario::Provider;
use harness::versions::{bands, changes, recorded, registry};

pub fn print(provider: Provider, all: bool, recordings: &Path) -> ExitCode {
    let reg = match registry(provider) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let stand_ins: Vec<_> = harness::plan::versions(provider).into_iter().flatten().collect();
    let oldest = harness::plan::simulated_releases(provider).first().copied();
    let releases: Vec<_> = reg.releases.into_iter().filter(|r| all || oldest.is_none_or(|o| r.version >= o)).collect();
    let versions: Vec<_> = releases.iter().map(|r| r.version).collect();
    let band = bands(provider, &versions);
    let name = provider.as_str();
    // Written at once, and a closed stdout (`| head`) is not an error.
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{name}: {} stable releases{} (registry snapshot of {}), {} behaviour bands",
        releases.len(),
        oldest.filter(|_| !all).map(|o| format!(" from {o}")).unwrap_or_default(),
        reg.fetched,
        band.last().copied().unwrap_or(0)
    );
    let _ = writeln!(out, "{:<10} {:<10} {:<6} {:>10}  band", "version", "published", "cached", "recordings");
    for (r, b) in releases.iter().zip(&band) {
        let cached = harness::trial::real::cached_binary(provider, r.version).is_some();
        let note = if stand_ins.contains(&r.version) { "  default run" } else { "" };
        let published = r.published.get(..10).unwrap_or("-");
        let _ = writeln!(out, "{:<10} {:<10} {:<6} {:>10}  {b}{note}", r.version.to_string(), published, if cached { "yes" } else { "no" }, recorded(recordings, provider, r.version));
    }
    out.push('\n');
    for (i, w) in versions.windows(2).enumerate() {
        if band[i] != band[i + 1] {
            let _ = writeln!(out, "band {} from {}: {}", band[i + 1], w[1], changes(provider, w[0], w[1]).join(", "));
        }
    }
    if let Some(from) = versions.first() {
        let _ = writeln!(out, "(band 1 from {from}; a fact's name: it holds from there on, `!name`: it stops holding. The facts are the fake's profile predicates. `default run`: the newest release of its band, which `conformance run` plays for the whole band; --all-versions plays every recorded one.)");
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}
