//! Reading scenario files: TOML parsing with unknown keys rejected, the
//! cross-field checks serde cannot make, and every error located as
//! `file:line:col`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fakes::version::VersionRange;

use super::*;

/// A scenario file that could not be used, located as precisely as known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.path.display(), self.line, self.column, self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// A file or directory that could not be read at all (no position).
    pub fn unreadable(path: &Path, message: String) -> ScenarioError {
        ScenarioError { path: path.to_path_buf(), line: 0, column: 0, message }
    }
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| ScenarioError::unreadable(path, format!("cannot read: {e}")))?;
        Scenario::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let mut scenario: Scenario = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            ScenarioError { path: path.to_path_buf(), line, column, message: e.message().trim().to_string() }
        })?;
        scenario.path = path.to_path_buf();
        scenario.validate().map_err(|(needle, message)| {
            let (line, column) = locate(text, &needle);
            ScenarioError { path: path.to_path_buf(), line, column, message }
        })?;
        Ok(scenario)
    }

    pub fn version_range(&self) -> VersionRange {
        self.versions.parse().unwrap_or_else(|_| VersionRange::any())
    }

    pub fn server(&self, name: &str) -> Option<&ServerDecl> {
        self.servers.iter().find(|s| s.name.trim() == name.trim())
    }

    /// Checks what serde cannot: references between fields. Errors carry a
    /// snippet of the file to locate them by.
    fn validate(&self) -> Result<(), (String, String)> {
        fn err<T>(needle: &str, msg: String) -> Result<T, (String, String)> {
            Err((needle.to_string(), msg))
        }
        if self.id.is_empty() || !self.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            return err("id", format!("field `id`: `{}` is not a slug of [a-z0-9-]", self.id));
        }
        if self.covers.is_empty() {
            return err("covers", "field `covers`: list at least one criterion".into());
        }
        for tag in &self.covers {
            if !criteria::is_criterion(tag) {
                return err(tag, format!("field `covers`: unknown criterion `{tag}` (known: {})", criteria::tags().join(", ")));
            }
        }
        if let Err(e) = self.versions.parse::<VersionRange>() {
            return err("versions", format!("field `versions`: {e}"));
        }
        if !["ask", "auto-approve"].contains(&self.policy.global.as_str()) {
            return err("global", format!("field `policy.global`: `{}` is not ask or auto-approve", self.policy.global));
        }
        if self.caught_by.is_empty() {
            return err("caught_by", "field `caught_by`: name at least one mutant driver that fails this scenario".into());
        }
        for s in &self.servers {
            if s.reason.trim().is_empty() {
                return err(&s.name, format!("server `{}`: field `reason` is empty", s.name));
            }
            if s.bearer_token_env.is_some() && s.transport != TransportKind::Http {
                return err(&s.name, format!("server `{}`: `bearer_token_env` needs transport = \"http\"", s.name));
            }
            if self.launch.error.is_none() {
                for (tool, p) in &s.tools {
                    if !["prompt", "approve"].contains(&p.approval_mode.as_str()) {
                        return err(
                            &p.approval_mode,
                            format!("server `{}` tool `{tool}`: approval_mode `{}` is not prompt or approve (only a scenario expecting a launch error may use it)", s.name, p.approval_mode),
                        );
                    }
                }
            }
        }
        if self.provider != Provider::Codex
            && (self.provider_saw.approval_policy.is_some() || self.provider_saw.experimental_api.is_some())
        {
            return err("provider_saw", "`provider_saw` is only checked for codex".into());
        }
        if self.launch.error.is_some() && !self.steps.is_empty() {
            return err("steps", "a scenario expecting a launch error has no steps".into());
        }
        if self.launch.error.is_none() && self.steps.is_empty() {
            return err("id", "field `steps`: a scenario needs steps or `launch.error`".into());
        }
        for c in &self.requires {
            if !super::is_capability(c) {
                return err(c, format!("field `requires`: unknown capability `{c}` (known: {})", super::capability_names()));
            }
        }
        if let Some(&n) = super::design::missing_fail_closed(self).first() {
            let needle = match &self.steps[n - 1] {
                Step::ToolCall { tool, .. } => tool.clone(),
                _ => "request".to_string(),
            };
            return err(
                &needle,
                format!("step {n}: a fail-closed driver refuses this prompt itself (or, on Claude Code, is never asked): say what it then expects in `fail_closed`"),
            );
        }
        let mut labels = BTreeSet::new();
        for (i, step) in self.steps.iter().enumerate() {
            let n = i + 1;
            let need_server = |name: &str| match self.server(name) {
                Some(s) => Ok(s),
                None => err(name, format!("step {n}: no server `{name}` is declared")),
            };
            match step {
                Step::ToolCall { server, tool, expect, .. } => {
                    match &self.bridge {
                        Some(b) if b.server.trim() == server.trim() => {
                            if !b.tools.contains_key(tool.trim()) {
                                return err(tool, format!("step {n}: the bridge has no host tool `{tool}`"));
                            }
                        }
                        _ => {
                            let s = need_server(server)?;
                            let exposed = match &self.gateway {
                                Some(g) if g.server.trim() == s.name.trim() => gateway_catalog(g),
                                _ => catalog(s),
                            };
                            if !exposed.contains_key(tool.trim()) {
                                return err(tool, format!("step {n}: server `{server}` does not expose tool `{tool}` (add it to its catalog)"));
                            }
                        }
                    }
                    if expect.is_empty() {
                        return err(tool, format!("step {n}: field `expect` checks nothing"));
                    }
                }
                Step::Request { .. } | Step::RawRequest { .. } if self.provider != Provider::Codex => {
                    return err("request", format!("step {n}: provider requests are only scripted for codex"));
                }
                Step::Request { request, server, expect, .. } => {
                    let needs_server = matches!(request, RequestKind::UrlElicitation | RequestKind::FormElicitation);
                    match (needs_server, server) {
                        (true, Some(s)) => {
                            need_server(s)?;
                        }
                        (true, None) => return err("request", format!("step {n}: an elicitation names its `server`")),
                        _ => {}
                    }
                    if expect.answer.is_none() && expect.host_asked.is_none() {
                        return err("request", format!("step {n}: field `expect` checks nothing"));
                    }
                }
                Step::RawRequest { method, expect, .. } => {
                    if expect.answer.is_none() && expect.host_asked.is_none() {
                        return err(method, format!("step {n}: field `expect` checks nothing"));
                    }
                }
                Step::Attach { server } | Step::Detach { server } => {
                    if need_server(server)?.attached {
                        return err(server, format!("step {n}: server `{server}` is not declared with attached = false"));
                    }
                }
                Step::RotateSecret { server } => {
                    if need_server(server)?.bearer_token_env.is_none() {
                        return err(server, format!("step {n}: server `{server}` has no bearer_token_env"));
                    }
                }
                Step::SetPolicy { server, .. } => {
                    need_server(server)?;
                }
                Step::Fingerprint { label, expect } => {
                    for other in [&expect.same_as, &expect.differs_from].into_iter().flatten() {
                        if !labels.contains(other) {
                            return err(other, format!("step {n}: no earlier fingerprint is labelled `{other}`"));
                        }
                    }
                    labels.insert(label.clone());
                }
                Step::SetCustomParameters { target, .. } => match &self.gateway {
                    Some(g) if g.catalog.iter().any(|r| &r.target == target) => {}
                    _ => return err(target, format!("step {n}: no gateway catalog row for target `{target}`")),
                },
                Step::Resume {} | Step::ReorderServers {} => {}
            }
        }
        Ok(())
    }
}

