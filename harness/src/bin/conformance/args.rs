//! The command line, declared with clap: every subcommand has `--help`, and
//! a usage error exits 2.

use std::path::PathBuf;

use clap::{ArgMatches, Args, Parser, Subcommand, ValueEnum};
use fakes::version::Version;
use harness::scenario::Provider;
use harness::source::DriverSource;

#[derive(Parser, Debug)]
#[command(
    name = "conformance",
    about = "Runs per-tool MCP approval scenarios against a driver, through fake (or real) providers.",
    after_help = "Exit codes: 0 conformant, 1 failures, 2 bad input.\nWith no command, `run` is assumed.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run scenarios against one or more drivers (the default command).
    Run(RunArgs),
    /// Run, then print the current failures as an expected-failure list.
    Baseline(RunArgs),
    /// List scenarios and the criteria each covers.
    List {
        #[command(flatten)]
        select: Select,
        /// Print the criteria instead (the source documents' acceptance
        /// items word for word, then the project's own), each with the
        /// scenarios covering it and the mutants failing them: the text of
        /// scenarios/COVERAGE.md.
        #[arg(long)]
        criteria: bool,
    },
    /// Show one scenario: servers, policies, steps and expectations.
    Explain {
        /// The scenario id.
        id: String,
        #[command(flatten)]
        select: Select,
    },
    /// List the broken built-in drivers the suite must fail.
    Mutants,
    /// Serve a built-in driver over the driver protocol on stdio.
    Shim {
        /// `reference`, `reference-fail-closed`, `reference-claude-sdk` or
        /// `mutant:NAME`.
        #[arg(long, default_value = "reference")]
        driver: String,
    },
    /// Time the suite through the fakes, the harness overhead over the bare
    /// processes and lines, the real Codex where cached, and memory over
    /// 10,000 generated scenarios; prints ratios.
    Bench {
        #[command(flatten)]
        select: Select,
        /// Worker threads for the whole-suite timing.
        #[arg(short = 'j', long, default_value_t = 2)]
        jobs: usize,
    },
    /// Fetch real binaries from the npm registry into the cache.
    Fetch {
        provider: RealProvider,
        #[arg(required = true, value_parser = parse_version)]
        versions: Vec<Version>,
    },
    /// Replay every recording of a real run on the fake and compare the two
    /// message by message, against the allow-list (RECORDINGS/ALLOWED.toml);
    /// prints what differs, stale allow-list entries and the totals.
    Fidelity {
        /// The recordings directory.
        #[arg(long, default_value = "recordings")]
        recordings: PathBuf,
        /// Only recordings whose trial name contains TEXT (stale entries are
        /// then not checked).
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        /// Recordings replayed at once (default: the number of cores).
        #[arg(short = 'j', long)]
        jobs: Option<usize>,
        /// Only print the normalization and ordering rules, each with why.
        #[arg(long)]
        rules: bool,
        /// A shim whose recordings (recordings/drivers/<its name>/) are
        /// replayed with it (repeatable); without one they are skipped.
        #[arg(long = "driver-cmd", value_name = "'PROGRAM ARGS...'")]
        driver_cmd: Vec<String>,
    },
    /// Run on the real binaries (like `run --real`) and write each trial's
    /// normalized recording under OUT/<provider>/<version>/<scenario>.json.
    Record {
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        select: Select,
        /// Only these provider versions (repeatable).
        #[arg(long = "version", value_parser = parse_version)]
        versions: Vec<Version>,
        /// Record the fakes instead, in the same format: `diff -r` against
        /// recordings/ shows a fake's differences side by side.
        #[arg(long)]
        fake: bool,
        /// Record this shim instead of the reference driver (repeatable);
        /// its recordings go below OUT/drivers/<the name it reports>/.
        #[arg(long = "driver-cmd", value_name = "'PROGRAM ARGS...'")]
        driver_cmd: Vec<String>,
    },
}

/// Which scenarios.
#[derive(Args, Debug, Clone, Default)]
pub struct Select {
    /// Scenario files below DIR instead of the embedded suite.
    #[arg(long, value_name = "DIR")]
    pub scenarios: Option<PathBuf>,
    /// Only scenarios for this provider.
    #[arg(long)]
    pub provider: Option<ProviderArg>,
    /// Only scenario ids containing TEXT.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: Select,
    /// A built-in driver: `reference`, `reference-fail-closed`,
    /// `reference-claude-sdk` (Claude Code in SDK host mode) or
    /// `mutant:NAME` (repeatable; several drivers make one combined report).
    #[arg(long = "driver", value_name = "NAME")]
    pub driver: Vec<String>,
    /// A driver shim (docs/driver-protocol.md): program and arguments, split
    /// on spaces (repeatable).
    #[arg(long = "driver-cmd", value_name = "'PROGRAM ARGS...'")]
    pub driver_cmd: Vec<String>,
    /// Only these provider versions (repeatable).
    #[arg(long = "version", value_name = "X.Y.Z", value_parser = parse_version)]
    pub versions: Vec<Version>,
    /// `scenario` or `scenario:check` per line; strict.
    #[arg(long, value_name = "FILE")]
    pub expected_failures: Option<PathBuf>,
    /// Write a TAP 14 report.
    #[arg(long, value_name = "FILE")]
    pub tap: Option<PathBuf>,
    /// Write a JUnit XML report.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the conformance matrix page (HTML).
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
    /// Run on the real provider binaries (cached, fetched on demand) against
    /// a mock model, instead of the fakes.
    #[arg(long)]
    pub real: bool,
    /// Trials run at once (default: the number of cores); output keeps plan order.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Only failures and the summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Drivers in the order given on the command line (filled after parsing).
    #[arg(skip)]
    pub drivers: Vec<DriverSource>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderArg {
    Codex,
    Claude,
    Cursor,
    Codebuddy,
}

impl ProviderArg {
    pub fn provider(self) -> Provider {
        match self {
            ProviderArg::Codex => Provider::Codex,
            ProviderArg::Claude => Provider::Claude,
            ProviderArg::Cursor => Provider::Cursor,
            ProviderArg::Codebuddy => Provider::Codebuddy,
        }
    }
}

/// Providers with a real binary to fetch.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealProvider {
    Codex,
    Claude,
}

fn parse_version(s: &str) -> Result<Version, String> {
    s.parse()
}

/// A `--driver-cmd` value: program and arguments, split on spaces.
pub fn shim(cmd: &str) -> DriverSource {
    DriverSource::Shim(cmd.split_whitespace().map(String::from).collect())
}

impl RunArgs {
    /// `--driver` and `--driver-cmd` in command-line order; the reference
    /// driver when neither is given.
    pub fn order_drivers(&mut self, matches: &ArgMatches) {
        let mut found: Vec<(usize, DriverSource)> = Vec::new();
        let indices = |id: &str| matches.indices_of(id).map(|i| i.collect::<Vec<_>>()).unwrap_or_default();
        for (i, name) in indices("driver").into_iter().zip(&self.driver) {
            found.push((i, DriverSource::Builtin(name.clone())));
        }
        for (i, cmd) in indices("driver_cmd").into_iter().zip(&self.driver_cmd) {
            found.push((i, shim(cmd)));
        }
        found.sort_by_key(|(i, _)| *i);
        self.drivers = found.into_iter().map(|(_, d)| d).collect();
        if self.drivers.is_empty() {
            self.drivers.push(DriverSource::reference());
        }
    }
}
