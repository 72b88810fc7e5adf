//! What serde cannot check in a scenario: closed value sets, references
//! between fields, and rules across them. Each problem names the field path
//! it is about (`steps[2].expect.answer`, indices from 0), which the loader
//! turns into a line and column.

use std::collections::BTreeSet;

use fakes::version::VersionRange;

use super::*;

/// A field path and what is wrong with it.
pub type Problem = (String, String);

/// Every closed value set a scenario's strings are checked against: one list.
pub const GLOBAL_POLICIES: &[&str] = &["ask", "auto-approve"];
pub const APPROVAL_MODES: &[&str] = &["prompt", "approve"];
pub const ANSWERS: &[&str] = &["accept", "decline", "cancel", "error", "refused", "empty-answers", "allow", "deny", "invalid", "none"];
pub const ITEMS: &[&str] = &["completed", "failed", "none"];
pub const MODEL_SAW: &[&str] = &["result", "rejected", "cancelled", "refused", "denied-never", "not-granted", "unsupported", "timeout", "error"];
pub const GATEWAY_APPROVALS: &[&str] = &["required", "none"];
pub const LAUNCH_ERRORS: &[&str] = &["duplicate-conflict", "invalid-name", "invalid-policy", "unsupported-policy", "missing-secret"];
pub const APPROVAL_POLICIES: &[&str] = &["on-request", "on-failure", "untrusted", "granular"];

fn one_of(path: String, value: &str, set: &[&str]) -> Result<(), Problem> {
    if set.contains(&value) {
        Ok(())
    } else {
        Err((path, format!("`{value}` is not one of {}", set.join(", "))))
    }
}

fn fail<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, Problem> {
    Err((path.into(), message.into()))
}

pub fn check(s: &Scenario) -> Result<(), Problem> {
    if s.id.is_empty() || !s.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return fail("id", format!("`{}` is not a slug of [a-z0-9-]", s.id));
    }
    let generated = s.generated.is_some();
    if s.covers.is_empty() && !generated {
        return fail("covers", "list at least one criterion");
    }
    for (i, tag) in s.covers.iter().enumerate() {
        if !criteria::is_criterion(tag) {
            return fail(format!("covers[{i}]"), format!("unknown criterion `{tag}` (known: {})", criteria::tags().join(", ")));
        }
    }
    versions(s)?;
    if s.mcp_tool_timeout_ms.is_some() && s.provider != Provider::Claude {
        return fail("mcp_tool_timeout_ms", "MCP_TOOL_TIMEOUT is Claude Code's");
    }
    one_of("policy.global".into(), &s.policy.global, GLOBAL_POLICIES)?;
    if s.caught_by.is_empty() && !generated {
        return fail("caught_by", "name at least one mutant driver that fails this scenario");
    }
    for (i, c) in s.requires.iter().enumerate() {
        if !is_capability(c) {
            return fail(format!("requires[{i}]"), format!("unknown capability `{c}` (known: {})", capability_names()));
        }
    }
    servers(s)?;
    if let Some(kind) = &s.launch.error {
        one_of("launch.error".into(), kind, LAUNCH_ERRORS)?;
        if !s.steps.is_empty() {
            return fail("steps", "a scenario expecting a launch error has no steps");
        }
    } else if s.steps.is_empty() {
        return fail("id", "a scenario needs `steps` or `launch.error`");
    }
    if s.provider != Provider::Codex && (s.provider_saw.approval_policy.is_some() || s.provider_saw.experimental_api.is_some()) {
        return fail("provider_saw", "only checked for codex");
    }
    if let Some(p) = &s.provider_saw.approval_policy {
        one_of("provider_saw.approval_policy".into(), p, APPROVAL_POLICIES)?;
    }
    gateway(s)?;
    exec(s)?;
    // A generated case expects nothing, of a fail-closed driver neither.
    if let Some(&n) = design::missing_fail_closed(s).first().filter(|_| s.generated.is_none()) {
        return fail(
            format!("steps[{}]", n - 1),
            "a fail-closed driver refuses this prompt itself (or, on Claude Code, is never asked): say what it then expects in `fail_closed`",
        );
    }
    steps(s)
}

