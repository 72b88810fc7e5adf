//! Random scenarios for differential fidelity (`conformance fidelity
//! --cases N --seed S`): servers over both transports, tools with every mix
//! of annotations, per-tool policies (unknown tool names among them), the
//! global policy, host answers, repeated calls within and across turns,
//! attach/detach, resume, secret rotation, policy changes and reordering;
//! stdio tools that ask their own question (`elicits`, a form to fill or a
//! page to open), answered like the call that runs them; on Codex also
//! shell commands outside the sandbox and file changes under the read-only
//! sandbox, whose approval the host answers, the model's questions to the
//! user (request_user_input) and its requests for more permissions
//! (request_permissions), which the host answers.
//! Every case is written as scenario text and read back through the
//! scenario loader, so it is a valid scenario; it has no steps a real CLI
//! cannot be made to perform. Its expectations are empty: a generated case
//! is judged by comparing the fake's and the real CLI's recordings, not by
//! what the scenario says.

use std::fmt::Write;
use std::path::Path;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::scenario::{Provider, Scenario};

/// What a tool may be annotated with: nothing, each hint alone, both
/// contradicting hints, a title only, open world only.
pub const ANNOTATIONS: &[&str] = &[
    "",
    "readOnlyHint = false",
    "readOnlyHint = true",
    "destructiveHint = true",
    "destructiveHint = false",
    "readOnlyHint = true, destructiveHint = true",
    "title = \"A tool\"",
    "openWorldHint = true",
];

const SERVER_NAMES: &[&str] = &["alpha", "beta", "gamma"];
const TOOL_NAMES: &[&str] = &["read_file", "write_file", "search", "list-items"];

#[derive(Debug, Clone)]
pub struct ToolCase {
    pub name: &'static str,
    /// Index into [`ANNOTATIONS`].
    pub annotations: usize,
    /// `prompt`, `approve`, or no policy.
    pub policy: Option<&'static str>,
    /// Its server asks the client something during each call (Codex,
    /// stdio servers only).
    pub elicits: Option<Elicit>,
}

/// How a tool's server asks: a form to fill, or a page to open (MCP
/// elicitation modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elicit {
    Form,
    Url,
}

/// Which revision of the generator made a provider's cases: it goes up
/// whenever the cases a seed gives change, so the agreement log counts only
/// runs of the cases it would generate now. Codex 2: tools that elicit;
/// Codex 3: command requests; Codex 4: file change requests; Codex 5: the
/// model's questions (user input requests); Codex 6: the model's permission
/// requests; Codex 7: tools whose server asks the user to open a page (url
/// elicitations). Claude Code 2: tools that elicit (a form or a page).
pub fn revision(provider: Provider) -> u32 {
    match provider {
        Provider::Codex => 7,
        _ => 2,
    }
}

