//! Where the provider executables come from: the fakes (separate programs,
//! or one program with a subcommand each), or real binaries from the cache.

use std::collections::BTreeMap;
use std::path::PathBuf;

use fakes::version::Version;

use crate::scenario::Provider;

pub use crate::command::FakeCommand;

/// Where the fake executables live, and which trials run on real binaries.
#[derive(Debug, Clone)]
pub struct Fakes {
    pub codex: FakeCommand,
    pub claude: FakeCommand,
    pub mcp: FakeCommand,
    /// Records the wire in front of a real provider (`conformance relay`).
    pub relay: FakeCommand,
    /// Runs each shim and kills all it started (`conformance supervise`).
    pub supervise: FakeCommand,
    /// Real provider binaries by trial key (`codex-0.171.0`): those trials
    /// run on the real CLI against the mock model instead of the fake.
    pub real: BTreeMap<String, PathBuf>,
    /// Only real runs: trials without a real binary are skipped.
    pub real_only: bool,
}

impl Fakes {
    /// Separate `fake-codex`, `fake-claude` and `fake-mcp` executables and
    /// the CLI for `relay` and `supervise` (the test case).
    pub fn from_bins(codex: &str, claude: &str, mcp: &str, cli: &str) -> Fakes {
        let bin = |p: &str| FakeCommand { program: p.into(), prefix: Vec::new() };
        let cli = |sub: &str| FakeCommand { program: cli.into(), prefix: vec![sub.into()] };
        Fakes {
            codex: bin(codex),
            claude: bin(claude),
            mcp: bin(mcp),
            relay: cli("relay"),
            supervise: cli("supervise"),
            real: BTreeMap::new(),
            real_only: false,
        }
    }

    /// One executable that becomes a fake when its first argument says so
    /// (the CLI case: `conformance fake-codex ...`).
    pub fn multicall(program: PathBuf) -> Fakes {
        let sub = |name: &str| FakeCommand { program: program.clone(), prefix: vec![name.to_string()] };
        Fakes {
            codex: sub("fake-codex"),
            claude: sub("fake-claude"),
            mcp: sub("fake-mcp"),
            relay: sub("relay"),
            supervise: sub("supervise"),
            real: BTreeMap::new(),
            real_only: false,
        }
    }

    /// Runs on the real binaries cached for every measured version (see
    /// scripts/fetch-provider.sh) instead of the fakes.
    pub fn with_cached_real_binaries(mut self) -> Fakes {
        for provider in [Provider::Codex, Provider::Claude] {
            // Every version in the cache, not only the simulated ones.
            let dir = super::real::cache_dir().map(|c| c.join(provider.as_str()));
            let cached = dir.and_then(|d| std::fs::read_dir(d).ok()).into_iter().flatten().flatten();
            for v in cached.filter_map(|e| e.file_name().to_str()?.parse::<fakes::version::Version>().ok()) {
                if let Some(bin) = super::real::cached_binary(provider, v) {
                    self.real.insert(format!("{}-{v}", provider.as_str()), bin);
                }
            }
        }
        self.real_only = true;
        self
    }

    /// The real binary this trial runs on, if any.
    pub fn real_binary(&self, provider: Provider, version: Option<Version>) -> Option<&PathBuf> {
        self.real.get(&format!("{}-{}", provider.as_str(), version?))
    }
}