/// A range that no simulated version of the provider is in would skip the
/// scenario everywhere, silently.
fn versions(s: &Scenario) -> Result<(), Problem> {
    let range: VersionRange = s.versions.parse().map_err(|e: String| ("versions".to_string(), e))?;
    let measured: &[fakes::version::Version] = match s.provider {
        Provider::Codex => &fakes::codex::profile::MEASURED,
        Provider::Claude => &fakes::claude::profile::MEASURED,
        Provider::Cursor | Provider::Codebuddy => return Ok(()),
    };
    if measured.iter().any(|v| range.contains(*v)) {
        Ok(())
    } else {
        let all: Vec<String> = measured.iter().map(|v| v.to_string()).collect();
        fail("versions", format!("`{}` holds none of the simulated {} versions ({})", s.versions, s.provider.as_str(), all.join(", ")))
    }
}

/// Why step `i`, a request `raised_by` the call of `tool` on `server`,
/// cannot be one: it must be an elicitation of the mode the tool's
/// catalog gives (`elicit_url`: url, else form), the tool must elicit, and
/// a step before it in its turn must call it.
fn raised(s: &Scenario, i: usize, request: RequestKind, server: &str, tool: &str) -> Result<(), String> {
    if !matches!(request, RequestKind::FormElicitation | RequestKind::UrlElicitation) {
        return Err("only a form_elicitation or url_elicitation is raised by a server's tool".into());
    }
    let entry = s.servers.iter().find(|d| d.name.trim() == server.trim()).and_then(|d| d.catalog.as_ref()?.get(tool.trim()));
    let Some(entry) = entry.filter(|c| c.elicits.is_some()) else {
        return Err(format!("`{server}`'s catalog gives tool `{tool}` no `elicits`"));
    };
    match (request, entry.elicit_url.is_some()) {
        (RequestKind::FormElicitation, true) => return Err(format!("`{tool}` elicits in url mode (`elicit_url`): request = \"url_elicitation\"")),
        (RequestKind::UrlElicitation, false) => return Err(format!("`{tool}` elicits a form (no `elicit_url`): request = \"form_elicitation\"")),
        _ => {}
    }
    if super::raising_call(&s.steps, i).is_none() {
        return Err(format!("no step of its turn calls `{server}`'s `{tool}`"));
    }
    Ok(())
}

/// The longest a fake MCP server may take to answer a call.
pub const MAX_DELAY_MS: u64 = 20_000;

fn servers(s: &Scenario) -> Result<(), Problem> {
    for (i, server) in s.servers.iter().enumerate() {
        let at = |field: &str| format!("servers[{i}].{field}");
        if server.reason.trim().is_empty() {
            return fail(at("reason"), "empty: say why the host attaches this server");
        }
        if server.bearer_token_env.is_some() && server.transport != TransportKind::Http {
            return fail(at("bearer_token_env"), "needs transport = \"http\"");
        }
        for (tool, c) in server.catalog.iter().flatten() {
            if c.delay_ms.is_some_and(|ms| ms > MAX_DELAY_MS) {
                return fail(at(&format!("catalog.{tool}.delay_ms")), format!("at most {MAX_DELAY_MS} ms: a trial must end in time"));
            }
            if c.elicits.is_some() && (!matches!(s.provider, Provider::Codex | Provider::Claude) || server.transport != TransportKind::Stdio) {
                // The fake MCP server elicits over stdio only; what the other CLIs do with one is not measured.
                return fail(at(&format!("catalog.{tool}.elicits")), "only a Codex or Claude Code scenario's stdio server elicits");
            }
            if c.elicit_url.is_some() && c.elicits.is_none() {
                return fail(at(&format!("catalog.{tool}.elicit_url")), "needs `elicits`, the message that comes with the page");
            }
        }
        if s.launch.error.is_none() {
            for (tool, p) in &server.tools {
                if !APPROVAL_MODES.contains(&p.approval_mode.as_str()) {
                    return fail(
                        at(&format!("tools.{tool}.approval_mode")),
                        format!("approval_mode `{}` is not prompt or approve (only a scenario expecting a launch error may use it)", p.approval_mode),
                    );
                }
            }
        }
    }
    Ok(())
}

fn gateway(s: &Scenario) -> Result<(), Problem> {
    let Some(g) = &s.gateway else { return Ok(()) };
    if s.server(&g.server).is_none() {
        return fail("gateway.server", format!("no server `{}` is declared", g.server));
    }
    for (i, row) in g.catalog.iter().enumerate() {
        one_of(format!("gateway.catalog[{i}].approval"), &row.approval, GATEWAY_APPROVALS)?;
    }
    Ok(())
}

