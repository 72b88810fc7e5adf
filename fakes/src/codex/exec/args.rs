//! `codex exec` argv as the fake accepts it: the flags the Codex SDK passes
//! (../shared/SDK-FACTS.md part B) and `exec resume <id>|--last`. Errors are
//! clap's, as the real CLI prints them (measured on 0.146.0 and 0.171.0).

/// What `codex exec [OPTIONS] [resume ...] [PROMPT]` asked for.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ExecArgs {
    /// `--json` or `--experimental-json` (the same output on every measured
    /// version); without it the real CLI prints for humans, which the fake
    /// does not simulate.
    pub json: bool,
    pub overrides: Vec<String>,
    pub sandbox: Option<String>,
    pub cd: Option<String>,
    pub model: Option<String>,
    pub add_dirs: Vec<String>,
    pub images: Vec<String>,
    pub skip_git_repo_check: bool,
    pub resume: Option<Resume>,
    /// The positional prompt; `None` or `-` reads stdin.
    pub prompt: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Resume {
    Id(String),
    Last,
}

/// The sandbox modes `--sandbox` takes.
pub const SANDBOX_MODES: [&str; 3] = ["read-only", "workspace-write", "danger-full-access"];

/// Flags that take a value, with their short forms, and flags that do not.
/// Ones the fake ignores are still accepted, as the real CLI takes them.
const VALUED: [&str; 20] = [
    "-c", "--config", "-s", "--sandbox", "-C", "--cd", "-m", "--model", "--add-dir", "-i", "--image", "-p", "--profile",
    "--color", "-o", "--output-last-message", "--output-schema", "--enable", "--disable", "--local-provider",
];
const SWITCHES: [&str; 12] = [
    "--json", "--experimental-json", "--skip-git-repo-check", "--last", "--all", "--full-auto", "--ephemeral",
    "--dangerously-bypass-approvals-and-sandbox", "--oss", "--ignore-user-config", "--ignore-rules", "--strict-config",
];

/// Parses everything after `exec`. `Err((text, code))` is what the real
/// CLI prints on stderr and its exit code.
pub fn parse(argv: &[String]) -> Result<ExecArgs, (String, i32)> {
    let mut a = ExecArgs::default();
    let mut positionals = Vec::new();
    let mut last = false;
    let mut it = argv.iter().cloned().peekable();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if VALUED.contains(&flag.as_str()) {
            let inline_given = inline.is_some();
            let Some(value) = inline.or_else(|| it.next()) else {
                return Err(missing_value(&flag));
            };
            match flag.as_str() {
                "-c" | "--config" => a.overrides.push(value),
                "-s" | "--sandbox" => {
                    if !SANDBOX_MODES.contains(&value.as_str()) {
                        return Err(invalid_sandbox(&value));
                    }
                    a.sandbox = Some(value)
                }
                "-C" | "--cd" => a.cd = Some(value),
                "-m" | "--model" => a.model = Some(value),
                "--add-dir" => a.add_dirs.push(value),
                "-i" | "--image" => {
                    a.images.push(value);
                    // Before `resume`, `--image <FILE>...` takes every value up to
                    // the next flag, the prompt too (measured on 0.146.0 and 0.171.0:
                    // `--image x.png hi` reads the prompt from stdin); after it, one.
                    if positionals.is_empty() && !inline_given {
                        while let Some(next) = peek_value(&mut it) {
                            a.images.push(next);
                        }
                    }
                }
                _ => {}
            }
        } else if SWITCHES.contains(&flag.as_str()) && inline.is_none() {
            match flag.as_str() {
                "--json" | "--experimental-json" => a.json = true,
                "--skip-git-repo-check" => a.skip_git_repo_check = true,
                "--last" => last = true,
                "--dangerously-bypass-approvals-and-sandbox" => a.sandbox = Some("danger-full-access".into()),
                _ => {}
            }
        } else if arg.starts_with('-') && arg != "-" {
            return Err(unexpected(&arg));
        } else {
            positionals.push(arg);
        }
    }
    let mut rest = positionals.into_iter();
    match rest.next() {
        Some(first) if first == "resume" => {
            // `resume --last [PROMPT]` or `resume <SESSION_ID> [PROMPT]`.
            a.resume = Some(if last { Resume::Last } else { Resume::Id(rest.next().ok_or_else(|| unexpected("resume"))?) });
            a.prompt = rest.next();
        }
        first => a.prompt = first,
    }
    if let Some(extra) = rest.next() {
        return Err(unexpected(&extra));
    }
    Ok(a)
}

