//! `relay --log FILE -- PROGRAM ARGS...`: runs a real provider CLI between
//! the driver and itself, passing stdin and stdout through line by line and
//! recording every line, so a real run leaves the same kind of transcript
//! the fakes write. HTTP MCP servers in `--mcp-config` that are not the
//! harness's own (`--own-url`) belong to the driver: the CLI reaches them
//! through a recording proxy (`crate::proxy`).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};

use crate::proxy::Proxy;
use crate::wire::Recorder;

pub fn main_with_args(args: Vec<String>) -> i32 {
    let mut log = None;
    let mut own = Vec::new();
    let mut it = args.into_iter();
    let mut rest = Vec::new();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--log" => log = it.next().map(PathBuf::from),
            "--own-url" => own.extend(it.next()),
            "--" => {
                rest = it.collect();
                break;
            }
            other => {
                eprintln!("relay: unexpected argument `{other}`");
                return 2;
            }
        }
    }
    let (Some(log), Some((program, program_args))) = (log, rest.split_first()) else {
        eprintln!("usage: relay --log FILE [--own-url URL]... -- PROGRAM ARGS...");
        return 2;
    };
    let rec = match Recorder::open(&log) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("relay: {}: {e}", log.display());
            return 2;
        }
    };
    let proxied = Arc::new(OnceLock::new());
    let (args, _proxies) = match proxy_driver_servers(program_args, &own, &proxied) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("relay: cannot start a proxy: {e}");
            return 1;
        }
    };
    let mut command = Command::new(program);
    command.args(&args).stdin(Stdio::piped()).stdout(Stdio::piped());
    // A driver ends its provider by killing it; here it kills the relay, so
    // the CLI dies with it as it would, rather than seeing its input close
    // and shutting down in order (stdio MCP servers then see no EOF).
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("relay: cannot start {program}: {e}");
            return 127;
        }
    };
    // Every line is the child's: its records name it, not the relay.
    let rec = rec.for_process(child.id());
    let _ = proxied.set(rec.clone());
    rec.record(&json!({"event": "launch", "pid": child.id(), "relay_pid": std::process::id(), "argv": program_args}));
    let (Some(mut to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else { return 1 };
    let rec_in = rec.clone();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            rec_in.record(&json!({"dir": "c2s", "msg": parse(&line)}));
            if writeln!(to_child, "{line}").and_then(|_| to_child.flush()).is_err() {
                break;
            }
        }
    });
    let mut out = std::io::stdout().lock();
    for line in BufReader::new(from_child).lines().map_while(Result::ok) {
        rec.record(&json!({"dir": "s2c", "msg": parse(&line)}));
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(1);
    rec.record(&json!({"event": "exit", "code": code}));
    code
}

/// `args` with each driver-owned HTTP server of a JSON `--mcp-config`
/// pointed at a recording proxy, and the proxies (alive while held).
fn proxy_driver_servers(args: &[String], own: &[String], rec: &Arc<OnceLock<Recorder>>) -> std::io::Result<(Vec<String>, Vec<Proxy>)> {
    let mut out = args.to_vec();
    let mut proxies = Vec::new();
    for i in 1..out.len() {
        if out[i - 1] != "--mcp-config" {
            continue;
        }
        let Ok(mut config) = serde_json::from_str::<Value>(&out[i]) else { continue };
        let Some(servers) = config.get_mut("mcpServers").and_then(Value::as_object_mut) else { continue };
        for (name, server) in servers.iter_mut() {
            let Some(url) = server.get("url").and_then(Value::as_str).map(String::from) else { continue };
            if server["type"] != "http" || own.contains(&url) {
                continue;
            }
            let proxy = Proxy::start(name, &url, rec.clone())?;
            server["url"] = json!(proxy.url());
            proxies.push(proxy);
        }
        out[i] = config.to_string();
    }
    Ok((out, proxies))
}

pub(crate) fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|_| json!({"_text": line}))
}
