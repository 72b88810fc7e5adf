//! A scenario's expectations for a driver's prompt design. Both designs are
//! correct and both must pass:
//! - `host-prompts` (a claimed capability): the driver brings provider
//!   prompts (tool-call approvals, elicitations, command, file and
//!   permission requests) to its host and returns the host's answer;
//! - fail-closed (the capability not claimed): the driver refuses every
//!   prompt itself and never asks the host; what it may settle alone (an
//!   `approve` tool, global `auto-approve`, its own bridged tools) it still
//!   settles, and `item/tool/requestUserInput` still gets no invented answers
//!   (empty answers, or a refusal: Codex answers the tool with no answers
//!   when the client replies with an error).
//!
//! - exec (`codex-exec` claimed, on Codex): a driver of `codex exec`, which
//!   has no client to ask and runs every turn under approval policy `never`
//!   whatever it is told. Nobody is prompted: what a fail-closed driver
//!   would settle alone must run from the config the driver passes (a
//!   per-tool `approve`, a server-wide `approve` under `auto-approve`), and
//!   every call it would refuse fails in the CLI (cancelled before 0.148.0,
//!   denied under `never` from then on), with nothing reaching the server.
//!
//! A scenario is written for the first design. For the second, the rules
//! below derive what follows from the design alone; a step whose outcome
//! differs beyond that (the host would have accepted; Claude Code, where a
//! fail-closed driver passes no permission prompt tool, so the CLI refuses
//! and nobody is prompted) says so in its own `fail_closed` table, and
//! [`missing_fail_closed`] makes sure it does.

use std::borrow::Cow;
use std::collections::BTreeSet;

use super::{HostAnswer, Provider, RequestKind, Scenario, Step, ToolCallExpect};

/// The capability of a driver that brings prompts to its host.
pub const HOST_PROMPTS: &str = "host-prompts";
/// The capability of a driver of `codex exec`.
pub const CODEX_EXEC: &str = "codex-exec";
/// Expected `model_saw` of a call `codex exec` fails itself: any of
/// [`DENIED_IN_CLI_SEEN`], whichever the version says.
pub const DENIED_IN_CLI: &str = "denied-in-cli";
const DENIED_IN_CLI_SEEN: &[&str] = &["denied-never", "cancelled"];

/// Expected `answer` of a fail-closed refusal: any of [`REFUSALS`].
pub const REFUSED: &str = "refused";
/// The answers that refuse a prompt. Never an empty success, never accept.
pub const REFUSALS: &[&str] = &["decline", "cancel", "error"];
/// What the model may see of a refused prompt: a rejection, however the
/// refusal was worded.
pub const REFUSAL_SEEN: &[&str] = &["rejected", "cancelled", "error"];
/// Expected `answer` of a fail-closed driver to a user-input request where
/// the scenario expects empty answers: those, or a JSON-RPC error, which
/// Codex's app-server turns into the same empty answers for the tool.
pub const NO_ANSWERS: &str = "no-answers";
const NO_ANSWERS_MET_BY: &[&str] = &["empty-answers", "error"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    HostPrompts,
    FailClosed,
    Exec,
}

impl Design {
    pub fn of(capabilities: &BTreeSet<String>, provider: Provider) -> Design {
        if provider == Provider::Codex && capabilities.contains(CODEX_EXEC) {
            Design::Exec
        } else if capabilities.contains(HOST_PROMPTS) {
            Design::HostPrompts
        } else {
            Design::FailClosed
        }
    }
}

/// `scenario` with every step's expectations as `design` has them (as
/// written for host-prompts, so borrowed).
pub fn expectations(scenario: &Scenario, design: Design) -> Cow<'_, Scenario> {
    if design == Design::HostPrompts {
        return Cow::Borrowed(scenario);
    }
    let mut out = scenario.clone();
    for step in &mut out.steps {
        match step {
            Step::ToolCall { expect, fail_closed, .. } => {
                refuse(&mut expect.host_asked, &mut expect.answer);
                if matches!(expect.model_saw.as_deref(), Some("rejected" | "cancelled")) && expect.answer.as_deref() == Some(REFUSED) {
                    expect.model_saw = Some(REFUSED.into());
                }
                if let Some(over) = fail_closed.take() {
                    *expect = overlay(expect, &over);
                }
            }
            Step::Request { request, expect, fail_closed, .. } => {
                refuse(&mut expect.host_asked, &mut expect.answer);
                if *request == RequestKind::UserInput && expect.answer.as_deref() == Some("empty-answers") {
                    expect.answer = Some(NO_ANSWERS.into());
                }
                if let Some(over) = fail_closed.take() {
                    expect.answer = over.answer.or(expect.answer.take());
                    expect.host_asked = over.host_asked.or(expect.host_asked);
                }
            }
            Step::RawRequest { expect, .. } => refuse(&mut expect.host_asked, &mut expect.answer),
            _ => {}
        }
    }
    if design == Design::Exec {
        for step in &mut out.steps {
            if let Step::ToolCall { expect, .. } = step {
                settled_in_cli(expect);
            }
        }
    }
    Cow::Owned(out)
}