#[derive(Debug, Clone)]
pub struct ServerCase {
    pub http: bool,
    pub bearer: bool,
    pub attached: bool,
    pub tools: Vec<ToolCase>,
    /// A policy for a tool the server does not expose.
    pub unknown_policy: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepCase {
    /// Server and tool by index (taken modulo what exists), host answer.
    Call { server: usize, tool: usize, host: Option<&'static str> },
    Resume,
    SetPolicy { server: usize, tool: usize, mode: Option<&'static str> },
    RotateSecret { server: usize },
    Attach { server: usize },
    Detach { server: usize },
    Reorder,
    /// Codex: the model asks to run a shell command outside the sandbox,
    /// which Codex asks the client to approve; the host's answer.
    Command { host: Option<&'static str> },
    /// Codex: the model adds a file with `apply_patch`, which Codex asks
    /// the client to approve under the read-only sandbox; the host's answer.
    FileChange { host: Option<&'static str> },
    /// Codex: the model asks the user a question (request_user_input),
    /// which Codex passes on to the client.
    UserInput,
    /// Codex: the model asks for network access (request_permissions),
    /// which Codex asks the client to grant; the host's answer.
    Permissions { host: Option<&'static str> },
}

#[derive(Debug, Clone)]
pub struct Case {
    pub provider: Provider,
    pub auto_approve: bool,
    pub servers: Vec<ServerCase>,
    pub steps: Vec<StepCase>,
}

fn policy() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![Just(None), Just(Some("prompt")), Just(Some("approve"))]
}

fn tool() -> impl Strategy<Value = (usize, Option<&'static str>)> {
    (0..ANNOTATIONS.len(), policy())
}

fn server() -> impl Strategy<Value = ServerCase> {
    (any::<bool>(), any::<bool>(), prop::bool::weighted(0.75), prop::collection::vec(tool(), 1..=3), prop::option::weighted(0.2, policy()))
        .prop_map(|(http, bearer, attached, tools, unknown)| ServerCase {
            http,
            bearer: http && bearer,
            attached,
            tools: tools.into_iter().enumerate().map(|(i, (annotations, policy))| ToolCase { name: TOOL_NAMES[i], annotations, policy, elicits: None }).collect(),
            unknown_policy: unknown.flatten(),
        })
}

/// A server whose stdio tools may elicit (a form or a page): Codex passes
/// the question to its client, Claude Code to an SDK host (print mode
/// cancels it).
fn eliciting_server() -> impl Strategy<Value = ServerCase> {
    let elicit = prop_oneof![8 => Just(None), 1 => Just(Some(Elicit::Form)), 1 => Just(Some(Elicit::Url))];
    (server(), prop::collection::vec(elicit, 3)).prop_map(|(mut s, elicits)| {
        for (t, e) in s.tools.iter_mut().zip(elicits) {
            t.elicits = e.filter(|_| !s.http);
        }
        s
    })
}

fn host() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![Just(None), Just(Some("accept")), Just(Some("decline")), Just(Some("cancel"))]
}

fn step() -> impl Strategy<Value = StepCase> {
    prop_oneof![
        6 => (0..3usize, 0..3usize, host()).prop_map(|(server, tool, host)| StepCase::Call { server, tool, host }),
        1 => Just(StepCase::Resume),
        1 => (0..3usize, 0..3usize, policy()).prop_map(|(server, tool, mode)| StepCase::SetPolicy { server, tool, mode }),
        1 => (0..3usize).prop_map(|server| StepCase::RotateSecret { server }),
        1 => (0..3usize).prop_map(|server| StepCase::Attach { server }),
        1 => (0..3usize).prop_map(|server| StepCase::Detach { server }),
        1 => Just(StepCase::Reorder),
    ]
}

/// A Codex step: any step, a command, file change, user input or
/// permissions request.
/// Its own strategy, so Claude Code's cases stay as they were.
fn codex_step() -> impl Strategy<Value = StepCase> {
    prop_oneof![
        10 => step(),
        1 => host().prop_map(|host| StepCase::Command { host }),
        1 => host().prop_map(|host| StepCase::FileChange { host }),
        1 => Just(StepCase::UserInput),
        1 => host().prop_map(|host| StepCase::Permissions { host }),
    ]
}

/// Any case for `provider`.
pub fn case(provider: Provider) -> impl Strategy<Value = Case> {
    let (servers, step) = match provider {
        Provider::Codex => (eliciting_server().boxed(), codex_step().boxed()),
        _ => (eliciting_server().boxed(), step().boxed()),
    };
    (any::<bool>(), prop::collection::vec(servers, 1..=3), prop::collection::vec(step, 1..=6)).prop_map(move |(auto_approve, mut servers, steps)| {
        // The first server is always attached and some step calls a tool,
        // so every case reaches an MCP server.
        servers[0].attached = true;
        let mut steps = steps;
        if !steps.iter().any(|s| matches!(s, StepCase::Call { .. })) {
            steps.insert(0, StepCase::Call { server: 0, tool: 0, host: None });
        }
        Case { provider, auto_approve, servers, steps }
    })
}

/// Case `n` of seed `seed`: the same pair always gives the same case.
pub fn nth(provider: Provider, seed: u64, n: u64) -> Case {
    tree(provider, seed, n).current()
}

/// Case `n` of seed `seed` with the means to shrink it.
pub fn tree(provider: Provider, seed: u64, n: u64) -> Box<dyn ValueTree<Value = Case>> {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&n.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    case(provider).boxed().new_tree(&mut runner).expect("the case strategy never rejects")
}

/// The simplest case `tree` reaches while `fails` keeps holding (proptest's
/// simplify/complicate walk), after at most `budget` probes; and how many
/// probes it took.
pub fn shrink(mut tree: Box<dyn ValueTree<Value = Case>>, budget: usize, mut fails: impl FnMut(&Case) -> bool) -> (Case, usize) {
    let mut best = tree.current();
    let mut probes = 0;
    if !tree.simplify() {
        return (best, 0);
    }
    while probes < budget {
        probes += 1;
        let candidate = tree.current();
        let moved = if fails(&candidate) {
            best = candidate;
            tree.simplify()
        } else {
            tree.complicate()
        };
        if !moved {
            break;
        }
    }
    (best, probes)
}

impl Case {
    /// The case as scenario text with id `id`; steps that name nothing the
    /// case has (a rotation without a bearer server, an attach of an
    /// attached one) are left out.
    pub fn to_toml(&self, id: &str, origin: &str) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "id = \"{id}\"\ntitle = \"generated case ({origin})\"\ncovers = []\nprovider = \"{}\"", self.provider.as_str());
        let _ = writeln!(t, "caught_by = []\ngenerated = \"{origin}\"");
        let elicits = self.servers.iter().any(|s| s.tools.iter().any(|t| t.elicits.is_some()));
        if self.provider == Provider::Codex && elicits || self.steps.iter().any(|s| matches!(s, StepCase::Command { .. } | StepCase::FileChange { .. } | StepCase::UserInput | StepCase::Permissions { .. })) {
            let _ = writeln!(t, "not_in_exec = \"a server's or the model's question or a command's, file change's or permissions' approval goes to a client, which codex exec has not\"");
        }
        let _ = writeln!(t, "\n[policy]\nglobal = \"{}\"", if self.auto_approve { "auto-approve" } else { "ask" });
        for (i, s) in self.servers.iter().enumerate() {
            let name = SERVER_NAMES[i];
            let _ = writeln!(t, "\n[[servers]]\nname = \"{name}\"\ntransport = \"{}\"\nreason = \"generated\"", if s.http { "http" } else { "stdio" });
            if s.bearer {
                let _ = writeln!(t, "bearer_token_env = \"GEN_TOKEN_{}\"", i + 1);
            }
            if !s.attached {
                let _ = writeln!(t, "attached = false");
            }
            for tool in &s.tools {
                if let Some(mode) = tool.policy {
                    let _ = writeln!(t, "tools.{}.approval_mode = \"{mode}\"", key(tool.name));
                }
                let _ = writeln!(t, "catalog.{}.annotations = {{ {} }}", key(tool.name), ANNOTATIONS[tool.annotations]);
                if tool.elicits.is_some() {
                    let _ = writeln!(t, "catalog.{}.elicits = \"Go ahead with {}?\"", key(tool.name), tool.name);
                }
                if tool.elicits == Some(Elicit::Url) {
                    let _ = writeln!(t, "catalog.{}.elicit_url = \"https://{name}.example.invalid/{}\"", key(tool.name), tool.name);
                }
            }
            if let Some(mode) = s.unknown_policy {
                let _ = writeln!(t, "tools.not_exposed.approval_mode = \"{mode}\"");
            }
        }
        for step in &self.steps {
            let server = |i: usize| (i % self.servers.len(), SERVER_NAMES[i % self.servers.len()]);
            let line = match step {
                StepCase::Call { server: s, tool, host } => {
                    let (i, name) = server(*s);
                    let tools = &self.servers[i].tools;
                    let host = host.map(|h| format!("\nhost = \"{h}\"")).unwrap_or_default();
                    let called = &tools[tool % tools.len()];
                    let call = format!("kind = \"tool_call\"\nserver = \"{name}\"\ntool = \"{}\"\nexpect = {{}}{host}", called.name);
                    let request = match called.elicits {
                        None => "",
                        Some(Elicit::Form) => "form_elicitation",
                        Some(Elicit::Url) => "url_elicitation",
                    };
                    if request.is_empty() {
                        call
                    } else {
                        // The host answers the server's question as it answers the call.
                        let ask = format!("kind = \"request\"\nrequest = \"{request}\"\nserver = \"{name}\"\nraised_by = \"{}\"\nexpect = {{}}{host}", called.name);
                        format!("{call}\n\n[[steps]]\n{ask}")
                    }
                }
                StepCase::Resume => "kind = \"resume\"".into(),
                StepCase::SetPolicy { server: s, tool, mode } => {
                    let (i, name) = server(*s);
                    let tools = &self.servers[i].tools;
                    let mode = mode.map(|m| format!("\napproval_mode = \"{m}\"")).unwrap_or_default();
                    format!("kind = \"set_policy\"\nserver = \"{name}\"\ntool = \"{}\"{mode}", tools[tool % tools.len()].name)
                }
                StepCase::RotateSecret { server: s } if self.servers[server(*s).0].bearer => {
                    format!("kind = \"rotate_secret\"\nserver = \"{}\"", server(*s).1)
                }
                StepCase::RotateSecret { .. } => continue,
                StepCase::Attach { server: s } | StepCase::Detach { server: s } if self.servers[server(*s).0].attached => continue,
                StepCase::Attach { server: s } => format!("kind = \"attach\"\nserver = \"{}\"", server(*s).1),
                StepCase::Detach { server: s } => format!("kind = \"detach\"\nserver = \"{}\"", server(*s).1),
                StepCase::Reorder => "kind = \"reorder_servers\"".into(),
                StepCase::Command { host } | StepCase::FileChange { host } | StepCase::Permissions { host } => {
                    let request = match step {
                        StepCase::Command { .. } => "command",
                        StepCase::FileChange { .. } => "file_change",
                        _ => "permissions",
                    };
                    let host = host.map(|h| format!("\nhost = \"{h}\"")).unwrap_or_default();
                    format!("kind = \"request\"\nrequest = \"{request}\"\nexpect = {{}}{host}")
                }
                StepCase::UserInput => "kind = \"request\"\nrequest = \"user_input\"\nexpect = {}".into(),
            };
            let _ = writeln!(t, "\n[[steps]]\n{line}");
        }
        t
    }

    /// The case read back as a scenario (the loader checks it).
    pub fn scenario(&self, id: &str, origin: &str) -> Result<Scenario, String> {
        let text = self.to_toml(id, origin);
        Scenario::parse(Path::new(&format!("{id}.toml")), &text).map_err(|e| format!("{e}\n{text}"))
    }
}

/// A tool name as a TOML key (quoted when it is not bare).
fn key(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// Every case is a valid scenario a real CLI can play.
        #[test]
        fn every_case_is_a_valid_scenario_a_real_cli_can_play(c in case(Provider::Codex), claude in case(Provider::Claude)) {
            for c in [c, claude] {
                let s = c.scenario("gen-1", "seed 1 case 1").map_err(TestCaseError::fail)?;
                prop_assert!(crate::plan::real_run_skip(&s).is_none());
                prop_assert_eq!(s.generated.as_deref(), Some("seed 1 case 1"));
            }
        }
    }

    /// FNV-1a of the first 50 cases of seed 21, as scenario text.
    fn digest(provider: Provider) -> u64 {
        (0..50).map(|n| nth(provider, 21, n).to_toml("g", "o")).collect::<String>().bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    }

    /// The cases a seed gives change only with a new [`revision`] (and
    /// then this table): logged agreement counts are of the cases of theirs.
    #[test]
    fn the_cases_change_only_with_the_revision() {
        for (provider, rev, pinned) in [(Provider::Codex, 7, 7094080888833532670), (Provider::Claude, 2, 5645025209346936515)] {
            assert_eq!((revision(provider), digest(provider)), (rev, pinned), "{}: cases changed: bump generate::revision and pin the new digest", provider.as_str());
        }
    }

    #[test]
    fn a_seed_and_a_number_always_give_the_same_case_and_others_differ() {
        let text = |seed, n| nth(Provider::Codex, seed, n).to_toml("g", "o");
        assert_eq!(text(7, 3), text(7, 3));
        let distinct: std::collections::BTreeSet<String> = (0..20).map(|n| text(7, n)).collect();
        assert!(distinct.len() > 15, "cases of one seed vary: {}", distinct.len());
        assert_ne!(text(7, 3), text(8, 3));
    }

    #[test]
    fn shrinking_keeps_the_failure_and_drops_the_rest() {
        // A "divergence" wherever a case resumes; find a big case that has one.
        let resumes = |c: &Case| c.steps.contains(&StepCase::Resume);
        let n = (0..500).find(|n| {
            let c = nth(Provider::Codex, 3, *n);
            resumes(&c) && c.steps.len() >= 4 && c.servers.len() >= 2
        });
        let n = n.expect("some big case resumes");
        let (small, probes) = shrink(tree(Provider::Codex, 3, n), 500, resumes);
        assert!(resumes(&small), "the failure is kept");
        assert_eq!(small.servers.len(), 1, "{small:?}");
        assert!(small.steps.len() <= 2, "a resume and at most the call every case has: {small:?}");
        assert!(probes > 0 && probes <= 500);
        assert!(small.scenario("g", "o").is_ok(), "a shrunk case is still a valid scenario");
    }

    #[test]
    fn over_many_cases_every_feature_appears() {
        let claude: String = (0..200).map(|n| nth(Provider::Claude, 1, n).to_toml("g", "o")).collect();
        for needle in ["request = \"form_elicitation\"", "request = \"url_elicitation\""] {
            assert!(claude.contains(needle), "no Claude Code case has `{needle}`");
        }
        assert!(!claude.contains("not_in_exec"), "Claude Code has no exec mode");
        let texts: Vec<String> = (0..400).map(|n| nth(Provider::Codex, 1, n).to_toml("g", "o")).collect();
        let all = texts.join("\n");
        for needle in ANNOTATIONS.iter().filter(|a| !a.is_empty()).copied().chain([
            "annotations = {  }",
            "transport = \"http\"",
            "bearer_token_env",
            "attached = false",
            "tools.not_exposed",
            "global = \"auto-approve\"",
            "host = \"cancel\"",
            "kind = \"resume\"",
            "kind = \"rotate_secret\"",
            "kind = \"attach\"",
            "kind = \"detach\"",
            "kind = \"set_policy\"",
            "kind = \"reorder_servers\"",
            "elicits = ",
            "raised_by = ",
            "elicit_url = ",
            "request = \"url_elicitation\"",
            "request = \"command\"",
            "request = \"file_change\"",
            "request = \"user_input\"",
            "request = \"permissions\"",
        ]) {
            assert!(all.contains(needle), "no case has `{needle}`");
        }
        let repeated = texts.iter().any(|t| {
            let calls: Vec<&str> = t.split("[[steps]]").filter(|s| s.contains("tool_call")).collect();
            (1..calls.len()).any(|i| calls[..i].contains(&calls[i]))
        });
        assert!(repeated, "some case calls one tool twice");
    }
}
