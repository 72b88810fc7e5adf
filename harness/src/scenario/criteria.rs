//! The criteria a scenario may claim to cover (`covers`): the source
//! documents' own lists, quoted word for word, and the project's stricter
//! criteria under names of their own. `conformance list --criteria` prints
//! them with the scenarios and mutants behind each, and scenarios/COVERAGE.md
//! is that output (a test keeps it current).

use std::borrow::Borrow;
use std::collections::BTreeSet;
use std::fmt::Write;

use super::Scenario;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The per-tool approval issue's "Tests / acceptance" list, items 1..8.
    Acceptance,
    /// The project's own criteria, stricter than the acceptance list.
    Project,
    /// The QA findings F1 and F4 (Codex bridge approval, bridged results).
    Findings,
    /// The gateway issue's acceptance tests 1..5.
    Gateway,
}

impl Group {
    pub const ALL: [Group; 4] = [Group::Acceptance, Group::Project, Group::Findings, Group::Gateway];

    pub fn heading(self) -> &'static str {
        match self {
            Group::Acceptance => "Acceptance list of the per-tool approval issue (word for word)",
            Group::Project => "The project's own criteria",
            Group::Findings => "QA findings F1 and F4",
            Group::Gateway => "Gateway acceptance tests (word for word)",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Criterion {
    pub tag: &'static str,
    pub group: Group,
    /// A few words for tables.
    pub title: &'static str,
    /// The criterion itself; for the source lists, their exact words.
    pub text: &'static str,
    /// How a black-box run checks it, where that is not plain from the words.
    pub how: &'static str,
}

const fn c(tag: &'static str, group: Group, title: &'static str, text: &'static str) -> Criterion {
    Criterion { tag, group, title, text, how: "" }
}

const fn ac(tag: &'static str, title: &'static str, text: &'static str, how: &'static str) -> Criterion {
    Criterion { tag, group: Group::Acceptance, title, text, how }
}

pub const CRITERIA: &[Criterion] = &[
    ac("AC-1", "API and fingerprint", "Public API/golden tests cover stable clone, normalization, ordering, duplicate detection, and JSON/TOML-independent fingerprinting.", "Through the driver's surface: normalization and duplicate detection before launch, ordering and fingerprinting through `fingerprint` steps (declaration order, padding, secret values, policies). Stable clone and JSON/TOML independence are properties of a driver's in-process API that no run can observe; they stay the driver's own unit tests."),
    ac("AC-2", "Exact rendering", "Codex profile test renders exactly four requested tool tables and no server-wide default_tools_approval_mode.", "The fake Codex reports the approval settings it ends up with from config.toml, `-c` and thread/start `config`; every Codex trial checks them (under `ask`: exactly the declared tool tables, no server default)."),
    ac("AC-3", "Approved tool reaches MCP", "Exact fake Codex app-server run under global on-request proves an approved tool reaches MCP without mcpServer/elicitation/request.", "The fake MCP server counts the call; the fake Codex records every elicitation it sends."),
    ac("AC-4", "Fifth tool still asks", "A fifth tool on the same server still requests approval and is rejected by the current client.", "Rejected by the current client: declined by the host of a host-prompts driver, refused by a fail-closed driver itself."),
    ac("AC-5", "Other server still asks", "Same tool name on a different server still requests approval.", ""),
    ac("AC-6", "Other requests unchanged", "Command/file/permission server requests remain rejected and do not inherit MCP policy.", "A host-prompts driver brings them to its host whatever the tool policies, a fail-closed one refuses them; neither accepts them itself."),
    ac("AC-7", "Call-scoped, rotation, compatibility", "RunService attach/detach and resume tests prove policy is call-scoped, stable across endpoint secret rotation, and changes compatibility when the tool policy changes.", "Attach/detach of call-scoped servers, `resume`, `rotate_secret`, `set_policy` and `fingerprint` steps."),
    ac("AC-8", "Other providers", "Claude/Cursor/CodeBuddy either map an equivalent exact per-tool primitive or fail pre-launch; never silently downgrade.", ""),
    c("approve-silent", Group::Project, "Approve runs silently", "A tool the host marks `approve` on a server runs with no prompt to the driver or the host, and its MCP server receives the call exactly once."),
    c("exact", Group::Project, "Exactness", "`approve` on tool T of server S approves nothing else: not S's other tools, not a tool named T on another server."),
    c("prompt-asks", Group::Project, "Prompt always asks", "A tool marked `prompt` asks on every call, whatever its annotations say; a host-prompts driver brings it to the host and the host's answer is what the provider receives, for this call only (no `_meta.persist`); a fail-closed driver refuses it."),
    c("global-not-never", Group::Project, "Global policy without `never`", "`ask` leaves tool-call prompts to the host (or refuses them, fail-closed); `auto-approve` settles them for tools with no policy of their own. Neither maps to Codex `approvalPolicy = \"never\"`, which Codex 0.148+ turns into an in-CLI denial."),
    c("nothing-weakened", Group::Project, "Nothing else weakened", "Form and URL elicitations, command, file-change and permission requests go to the host and carry its answer (fail-closed: are refused); `item/tool/requestUserInput` gets no invented answers; requests the driver does not handle (unknown methods, other threads) get a JSON-RPC error, never an empty success."),
    c("declarations", Group::Project, "Declarations", "Server and tool names are normalized (trimmed) and checked; the policy enum is closed and case-sensitive (anything else refuses to launch, `invalid-policy`); a server declared twice conflicts (`duplicate-conflict`) unless the declarations are identical; secret values never appear in configs, arguments or transcripts (only the env var name does)."),
    c("compatibility", Group::Project, "Compatibility", "The fingerprint changes with any tool policy and not with declaration order, padding or secret values; a running provider is reused only while the fingerprint matches; resume, relaunch and secret rotation keep every policy; call-scoped servers and their policies exist only while attached."),
    c("exec-config", Group::Project, "codex exec settles from config", "A `codex exec` driver (no client to ask; exec runs every turn under approval policy `never`) projects every policy into the config: `approve` tools run, under `auto-approve` tools without a policy run too, and every other call fails in the CLI (cancelled before 0.148.0, denied under `never` from then on) with nothing reaching its server. It never opens the sandbox (`danger-full-access`) to make approved tools work, and never passes `approval_policy = \"untrusted\"` (exec refuses it from 0.149.0)."),
    c("no-downgrade", Group::Project, "No silent downgrade", "A provider without an exact per-tool primitive refuses a non-default policy before launch with a capability error (`unsupported-policy`) instead of silently dropping it."),
    c("F1", Group::Findings, "Bridge approval", "A driver bridging its host's own tools into Codex gets each bridged call run exactly once without asking the host (by accepting the bridge tool's prompt once, or by approving the bridge tools per tool), while other servers' tools, elicitations, command, file and permission requests stay refused or the host's, and the global policy is never `never`."),
    c("F4", Group::Findings, "Bridged results", "The child receives a bridged result's model-facing blocks once, without annotations (a float `priority` breaks Codex before 0.163.0); the full result is keyed by the child's own call id."),
    c("GW-1", Group::Gateway, "Approval pauses", "protocol=mcp gateway tool with approval_required pauses before execution."),
    c("GW-2", Group::Gateway, "Policy per target", "the same raw tool name under another target does not share approval policy accidentally."),
    c("GW-3", Group::Gateway, "OAuth consent first", "requires_oauth_provider blocks execution until the user's consent token is available."),
    c("GW-4", Group::Gateway, "Rebinding", "changed Gateway target customParameters invalidates the old binding."),
    c("GW-5", Group::Gateway, "Unbound fails closed", "missing catalog binding fails closed instead of executing as an ungoverned gateway tool."),
];

pub fn is_criterion(tag: &str) -> bool {
    CRITERIA.iter().any(|c| c.tag == tag)
}

pub fn tags() -> Vec<&'static str> {
    CRITERIA.iter().map(|c| c.tag).collect()
}

/// The scenarios claiming `tag`, and the mutants they name (each must fail
/// at least one of them).
pub fn coverage<'a>(tag: &str, scenarios: impl IntoIterator<Item = &'a Scenario>) -> (Vec<&'a str>, BTreeSet<&'a str>) {
    let mut ids = Vec::new();
    let mut mutants = BTreeSet::new();
    for s in scenarios.into_iter().filter(|s| s.covers.iter().any(|t| t == tag)) {
        ids.push(s.id.as_str());
        mutants.extend(s.caught_by.iter().map(String::as_str));
    }
    ids.sort_unstable();
    (ids, mutants)
}

