//! The Codex projection of a [`ServerSet`]: config.toml tables, with each
//! per-tool policy as exactly `[mcp_servers.<server>.tools.<tool>]
//! approval_mode`. Secrets stay out: HTTP servers name their env var only.

use std::fmt::Write;

use crate::spec::{GlobalPolicy, ServerSet, Transport};

pub fn config_toml(set: &ServerSet) -> String {
    let mut out = String::from("# Written by the reference driver; rewritten on every launch.\n");
    for server in set.servers() {
        let name = key(&server.name);
        let _ = writeln!(out, "\n[mcp_servers.{name}]");
        match &server.transport {
            Transport::Stdio { command, args, env } => {
                let _ = writeln!(out, "command = {}", string(command));
                let args: Vec<String> = args.iter().map(|a| string(a)).collect();
                let _ = writeln!(out, "args = [{}]", args.join(", "));
                if !env.is_empty() {
                    let pairs: Vec<String> = env.iter().map(|(k, v)| format!("{} = {}", key(k), string(v))).collect();
                    let _ = writeln!(out, "env = {{ {} }}", pairs.join(", "));
                }
            }
            Transport::Http { url, bearer_token_env } => {
                let _ = writeln!(out, "url = {}", string(url));
                if let Some(var) = bearer_token_env {
                    let _ = writeln!(out, "bearer_token_env_var = {}", string(var));
                }
            }
        }
        for (tool, policy) in &server.tools {
            let _ = writeln!(out, "\n[mcp_servers.{name}.tools.{}]\napproval_mode = \"{}\"", key(tool), policy.as_str());
        }
    }
    // Codex snapshots the shell's environment into CODEX_HOME, and with it
    // the bearer secrets the driver hands the process: measured on 0.171.0.
    out.push_str("\n[features]\nshell_snapshot = false\n");
    out
}

/// Global `auto-approve` as exec can hold it: each server's tools run
/// without approval unless their own table says `prompt`.
pub fn exec_args(set: &ServerSet, global: GlobalPolicy) -> Vec<String> {
    match global {
        GlobalPolicy::Ask => Vec::new(),
        GlobalPolicy::AutoApprove => set
            .servers()
            .flat_map(|s| ["-c".to_string(), format!("mcp_servers.{}.default_tools_approval_mode=\"approve\"", s.name)])
            .collect(),
    }
}

/// A bare TOML key when possible, else a quoted one (tool names may hold dots).
fn key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        k.to_string()
    } else {
        string(k)
    }
}

fn string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}