/// The next argument if it is not a flag.
fn peek_value(it: &mut std::iter::Peekable<impl Iterator<Item = String>>) -> Option<String> {
    it.next_if(|next| !next.starts_with('-'))
}

const USAGE: &str = "Usage: codex exec [OPTIONS] [PROMPT]\n       codex exec [OPTIONS] <COMMAND> [ARGS]\n\nFor more information, try '--help'.\n";

/// An unknown flag or a surplus argument: clap's text, exit 2 (measured on
/// 0.146.0 and 0.171.0 with `exec --bogus`).
pub fn unexpected(arg: &str) -> (String, i32) {
    (format!("error: unexpected argument '{arg}' found\n\n  tip: to pass '{arg}' as a value, use '-- {arg}'\n\n{USAGE}"), 2)
}

/// `--sandbox bogus` (measured on 0.171.0).
pub fn invalid_sandbox(value: &str) -> (String, i32) {
    let modes = SANDBOX_MODES.join(", ");
    (format!("error: invalid value '{value}' for '--sandbox <SANDBOX_MODE>'\n  [possible values: {modes}]\n\nFor more information, try '--help'.\n"), 2)
}

/// A valued flag at the end of argv (clap's wording; not measured).
fn missing_value(flag: &str) -> (String, i32) {
    (format!("error: a value is required for '{flag}' but none was supplied\n\nFor more information, try '--help'.\n"), 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<ExecArgs, (String, i32)> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_sdk_argv() {
        let a = p(&["--experimental-json", "--config", "approval_policy=\"on-request\"", "--model", "mock-model", "--sandbox", "read-only",
                    "--cd", "/w", "--skip-git-repo-check", "resume", "T1", "--image", "x.png"]).unwrap();
        assert!(a.json && a.skip_git_repo_check);
        assert_eq!(a.overrides, ["approval_policy=\"on-request\""]);
        assert_eq!((a.sandbox.as_deref(), a.cd.as_deref(), a.model.as_deref()), (Some("read-only"), Some("/w"), Some("mock-model")));
        assert_eq!(a.resume, Some(Resume::Id("T1".into())));
        assert_eq!((a.images.len(), a.prompt), (1, None));
        assert_eq!(p(&["--json", "resume", "--last", "again"]).unwrap().resume, Some(Resume::Last));
        assert_eq!(p(&["--json", "resume", "--last", "again"]).unwrap().prompt.as_deref(), Some("again"));
        let a = p(&["--image", "a.png", "hi", "--json"]).unwrap();
        assert_eq!((a.images.len(), a.prompt), (2, None));
        let a = p(&["resume", "T", "--image", "a.png", "hi"]).unwrap();
        assert_eq!((a.images.len(), a.prompt.as_deref()), (1, Some("hi")));
    }

    #[test]
    fn bad_input() {
        assert_eq!(p(&["--bogus"]).unwrap_err().1, 2);
        assert!(p(&["--bogus"]).unwrap_err().0.starts_with("error: unexpected argument '--bogus' found"));
        assert!(p(&["-s", "nope"]).unwrap_err().0.contains("[possible values: read-only, workspace-write, danger-full-access]"));
        assert_eq!(p(&["a", "b"]).unwrap_err().1, 2);
    }
}
