//! The `claude` command line, parsed the way the real CLI (commander.js)
//! does: `--flag value` and `--flag=value`, variadic flags that take every
//! following argument up to the next flag, and its error texts.

/// What the driver asked for on the command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    pub print: bool,
    /// Positional arguments; the first is the prompt.
    pub positionals: Vec<String>,
    pub mcp_configs: Vec<String>,
    pub strict_mcp_config: bool,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    /// `--settings` (the last one given wins, as in commander).
    pub settings: Option<String>,
    pub setting_sources: Option<String>,
    pub permission_mode: Option<String>,
    pub dangerously_skip_permissions: bool,
    pub permission_prompt_tool: Option<String>,
    pub output_format: Option<String>,
    pub input_format: Option<String>,
    pub verbose: bool,
    pub tools: Option<Vec<String>>,
    pub resume: Option<String>,
    pub continue_session: bool,
    pub fork_session: bool,
    pub session_id: Option<String>,
    pub model: Option<String>,
    /// Wait for the host's initialize before anything else (TS SDK).
    pub await_initialize: bool,
    pub version: bool,
    pub help: bool,
    /// Flags accepted and recorded but without effect in the fake.
    pub ignored: Vec<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Bool,
    Value,
    /// Value that may be left out (`--debug [filter]`).
    OptionalValue,
    Variadic,
}

/// (names, display used in commander's messages, kind)
const FLAGS: &[(&[&str], &str, Kind)] = &[
    (&["-p", "--print"], "-p, --print", Kind::Bool),
    (&["--mcp-config"], "--mcp-config <configs...>", Kind::Variadic),
    (&["--strict-mcp-config"], "--strict-mcp-config", Kind::Bool),
    (&["--allowedTools", "--allowed-tools"], "--allowedTools, --allowed-tools <tools...>", Kind::Variadic),
    (&["--disallowedTools", "--disallowed-tools"], "--disallowedTools, --disallowed-tools <tools...>", Kind::Variadic),
    (&["--settings"], "--settings <file-or-json>", Kind::Value),
    (&["--setting-sources"], "--setting-sources <sources>", Kind::Value),
    (&["--permission-mode"], "--permission-mode <mode>", Kind::Value),
    (&["--dangerously-skip-permissions"], "--dangerously-skip-permissions", Kind::Bool),
    (&["--allow-dangerously-skip-permissions"], "--allow-dangerously-skip-permissions", Kind::Bool),
    (&["--permission-prompt-tool"], "--permission-prompt-tool <tool>", Kind::Value),
    (&["--output-format"], "--output-format <format>", Kind::Value),
    (&["--input-format"], "--input-format <format>", Kind::Value),
    (&["--verbose"], "--verbose", Kind::Bool),
    (&["--tools"], "--tools <tools...>", Kind::Variadic),
    (&["-r", "--resume"], "-r, --resume [value]", Kind::OptionalValue),
    (&["-c", "--continue"], "-c, --continue", Kind::Bool),
    (&["--fork-session"], "--fork-session", Kind::Bool),
    (&["--session-id"], "--session-id <uuid>", Kind::Value),
    (&["--model"], "--model <model>", Kind::Value),
    (&["--fallback-model"], "--fallback-model <model>", Kind::Value),
    (&["--max-turns"], "--max-turns <turns>", Kind::Value),
    (&["--append-system-prompt"], "--append-system-prompt <prompt>", Kind::Value),
    (&["--system-prompt"], "--system-prompt <prompt>", Kind::Value),
    (&["--add-dir"], "--add-dir <directories...>", Kind::Variadic),
    (&["--include-partial-messages"], "--include-partial-messages", Kind::Bool),
    (&["--replay-user-messages"], "--replay-user-messages", Kind::Bool),
    (&["-d", "--debug"], "-d, --debug [filter]", Kind::OptionalValue),
    (&["--mcp-debug"], "--mcp-debug", Kind::Bool),
    (&["--await-initialize"], "--await-initialize", Kind::Bool),
    (&["-v", "--version"], "-v, --version", Kind::Bool),
    (&["-h", "--help"], "-h, --help", Kind::Bool),
];

pub const OUTPUT_FORMATS: [&str; 3] = ["text", "json", "stream-json"];
pub const INPUT_FORMATS: [&str; 2] = ["text", "stream-json"];
/// `--permission-mode` choices as the real CLI lists them; "default" is
/// accepted too, without being listed.
pub const PERMISSION_MODES: [&str; 6] = ["acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan"];

