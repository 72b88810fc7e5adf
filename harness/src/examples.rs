//! The example shims under examples/, in one list: how each is run once its
//! package is installed, how to install it, its committed baseline and the
//! package version it pins. `cargo test -p harness` and `conformance matrix`
//! both read this list, so a new example is one entry here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::plan;
use crate::runner::{record, run_one};
use crate::scenario::Scenario;
use crate::source::DriverSource;
use crate::trial::Fakes;
use crate::verdict::expected::{self, ExpectedFailures};

/// Where an example's package comes from.
#[derive(Debug, Clone, Copy)]
pub enum Package {
    /// Hand-written, nothing to install.
    None,
    /// A PyPI package pinned in the example's requirements.txt.
    PyPI(&'static str),
    /// An npm package pinned in the example's package.json.
    Npm(&'static str),
}

/// What runs the example's shim.
#[derive(Debug, Clone, Copy)]
pub enum Runner {
    /// `python3 shim.py`.
    Python3,
    /// shim.py with the Python of a venv: $`var`, else setup.sh's default
    /// venv target/`venv`.
    Venv { var: &'static str, venv: &'static str },
    /// shim.mjs with $`var`, else `node` on PATH, once setup.sh installed
    /// the package into the example's node_modules.
    Node { var: &'static str },
}

#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// Its directory under examples/, and the name its trials carry.
    pub label: &'static str,
    /// What it drives, for the matrix.
    pub drives: &'static str,
    pub package: Package,
    pub runner: Runner,
}

pub const EXAMPLES: &[Example] = &[
    Example { label: "python-shim", drives: "the reference design, hand-written", package: Package::None, runner: Runner::Python3 },
    Example { label: "go-style-shim", drives: "a fail-closed Codex driver, hand-written", package: Package::None, runner: Runner::Python3 },
    Example {
        label: "codex-app-server-sdk",
        drives: "codex app-server",
        package: Package::PyPI("codex-app-server-sdk"),
        runner: Runner::Venv { var: "CODEX_APP_SERVER_SDK_PYTHON", venv: "codex-app-server-sdk-venv" },
    },
    Example {
        label: "claude-agent-sdk-ts",
        drives: "claude (SDK host mode)",
        package: Package::Npm("@anthropic-ai/claude-agent-sdk"),
        runner: Runner::Node { var: "CLAUDE_AGENT_SDK_TS_NODE" },
    },
    Example {
        label: "claude-agent-sdk-py",
        drives: "claude (SDK host mode)",
        package: Package::PyPI("claude-agent-sdk"),
        runner: Runner::Venv { var: "CLAUDE_AGENT_SDK_PY_PYTHON", venv: "claude-agent-sdk-py-venv" },
    },
    Example {
        label: "codex-sdk-ts",
        drives: "codex exec",
        package: Package::Npm("@openai/codex-sdk"),
        runner: Runner::Node { var: "CODEX_SDK_TS_NODE" },
    },
];

/// The examples/ directory of this checkout.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

impl Example {
    pub fn dir(&self, root: &Path) -> PathBuf {
        root.join(self.label)
    }

    /// The command that runs the shim, None when its package is not
    /// installed ([`Example::absent`] says how to), or why it cannot run.
    pub fn command(&self, root: &Path) -> Result<Option<Vec<String>>, String> {
        let dir = self.dir(root);
        let with = |program: PathBuf, script: &str| vec![program.display().to_string(), dir.join(script).display().to_string()];
        match self.runner {
            Runner::Python3 => Ok(Some(with(PathBuf::from("python3"), "shim.py"))),
            Runner::Venv { var, venv } => {
                let python = match from_env(var)? {
                    Some(p) => p,
                    None => root.join("../target").join(venv).join("bin/python"),
                };
                Ok(python.exists().then(|| with(python, "shim.py")))
            }
            Runner::Node { var } => {
                let Package::Npm(name) = self.package else { return Err(format!("{}: a node shim needs an npm package", self.label)) };
                if !dir.join("node_modules").join(name).join("package.json").exists() {
                    return Ok(None);
                }
                let node = match from_env(var)? {
                    Some(n) => Some(n),
                    None => std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).map(|d| d.join("node")).find(|n| n.is_file()),
                };
                Ok(node.map(|n| with(n, "shim.mjs")))
            }
        }
    }

    /// How to install it, for a trial ignored because it is not.
    pub fn absent(&self) -> String {
        let setup = format!("examples/{}/setup.sh", self.label);
        match (self.package, self.runner) {
            (_, Runner::Venv { var, .. }) => format!("no venv with {}: run {setup}, or set {var} to a Python that has it", self.package_name()),
            (_, Runner::Node { var }) => format!("no {} under examples/{}: run {setup} (needs node and npm), or set {var} to the node to run shim.mjs with", self.package_name(), self.label),
            _ => String::new(),
        }
    }

    fn package_name(&self) -> &'static str {
        match self.package {
            Package::None => "",
            Package::PyPI(n) | Package::Npm(n) => n,
        }
    }