/// A fail-closed expectation as `codex exec` meets it: no prompt, and so no
/// answer to check; a call the driver would refuse fails in the CLI.
fn settled_in_cli(expect: &mut ToolCallExpect) {
    let refused = expect.answer.as_deref() == Some(REFUSED);
    if expect.prompted == Some(true) {
        expect.prompted = Some(false);
    }
    expect.answer = None;
    expect.persisted = None;
    if refused && expect.model_saw.is_some() {
        expect.model_saw = Some(DENIED_IN_CLI.into());
    }
}

/// The host is never asked; a refusal may take any form.
fn refuse(host_asked: &mut Option<bool>, answer: &mut Option<String>) {
    if *host_asked == Some(true) {
        *host_asked = Some(false);
    }
    if answer.as_deref().is_some_and(|a| REFUSALS.contains(&a)) {
        *answer = Some(REFUSED.into());
    }
}

fn overlay(base: &ToolCallExpect, over: &ToolCallExpect) -> ToolCallExpect {
    ToolCallExpect {
        made: over.made.or(base.made),
        prompted: over.prompted.or(base.prompted),
        host_asked: over.host_asked.or(base.host_asked),
        answer: over.answer.clone().or(base.answer.clone()),
        persisted: over.persisted.or(base.persisted),
        server_calls: over.server_calls.or(base.server_calls),
        item: over.item.clone().or(base.item.clone()),
        model_saw: over.model_saw.clone().or(base.model_saw.clone()),
        blocks: over.blocks.clone().or(base.blocks.clone()),
        annotated: over.annotated.or(base.annotated),
        driver_recorded: over.driver_recorded.or(base.driver_recorded),
        interrupted: over.interrupted.or(base.interrupted),
        oauth_required: over.oauth_required.or(base.oauth_required),
        bound_row: over.bound_row.clone().or(base.bound_row.clone()),
    }
}

/// Steps (1-based) whose fail-closed outcome does not follow from the
/// rules and that have no `fail_closed` table saying what it is.
pub fn missing_fail_closed(scenario: &Scenario) -> Vec<usize> {
    let mut out = Vec::new();
    // A fail-closed driver never plays a scenario that needs host prompts.
    if scenario.requires.iter().any(|r| r == HOST_PROMPTS) {
        return out;
    }
    for (i, step) in scenario.steps.iter().enumerate() {
        let needs = match step {
            Step::ToolCall { expect, host, fail_closed: None, .. } => {
                expect.prompted == Some(true) && (*host == Some(HostAnswer::Accept) || scenario.provider == Provider::Claude)
            }
            Step::Request { host, fail_closed: None, .. } => *host == Some(HostAnswer::Accept),
            _ => false,
        };
        if needs {
            out.push(i + 1);
        }
    }
    out
}