/// Parses the driver's arguments. Errors are the real CLI's messages.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut i = 0;
    let mut only_positionals = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if only_positionals || !arg.starts_with('-') || arg == "-" {
            o.positionals.push(arg.clone());
            continue;
        }
        if arg == "--" {
            only_positionals = true;
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let Some(&(names, display, kind)) = FLAGS.iter().find(|(names, _, _)| names.contains(&name)) else {
            return Err(format!("error: unknown option '{arg}'"));
        };
        let canonical = names.last().copied().unwrap_or(name);
        let mut values: Vec<String> = Vec::new();
        match kind {
            Kind::Bool => {
                if inline.is_some() {
                    return Err(format!("error: option '{display}' does not take an argument"));
                }
            }
            Kind::Value => match inline {
                Some(v) => values.push(v),
                None => match args.get(i) {
                    Some(v) if !looks_like_flag(v) => {
                        values.push(v.clone());
                        i += 1;
                    }
                    _ => return Err(format!("error: option '{display}' argument missing")),
                },
            },
            Kind::OptionalValue => match inline {
                Some(v) => values.push(v),
                None => {
                    if let Some(v) = args.get(i).filter(|v| !looks_like_flag(v)) {
                        values.push(v.clone());
                        i += 1;
                    }
                }
            },
            Kind::Variadic => {
                if let Some(v) = inline {
                    values.push(v);
                }
                while let Some(v) = args.get(i).filter(|v| !looks_like_flag(v)) {
                    values.push(v.clone());
                    i += 1;
                }
                if values.is_empty() {
                    return Err(format!("error: option '{display}' argument missing"));
                }
            }
        }
        let one = || values.last().cloned();
        match canonical {
            "--print" => o.print = true,
            "--mcp-config" => o.mcp_configs.extend(values),
            "--strict-mcp-config" => o.strict_mcp_config = true,
            "--allowed-tools" => o.allowed_tools.extend(values),
            "--disallowed-tools" => o.disallowed_tools.extend(values),
            "--settings" => o.settings = one(),
            "--setting-sources" => o.setting_sources = one(),
            "--permission-mode" => {
                let mode = one().unwrap_or_default();
                if mode != "default" && !PERMISSION_MODES.contains(&mode.as_str()) {
                    return Err(invalid_choice(display, &mode, &PERMISSION_MODES));
                }
                o.permission_mode = Some(mode);
            }
            "--dangerously-skip-permissions" => o.dangerously_skip_permissions = true,
            "--permission-prompt-tool" => o.permission_prompt_tool = one(),
            "--output-format" => {
                let f = one().unwrap_or_default();
                if !OUTPUT_FORMATS.contains(&f.as_str()) {
                    return Err(invalid_choice(display, &f, &OUTPUT_FORMATS));
                }
                o.output_format = Some(f);
            }
            "--input-format" => {
                let f = one().unwrap_or_default();
                if !INPUT_FORMATS.contains(&f.as_str()) {
                    return Err(invalid_choice(display, &f, &INPUT_FORMATS));
                }
                o.input_format = Some(f);
            }
            "--verbose" => o.verbose = true,
            "--tools" => o.tools.get_or_insert_with(Vec::new).extend(values),
            "--resume" => o.resume = Some(one().unwrap_or_default()),
            "--continue" => o.continue_session = true,
            "--fork-session" => o.fork_session = true,
            "--session-id" => o.session_id = one(),
            "--model" => o.model = one(),
            "--await-initialize" => o.await_initialize = true,
            "--version" => o.version = true,
            "--help" => o.help = true,
            _ => o.ignored.push(canonical.to_string()),
        }
    }
    Ok(o)
}

/// commander treats anything starting with `-` (but a lone `-`) as an option.
fn looks_like_flag(v: &str) -> bool {
    v.starts_with('-') && v != "-"
}

fn invalid_choice(display: &str, got: &str, choices: &[&str]) -> String {
    format!("error: option '{display}' argument '{got}' is invalid. Allowed choices are {}.", choices.join(", "))
}

/// Splits tool-list values the way the real CLI does: commas and spaces both
/// separate entries; a `(...)` suffix may contain either.
pub fn split_tool_list(values: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for value in values {
        let mut cur = String::new();
        let mut depth = 0usize;
        for ch in value.chars() {
            match ch {
                '(' => {
                    depth += 1;
                    cur.push(ch);
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    cur.push(ch);
                }
                ',' | ' ' | '\t' | '\n' if depth == 0 => {
                    if !cur.trim().is_empty() {
                        out.push(cur.trim().to_string());
                    }
                    cur.clear();
                }
                _ => cur.push(ch),
            }
        }
        if !cur.trim().is_empty() {
            out.push(cur.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn flags_values_and_variadics() {
        let o = parse(&args(&[
            "-p", "hello", "--output-format", "stream-json", "--verbose", "--mcp-config", "a.json", "{\"mcpServers\":{}}",
            "--allowedTools", "mcp__a__b,mcp__c", "mcp__d", "--disallowed-tools=mcp__x", "--permission-mode", "plan",
            "--resume",
        ]))
        .unwrap();
        assert!(o.print && o.verbose);
        assert_eq!(o.positionals, vec!["hello"]);
        assert_eq!(o.mcp_configs.len(), 2);
        assert_eq!(split_tool_list(&o.allowed_tools), vec!["mcp__a__b", "mcp__c", "mcp__d"]);
        assert_eq!(o.disallowed_tools, vec!["mcp__x"]);
        assert_eq!(o.permission_mode.as_deref(), Some("plan"));
        assert_eq!(o.resume.as_deref(), Some(""));
    }

    #[test]
    fn real_error_texts() {
        assert_eq!(parse(&args(&["-p", "x", "--bogus-flag"])).unwrap_err(), "error: unknown option '--bogus-flag'");
        assert_eq!(parse(&args(&["-p", "x", "--model"])).unwrap_err(), "error: option '--model <model>' argument missing");
        assert_eq!(
            parse(&args(&["--allowedTools"])).unwrap_err(),
            "error: option '--allowedTools, --allowed-tools <tools...>' argument missing"
        );
        assert_eq!(
            parse(&args(&["--output-format", "xml"])).unwrap_err(),
            "error: option '--output-format <format>' argument 'xml' is invalid. Allowed choices are text, json, stream-json."
        );
        assert!(parse(&args(&["--permission-mode", "bogus"])).unwrap_err().contains("acceptEdits, auto, bypassPermissions, manual, dontAsk, plan."));
        assert!(parse(&args(&["--permission-mode", "default"])).is_ok());
    }

    #[test]
    fn tool_lists_split_on_commas_and_spaces() {
        assert_eq!(
            split_tool_list(&args(&["mcp__a__b mcp__a__c,Bash(git log, git diff)", " "])),
            vec!["mcp__a__b", "mcp__a__c", "Bash(git log, git diff)"]
        );
    }
}