    /// `registry name version` as pinned by the example's package files,
    /// e.g. `npm @openai/codex-sdk 0.163.0`; the label for hand-written ones.
    pub fn package(&self, root: &Path) -> String {
        let dir = self.dir(root);
        let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        let pinned = match self.package {
            Package::None => return format!("{} (hand-written)", self.label),
            Package::PyPI(name) => read("requirements.txt")
                .lines()
                .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix("==").map(str::trim).map(String::from)),
            Package::Npm(name) => serde_json::from_str::<serde_json::Value>(&read("package.json"))
                .ok()
                .and_then(|p| p["dependencies"][name].as_str().map(String::from)),
        };
        let registry = if matches!(self.package, Package::PyPI(_)) { "PyPI" } else { "npm" };
        format!("{registry} {} {}", self.package_name(), pinned.unwrap_or_else(|| "(version not pinned)".into()))
    }

    /// Its committed expected failures (none when it has no list).
    pub fn baseline(&self, root: &Path, known: &BTreeSet<String>) -> Result<ExpectedFailures, String> {
        let path = self.dir(root).join("expected-failures.txt");
        if path.exists() { ExpectedFailures::load(&path, known) } else { Ok(ExpectedFailures::default()) }
    }
}

/// $`var` as a path: None when unset, an error when it names nothing.
fn from_env(var: &str) -> Result<Option<PathBuf>, String> {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(p) if Path::new(&p).exists() => Ok(Some(PathBuf::from(p))),
        Some(p) => Err(format!("{var}={} does not exist", Path::new(&p).display())),
        None => Ok(None),
    }
}

/// One scenario through a shim on every version it is planned for, with the
/// shim's expected failures for it applied as `conformance run
/// --expected-failures` does: a listed failure becomes expected, and an entry
/// that no longer fails becomes a failing record of its own.
pub fn run_scenario(cmd: &[String], s: &Arc<Scenario>, expected: &ExpectedFailures, fakes: &Fakes) -> Result<Vec<reports::Trial>, String> {
    let mut records = Vec::new();
    for t in plan::trials(std::slice::from_ref(s), &[DriverSource::Shim(cmd.to_vec())], &plan::measured_releases()) {
        let started = Instant::now();
        let outcome = run_one(&t, fakes).map_err(|e| format!("{}: {}", e.kind, e.message))?;
        records.push(record(&t, &outcome.verdict, outcome.stderr.as_deref(), started.elapsed().as_secs_f64()));
    }
    if records.iter().all(|r| r.outcome == reports::Outcome::Skip) {
        return Ok(records);
    }
    let mine = ExpectedFailures { entries: expected.entries.iter().filter(|e| e.scenario == s.id).cloned().collect() };
    expected::apply(&mut records, &mine);
    Ok(records)
}