/// Whether an `actual` answer or model_saw class meets `expected`, which
/// may be [`REFUSED`] or [`NO_ANSWERS`].
pub fn meets(expected: &str, actual: &str, refusals: &[&str]) -> bool {
    expected == actual
        || expected == REFUSED && refusals.contains(&actual)
        || expected == DENIED_IN_CLI && DENIED_IN_CLI_SEEN.contains(&actual)
        || expected == NO_ANSWERS && NO_ANSWERS_MET_BY.contains(&actual)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn scenario(expect: &str, more: &str) -> Scenario {
        Scenario::parse(Path::new("t.toml"), &crate::scenario::sample("read_file", "prompt", expect, more)).unwrap()
    }

    fn tool_expect(s: &Scenario, i: usize) -> ToolCallExpect {
        match &s.steps[i] {
            Step::ToolCall { expect, .. } => expect.clone(),
            other => panic!("{other:?}"),
        }
    }

    const DECLINED: &str = "{ prompted = true, host_asked = true, answer = \"decline\", model_saw = \"rejected\", server_calls = 0 }";
    const ACCEPTED: &str = "{ prompted = true, host_asked = true, answer = \"accept\", server_calls = 1 }";
    const BY_HOST: &str = "host = \"accept\"\n";

    #[test]
    fn a_fail_closed_driver_refuses_in_any_form_and_never_asks_the_host() {
        let s = scenario(DECLINED, "");
        let e = tool_expect(&expectations(&s, Design::FailClosed), 0);
        assert_eq!((e.host_asked, e.answer.as_deref(), e.model_saw.as_deref(), e.server_calls), (Some(false), Some(REFUSED), Some(REFUSED), Some(0)));
        assert_eq!(tool_expect(&expectations(&s, Design::HostPrompts), 0), tool_expect(&s, 0));
        assert!(meets(REFUSED, "cancel", REFUSALS) && !meets(REFUSED, "accept", REFUSALS) && !meets("decline", "cancel", REFUSALS));
    }

    #[test]
    fn a_fail_closed_driver_may_refuse_user_input_but_never_invent_answers() {
        let user_input = "\n[[steps]]\nkind = \"request\"\nrequest = \"user_input\"\nexpect = { host_asked = false, answer = \"empty-answers\" }\n";
        let text = crate::scenario::sample("read_file", "prompt", DECLINED, user_input).replace("[policy]", "not_in_exec = \"requests\"\n[policy]");
        let s = Scenario::parse(Path::new("t.toml"), &text).unwrap();
        let answer = |d| match &expectations(&s, d).steps[1] {
            Step::Request { expect, .. } => expect.answer.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(answer(Design::FailClosed).as_deref(), Some(NO_ANSWERS));
        assert_eq!(answer(Design::HostPrompts).as_deref(), Some("empty-answers"));
        assert!(meets(NO_ANSWERS, "error", REFUSALS) && meets(NO_ANSWERS, "empty-answers", REFUSALS));
        assert!(!meets(NO_ANSWERS, "answered", REFUSALS) && !meets(NO_ANSWERS, "malformed", REFUSALS));
    }

    #[test]
    fn exec_prompts_nobody_and_fails_refused_calls_in_the_cli() {
        let s = scenario(DECLINED, "");
        let e = tool_expect(&expectations(&s, Design::Exec), 0);
        assert_eq!((e.prompted, e.host_asked, e.answer.as_deref(), e.persisted), (Some(false), Some(false), None, None));
        assert_eq!((e.model_saw.as_deref(), e.server_calls), (Some(DENIED_IN_CLI), Some(0)));
        assert!(meets(DENIED_IN_CLI, "denied-never", REFUSAL_SEEN) && meets(DENIED_IN_CLI, "cancelled", REFUSAL_SEEN));
        assert!(!meets(DENIED_IN_CLI, "rejected", REFUSAL_SEEN) && !meets(DENIED_IN_CLI, "result", REFUSAL_SEEN));
        // What a fail-closed driver accepts itself must run from the config.
        let auto = scenario("{ prompted = true, host_asked = false, answer = \"accept\", server_calls = 1 }", "");
        let e = tool_expect(&expectations(&auto, Design::Exec), 0);
        assert_eq!((e.prompted, e.answer.as_deref(), e.server_calls), (Some(false), None, Some(1)));
        let exec: BTreeSet<String> = [CODEX_EXEC.to_string()].into();
        assert_eq!((Design::of(&exec, Provider::Codex), Design::of(&exec, Provider::Claude)), (Design::Exec, Design::FailClosed));
    }

    #[test]
    fn an_accepted_prompt_needs_its_fail_closed_outcome_written_down() {
        let text = crate::scenario::sample("read_file", "prompt", ACCEPTED, BY_HOST);
        let err = Scenario::parse(Path::new("t.toml"), &text).unwrap_err().to_string();
        assert!(err.contains("step 1") && err.contains("`fail_closed`"), "{err}");
        let s = scenario(ACCEPTED, &format!("{BY_HOST}fail_closed = {{ answer = \"refused\", server_calls = 0 }}\n"));
        assert!(missing_fail_closed(&s).is_empty());
        let e = tool_expect(&expectations(&s, Design::FailClosed), 0);
        assert_eq!((e.prompted, e.host_asked, e.answer.as_deref(), e.server_calls), (Some(true), Some(false), Some(REFUSED), Some(0)));
    }
}