impl ToolCallExpect {
    fn is_empty(&self) -> bool {
        *self == ToolCallExpect::default()
    }
}

/// Best-effort position of the first occurrence of `needle` in the text.
fn locate(text: &str, needle: &str) -> (usize, usize) {
    match text.find(needle) {
        Some(offset) if !needle.is_empty() => line_col(text, offset),
        _ => (1, 1),
    }
}


/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// All `*.toml` scenario files below `dir`, sorted by path.
pub fn discover(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> String {
        super::super::sample("read_file", "approve", "{ server_calls = 1 }", "")
    }

    fn err(text: &str) -> String {
        Scenario::parse(Path::new("s.toml"), text).unwrap_err().to_string()
    }

    #[test]
    fn good_scenario_parses() {
        let s = Scenario::parse(Path::new("s.toml"), &good()).unwrap();
        assert_eq!(s.steps.len(), 1);
        assert_eq!(catalog(&s.servers[0]).len(), 1);
    }

    #[test]
    fn errors_name_file_line_column_and_field() {
        let e = err(&good().replace("reason = \"r\"", "reason = \"r\"\ncolour = \"blue\""));
        assert!(e.starts_with("s.toml:14:1: unknown field `colour`"), "{e}");
        let e = err(&good().replace("transport = \"stdio\"", "transport = \"pigeon\""));
        assert!(e.starts_with("s.toml:12:13:") && e.contains("pigeon"), "{e}");
        let e = err(&good().replace("kind = \"tool_call\"", "kind = \"teleport\""));
        assert!(e.starts_with("s.toml:17:8:") && e.contains("teleport"), "{e}");
        let e = err(&good().replace("expect = { server_calls = 1 }", "expect = { server_calls = 1, vibes = true }"));
        // Inside a tagged step the position is the step's table header.
        assert!(e.starts_with("s.toml:16:1:") && e.contains("`vibes`"), "{e}");
        let e = err(&good().replace("server = \"files\"", "server = \"nope\""));
        assert!(e.starts_with("s.toml:") && e.contains("no server `nope`"), "{e}");
        let e = err(&good().replace("covers = [\"AC-1\"]", "covers = [\"AC-99\"]"));
        assert!(e.starts_with("s.toml:3:") && e.contains("AC-99"), "{e}");
        let e = err(&good().replace("caught_by = [\"drop-policy\"]", "caught_by = []"));
        assert!(e.contains("caught_by"), "{e}");
        let e = err(&good().replace("approval_mode = \"approve\"", "approval_mode = \"sometimes\""));
        assert!(e.starts_with("s.toml:14:34:") && e.contains("sometimes"), "{e}");
        let e = err(&good().replace("expect = { server_calls = 1 }", "expect = {}"));
        assert!(e.contains("checks nothing"), "{e}");
        let e = err("id = [");
        assert!(e.starts_with("s.toml:1:"), "{e}");
    }
}