fn steps(s: &Scenario) -> Result<(), Problem> {
    let mut labels = BTreeSet::new();
    for (i, step) in s.steps.iter().enumerate() {
        let at = |field: &str| format!("steps[{i}].{field}");
        let need_server = |field: &str, name: &str| match s.server(name) {
            Some(decl) => Ok(decl),
            None => fail(at(field), format!("no server `{name}` is declared")),
        };
        match step {
            Step::ToolCall { server, tool, expect, fail_closed, host, host_edits, .. } => {
                if host_edits.is_some() && *host != Some(HostAnswer::Accept) {
                    return fail(at("host_edits"), "the host edits a call's input only when it accepts: add host = \"accept\"");
                }
                if host_edits.is_some() {
                    need_sdk_host(s, &at("host_edits"))?;
                }
                match &s.bridge {
                    Some(b) if b.server.trim() == server.trim() => {
                        if !b.tools.contains_key(tool.trim()) {
                            return fail(at("tool"), format!("the bridge has no host tool `{tool}`"));
                        }
                    }
                    _ => {
                        let decl = need_server("server", server)?;
                        let exposed = match &s.gateway {
                            Some(g) if g.server.trim() == decl.name.trim() => gateway_catalog(g),
                            _ => catalog(decl),
                        };
                        if !exposed.contains_key(tool.trim()) {
                            return fail(at("tool"), format!("server `{server}` does not expose tool `{tool}` (add it to its catalog)"));
                        }
                    }
                }
                if expect.is_empty() && s.generated.is_none() {
                    return fail(at("expect"), "checks nothing");
                }
                tool_expect(s, &at("expect"), expect)?;
                if let Some(over) = fail_closed {
                    tool_expect(s, &at("fail_closed"), over)?;
                }
            }
            // Claude Code's only requests a scenario can raise are its servers' own elicitations.
            Step::Request { raised_by: None, .. } | Step::RawRequest { .. } if s.provider != Provider::Codex => {
                return fail(format!("steps[{i}]"), "provider requests are only scripted for codex (Claude Code: a server's own elicitation, `raised_by`)");
            }
            Step::Request { .. } if !matches!(s.provider, Provider::Codex | Provider::Claude) => {
                return fail(format!("steps[{i}]"), "provider requests are only scripted for codex (Claude Code: a server's own elicitation, `raised_by`)");
            }
            Step::Request { request, server, raised_by, expect, fail_closed, .. } => {
                let needs_server = matches!(request, RequestKind::UrlElicitation | RequestKind::FormElicitation);
                match (needs_server, server) {
                    (true, Some(name)) => {
                        need_server("server", name)?;
                    }
                    (true, None) => return fail(at("request"), "an elicitation names its `server`"),
                    _ => {}
                }
                if let Some(tool) = raised_by {
                    if let Err(why) = raised(s, i, *request, server.as_deref().unwrap_or(""), tool) {
                        return fail(at("raised_by"), why);
                    }
                }
                // A generated case is judged by the comparison, not by `expect`.
                if s.generated.is_none() || expect.answer.is_some() || expect.host_asked.is_some() {
                    request_expect(&at("expect"), expect)?;
                }
                if let Some(over) = fail_closed {
                    if let Some(a) = &over.answer {
                        one_of(at("fail_closed.answer"), a, ANSWERS)?;
                    }
                }
            }
            Step::RawRequest { expect, .. } => request_expect(&at("expect"), expect)?,
            Step::Attach { server } | Step::Detach { server } => {
                if need_server("server", server)?.attached {
                    return fail(at("server"), format!("server `{server}` is not declared with attached = false"));
                }
            }
            Step::RotateSecret { server } => {
                if need_server("server", server)?.bearer_token_env.is_none() {
                    return fail(at("server"), format!("server `{server}` has no bearer_token_env"));
                }
            }
            Step::SetPolicy { server, approval_mode, .. } => {
                need_server("server", server)?;
                if let Some(mode) = approval_mode {
                    one_of(at("approval_mode"), mode, APPROVAL_MODES)?;
                }
            }
            Step::Fingerprint { label, expect } => {
                for (field, other) in [("expect.same_as", &expect.same_as), ("expect.differs_from", &expect.differs_from)] {
                    if let Some(other) = other {
                        if !labels.contains(other) {
                            return fail(at(field), format!("no earlier fingerprint is labelled `{other}`"));
                        }
                    }
                }
                labels.insert(label.clone());
                // A driver without fingerprints cannot play the step: the
                // scenario must say so, so that it is skipped, not failed.
                if !s.requires.iter().any(|r| r == "fingerprint") {
                    return fail(at("label"), "a fingerprint step needs \"fingerprint\" in `requires`");
                }
            }
            Step::SetCustomParameters { target, .. } => match &s.gateway {
                Some(g) if g.catalog.iter().any(|r| &r.target == target) => {}
                _ => return fail(at("target"), format!("no gateway catalog row for target `{target}`")),
            },
            Step::PermissionMode { mode } => {
                if s.provider != Provider::Claude {
                    return fail(format!("steps[{i}]"), "permission modes are Claude Code's");
                }
                one_of(at("mode"), mode, &fakes::claude::profile::SDK_PERMISSION_MODES)?;
                need_sdk_host(s, &at("mode"))?;
            }
            Step::Resume {} | Step::ReorderServers {} => {}
        }
    }
    Ok(())
}

