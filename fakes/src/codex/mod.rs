//! Fake `codex app-server`: speaks the app-server JSON-RPC protocol on stdio,
//! reads the real config sources, plays a scripted model and applies the
//! approval logic of the Codex version it simulates.

pub mod approval;
pub mod config;
pub mod effective;
pub mod exec;
pub mod profile;
mod server;
pub use server::{decision_answer, elicitation_answer, permissions_answer, user_input_answer};

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::wire::Recorder;

/// Entry point of the `fake-codex` executable. The per-run wrapper passes
/// `--run SCRIPT` first; everything after is what the driver passed.
pub fn main_with_args(args: Vec<String>) -> i32 {
    let argv: Vec<String> = args.iter().skip(2).cloned().collect();
    let mut script_path = None;
    let mut overrides = Vec::new();
    let mut subcommand = None;
    let mut it = args.into_iter();
    let mut show_version = false;
    let mut exec_argv = None;
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--run" => script_path = it.next().map(PathBuf::from),
            "-c" | "--config" => match it.next() {
                Some(v) => overrides.push(v),
                None => return usage("-c needs a key=value"),
            },
            "--listen" => match it.next().as_deref() {
                Some("stdio://") => {}
                Some(other) => return usage(&format!("--listen {other}: only stdio:// is supported")),
                None => return usage("--listen needs a URL"),
            },
            "--version" | "-V" => show_version = true,
            s if s.starts_with("-c") && s.len() > 2 => overrides.push(s[2..].to_string()),
            s if s.starts_with("--config=") => overrides.push(s["--config=".len()..].to_string()),
            "app-server" if subcommand.is_none() => subcommand = Some(arg),
            // Everything after `exec` is exec's own argv.
            "exec" if subcommand.is_none() => {
                exec_argv = Some(it.by_ref().collect::<Vec<_>>());
                subcommand = Some(arg);
            }
            other => return usage(&format!("unexpected argument '{other}'")),
        }
    }
    let Some(script_path) = script_path else {
        return usage("missing --run SCRIPT (the fake is started through its per-run wrapper)");
    };
    let (script, version) = match crate::script::Script::load_versioned(&script_path) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("fake-codex: {e}");
            return 2;
        }
    };
    if show_version {
        println!("{}", profile::Profile { version }.version_line());
        return 0;
    }
    if let Some(exec_argv) = exec_argv {
        return exec::run(profile::Profile { version }, script, overrides, &exec_argv, &argv);
    }
    if subcommand.is_none() {
        return usage("this fake only implements `codex app-server` and `codex exec --json`");
    }
    let rec = Recorder::open(&script.transcript).unwrap_or_else(|_| Recorder::none()).for_process(std::process::id());
    let env: BTreeMap<String, String> = std::env::vars().collect();
    rec.record(&serde_json::json!({
        "event": "launch", "pid": std::process::id(), "version": version.to_string(),
        "argv": argv, "overrides": overrides,
        "codex_home_set": env.contains_key("CODEX_HOME"),
    }));
    let home = env
        .get("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| env.get("HOME").map(|h| PathBuf::from(h).join(".codex")))
        .unwrap_or_else(|| PathBuf::from(".codex"));
    let base = match config::BaseConfig::load(&home, &overrides) {
        Ok(b) => b,
        Err(e) => {
            // Measured: a bad -c value ends the process before initialize.
            eprintln!("{e}");
            rec.record(&serde_json::json!({"event": "exit", "code": 1, "reason": e}));
            return 1;
        }
    };
    server::Server::new(profile::Profile { version }, script, rec, base, env).run()
}

fn usage(msg: &str) -> i32 {
    eprintln!("error: {msg}\n\nUsage: codex [-c key=value]... app-server [--listen stdio://]");
    2
}