/// Criteria no scenario covers, or whose scenarios name no mutant.
pub fn uncovered(scenarios: &[Scenario]) -> Vec<String> {
    CRITERIA
        .iter()
        .filter_map(|c| match coverage(c.tag, scenarios) {
            (ids, _) if ids.is_empty() => Some(format!("{}: no scenario covers it", c.tag)),
            (_, mutants) if mutants.is_empty() => Some(format!("{}: no mutant fails its scenarios", c.tag)),
            _ => None,
        })
        .collect()
}

/// scenarios/COVERAGE.md: every criterion, its words, the scenarios that
/// cover it and the mutants that fail them.
pub fn markdown<S: Borrow<Scenario>>(scenarios: &[S]) -> String {
    let mut out = String::from(
        "# What the scenarios cover\n\n\
         Generated by `conformance list --criteria` (a test fails when this file is stale). Each scenario\n\
         lists in `covers` the criteria below it exercises; the loader rejects any other tag. The source\n\
         documents' lists are quoted word for word; where a scenario checks more than the words say, the\n\
         project's own criteria name it. Every scenario names in `caught_by` the mutant drivers that must\n\
         fail it.\n",
    );
    for group in Group::ALL {
        let _ = write!(out, "\n## {}\n", group.heading());
        for c in CRITERIA.iter().filter(|c| c.group == group) {
            let (ids, mutants) = coverage(c.tag, scenarios.iter().map(Borrow::borrow));
            let quote = if matches!(group, Group::Acceptance | Group::Gateway) { format!("\"{}\"", c.text) } else { c.text.to_string() };
            let _ = write!(out, "\n- **{} {}.** {quote}\n", c.tag, c.title);
            if !c.how.is_empty() {
                let _ = writeln!(out, "  - checked: {}", c.how);
            }
            let list = |v: Vec<&str>| if v.is_empty() { "none".to_string() } else { v.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ") };
            let _ = writeln!(out, "  - scenarios: {}", list(ids));
            let _ = writeln!(out, "  - failed by: {}", list(mutants.into_iter().collect()));
        }
    }
    out
}
