//! Fake `claude` (Claude Code CLI) in print mode: takes the real command
//! line, reads the real config sources, connects the configured MCP servers
//! the way the simulated version does, plays one scripted model turn per
//! process and applies the measured permission logic to every tool call
//! (../shared/PROVIDERS.md, section "Claude Code"). Output is the real
//! `--output-format` shape; everything said on stdout, and one outcome per
//! tool call, goes to the run's transcript for the judge.

pub mod cli;
pub mod config;
pub mod elicitation;
mod output;
pub mod can_use_tool;
mod hooks;
mod inventory;
mod host;
mod process;
pub mod profile;
pub mod render;
mod resume;
pub mod sdk;
mod sdk_call;
mod sdk_link;
mod sdk_servers;
pub mod rules;
mod servers;
mod session;
mod stream;
mod texts;
use crate::uuid;

use std::path::PathBuf;

use serde_json::json;

use crate::script::Script;
use crate::wire::Recorder;

/// Entry point of the `fake-claude` executable. The per-run wrapper passes
/// `--run SCRIPT` first; everything after is what the driver passed.
pub fn main_with_args(args: Vec<String>) -> i32 {
    let (script_path, argv) = match args.split_first() {
        Some((first, rest)) if first == "--run" => match rest.split_first() {
            Some((path, rest)) => (Some(PathBuf::from(path)), rest.to_vec()),
            None => (None, Vec::new()),
        },
        _ => (None, args),
    };
    let Some(script_path) = script_path else {
        eprintln!("fake-claude: missing --run SCRIPT (the fake is started through its per-run wrapper)");
        return 2;
    };
    let (script, version) = match Script::load_versioned(&script_path) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("fake-claude: {e}");
            return 2;
        }
    };
    let rec = Recorder::open(&script.transcript).unwrap_or_else(|_| Recorder::none()).for_process(std::process::id());
    // argv as given: a driver that puts a secret on the command line is
    // caught by the harness finding it here.
    rec.record(&json!({"event": "launch", "pid": std::process::id(), "version": version.to_string(), "argv": argv}));
    let code = match process::prepare(profile::Profile { version }, &script, rec.clone(), &argv) {
        Err(code) => code,
        Ok(p) if p.sdk => sdk::run(p.launch, p.out, p.dynamic, script, p.state),
        Ok(p) => process::print(p, script),
    };
    rec.record(&json!({"event": "exit", "code": code}));
    code
}