/// A step only an SDK host can play: the scenario must say so, so that
/// A `codex exec` driver has no client for the provider's requests: a Codex
/// scenario that has them says why exec skips it, and one only exec drivers
/// play has none.
fn exec(s: &Scenario) -> Result<(), Problem> {
    let for_exec = s.requires.iter().any(|r| r == design::CODEX_EXEC);
    let requests = s.steps.iter().position(|st| matches!(st, Step::Request { .. } | Step::RawRequest { .. }));
    match (&s.not_in_exec, for_exec) {
        (Some(_), _) if s.provider != Provider::Codex => fail("not_in_exec", "only Codex has an exec mode"),
        (Some(_), true) => fail("not_in_exec", "a scenario that requires \"codex-exec\" is played in exec"),
        (Some(why), false) if why.trim().is_empty() => fail("not_in_exec", "say why exec cannot play it"),
        (None, true) if s.provider != Provider::Codex => fail("requires", "\"codex-exec\" is a Codex mode"),
        (None, true) if requests.is_some() => fail(format!("steps[{}]", requests.unwrap_or(0)), "codex exec has no client to send requests to"),
        (None, false) if s.provider == Provider::Codex && requests.is_some() => fail(
            format!("steps[{}]", requests.unwrap_or(0)),
            "codex exec has no client to send this request to: say why exec drivers skip the scenario in `not_in_exec`",
        ),
        _ => Ok(()),
    }
}

/// other drivers skip it rather than fail it.
fn need_sdk_host(s: &Scenario, at: &str) -> Result<(), Problem> {
    if s.requires.iter().any(|r| r == "sdk-host") {
        Ok(())
    } else {
        fail(at.to_string(), "only an SDK host can play this: add \"sdk-host\" to `requires`")
    }
}

fn tool_expect(s: &Scenario, at: &str, e: &ToolCallExpect) -> Result<(), Problem> {
    if let Some(a) = &e.answer {
        one_of(format!("{at}.answer"), a, ANSWERS)?;
    }
    if let Some(item) = &e.item {
        one_of(format!("{at}.item"), item, ITEMS)?;
    }
    if let Some(saw) = &e.model_saw {
        one_of(format!("{at}.model_saw"), saw, MODEL_SAW)?;
    }
    if let Some(row) = &e.bound_row {
        let rows = s.gateway.iter().flat_map(|g| &g.catalog).map(|r| r.row.as_str());
        if !rows.clone().any(|r| r == row) {
            return fail(format!("{at}.bound_row"), format!("no gateway catalog row `{row}` (rows: {})", rows.collect::<Vec<_>>().join(", ")));
        }
    }
    Ok(())
}

fn request_expect(at: &str, e: &RequestExpect) -> Result<(), Problem> {
    if e.answer.is_none() && e.host_asked.is_none() {
        return fail(at, "checks nothing");
    }
    if let Some(a) = &e.answer {
        one_of(format!("{at}.answer"), a, ANSWERS)?;
    }
    Ok(())
}

impl ToolCallExpect {
    fn is_empty(&self) -> bool {
        *self == ToolCallExpect::default()
    }
}
