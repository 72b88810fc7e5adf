//! Hostile drivers: each misbehaving shim gets a precise verdict within the
//! trial time limit, the run never hangs, and no process it started is left
//! behind.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const CLI: &str = env!("CARGO_BIN_EXE_conformance");

/// Runs one trial with the hostile shim in `mode`: (exit code, output, pids it left).
fn run(mode: &str) -> (Option<i32>, String, Vec<u32>) {
    run_shim(mode, "3", &["--version", "0.171.0"])
}

/// Five releases, so each run has five trials per driver whatever the bands.
const FIVE: [&str; 10] = ["--version", "0.146.0", "--version", "0.147.0", "--version", "0.148.0", "--version", "0.153.4", "--version", "0.171.0"];

/// Runs the hostile shim with `args` (its mode first) under a trial limit of
/// `timeout` seconds, with `extra` run arguments. A run over 20 s fails:
/// with a limit above that, it shows no trial waited for its limit.
fn run_shim(args: &str, timeout: &str, extra: &[&str]) -> (Option<i32>, String, Vec<u32>) {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shims/hostile.py");
    let started = Instant::now();
    let out = Command::new(CLI)
        .args(["run", "--filter", "approve-tool-runs-without-prompt"])
        .args(if extra.contains(&"--version") { &[][..] } else { &FIVE[..] })
        .args(extra)
        .arg("--driver-cmd")
        .arg(format!("python3 {} {args}", shim.display()))
        .env("CONFORMANCE_TRIAL_TIMEOUT", timeout)
        .env("HOSTILE_PIDS", &pids)
        .output()
        .unwrap();
    let mode = args;
    assert!(started.elapsed() < Duration::from_secs(20), "{mode}: took {:?}", started.elapsed());
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let recorded: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    (out.status.code(), text, recorded)
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only a running process counts.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

fn check(mode: &str, code: i32, says: &[&str]) {
    check_run(mode, run(mode), code, says);
}

fn check_run(mode: &str, (got, text, pids): (Option<i32>, String, Vec<u32>), code: i32, says: &[&str]) {
    assert_eq!(got, Some(code), "{mode}: {text}");
    for s in says {
        assert!(text.contains(s), "{mode}: expected `{s}` in:\n{text}");
    }
    assert!(!pids.is_empty(), "{mode}: no pid recorded");
    std::thread::sleep(Duration::from_millis(200));
    let left: Vec<u32> = pids.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "{mode}: processes left behind: {left:?}");
}

#[test]
fn a_shim_that_crashes_is_reported_with_its_exit_code() {
    check("crash", 1, &["shim-exited", "exit code 3"]);
}

#[test]
fn a_shim_that_hangs_times_out() {
    check("hang", 1, &["timeout", "no answer to `open` in time"]);
}

/// A driver that cannot start fails its own trials, with the reason; the
/// other drivers' results and every report are still written; exit 1.
#[test]
fn a_shim_that_never_says_hello_fails_its_trials_and_nothing_else() {
    check("silent-hello", 1, &["could not start", "timeout"]);
    let dir = tempfile::tempdir().unwrap();
    let tap = dir.path().join("r.tap");
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shims/hostile.py");
    let out = Command::new(CLI)
        .args(["run", "--filter", "approve-tool-runs-without-prompt"])
        .args(FIVE)
        .args(["--driver", "reference", "--driver-cmd"])
        .arg(format!("python3 {} silent-hello", shim.display()))
        .args(["--tap", tap.to_str().unwrap()])
        .env("CONFORMANCE_TRIAL_TIMEOUT", "3")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("driver reference: 5 passed, 0 failed"), "{text}");
    assert!(text.contains("0 passed, 5 failed"), "{text}");
    // After the first failure the others fail at once, as in the first trial.
    assert!(text.matches("as in its first trial").count() >= 3, "{text}");
    let tap = std::fs::read_to_string(tap).unwrap();
    assert_eq!(tap.matches("\nok ").count(), 5, "{tap}");
    assert_eq!(tap.matches("\nnot ok ").count(), 5, "{tap}");
}

/// 100 MB where the hello answer should be: refused at the 16 MiB limit
/// (the reader drains the rest without keeping it; measured peak of the
/// whole run: 25 MB).
#[test]
fn a_100_mb_hello_is_refused_at_the_line_limit() {
    check("huge-hello", 1, &["could not start", "104857601-byte line"]);
}

#[test]
fn a_64_mib_line_is_refused_without_buffering_it() {
    check("huge-line", 1, &["protocol-error", "-byte line"]);
}

#[test]
fn wrong_and_duplicate_ids_are_protocol_errors() {
    check("wrong-id", 1, &["protocol-error", "unknown request id"]);
    check("duplicate-id", 1, &["protocol-error", "unknown request id"]);
}

#[test]
fn a_shim_that_closes_its_output_early_is_reported() {
    check("close-early", 1, &["shim-exited"]);
}

#[test]
fn children_of_a_stuck_shim_are_killed_with_it() {
    check("orphan", 1, &["timeout"]);
}

/// A grandchild that leaves the shim's process group and session (setsid,
/// double fork), ignores SIGTERM and holds the shim's stdout open changes no
/// verdict: the shim's own answers count, its exit is seen at once (not as
/// "no answer" after the whole limit of 60 s), and the grandchild is killed
/// by the trial's supervisor with everything else.
#[test]
fn an_escaped_grandchild_holding_stdout_changes_no_verdict_and_dies() {
    let long = ["--version", "0.171.0"];
    // The shim then answers as the reference driver does: a pass.
    check_run("escape", run_shim(&format!("escape {CLI}"), "60", &long), 0, &["1 passed, 0 failed"]);
    let (code, text, pids) = run_shim("escape-crash", "60", &long);
    assert!(!text.contains("no answer"), "{text}");
    check_run("escape-crash", (code, text, pids), 1, &["shim-exited", "shim exited during `open` (exit code 3)"]);
    // A shim that hangs still times out, and nothing of it survives.
    check("escape-hang", 1, &["timeout", "no answer to `open` in time"]);
}

/// Containment is per trial: two trials at a time, each with its own
/// escaped grandchild, each judged on its own shim, none left running.
#[test]
fn escaped_grandchildren_of_parallel_trials_are_each_contained() {
    let (code, text, pids) = run_shim(&format!("escape {CLI}"), "60", &["-j", "2"]);
    // Per trial: the grandchild, the shim and its supervisor.
    assert_eq!(pids.len(), 15, "{pids:?}\n{text}");
    check_run("escape -j 2", (code, text, pids), 0, &["5 passed, 0 failed"]);
    let (code, text, pids) = run_shim("escape-crash", "60", &["-j", "2"]);
    assert_eq!(text.matches("exit code 3").count(), 5, "{text}");
    check_run("escape-crash -j 2", (code, text, pids), 1, &["0 passed, 5 failed"]);
}

#[test]
fn invalid_messages_name_the_field() {
    check("bad-host-request", 1, &["protocol-error", "/params/prompt"]);
    check("bad-result", 1, &["protocol-error", "/result"]);
}

/// A driver that leaks its bearer secret into its arguments is caught, and
/// the secret itself appears in no report: the verdict names the file, not
/// the value.
#[test]
fn leaked_secrets_are_caught_and_never_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (tap, junit, html) = (dir.path().join("r.tap"), dir.path().join("r.xml"), dir.path().join("r.html"));
    let out = Command::new(CLI)
        .args(["run", "--filter", "claude-bearer-secret", "--version", "2.1.332", "--driver", "mutant:secret-inline"])
        .args(["--tap", tap.to_str().unwrap(), "--junit", junit.to_str().unwrap(), "--matrix", html.to_str().unwrap()])
        .env("CONFORMANCE_KEEP", "1")
        // Every kept run directory (one per tool search mode) goes with `dir`.
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("a secret value was written to provider.jsonl"), "{text}");
    // The kept run directory holds the fake server's copy of the secret.
    let kept = text.lines().find_map(|l| l.strip_prefix("kept run directory ")).and_then(|l| l.split(' ').next()).unwrap();
    let secret = std::fs::read_to_string(Path::new(kept).join("mcp/tracker.token")).unwrap();
    assert!(secret.starts_with("canary-"), "{secret}");
    for report in [&tap, &junit, &html] {
        assert!(!std::fs::read_to_string(report).unwrap().contains(secret.trim()), "{}", report.display());
    }
    assert!(!text.contains(secret.trim()));
}

/// A shim that says a secret it was handed (in an error, an event, or on
/// stderr) fails with a leak verdict naming where, and the value reaches no
/// output and no report.
#[test]
fn secrets_a_shim_says_are_caught_and_redacted() {
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shims/hostile.py");
    for (mode, says) in [
        ("secret-error", "the driver's error at launch carries a secret value"),
        ("secret-event", "a secret value was written to driver/events.jsonl"),
        ("secret-stderr", "a secret value was written to driver/stderr"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (tap, junit, html) = (dir.path().join("r.tap"), dir.path().join("r.xml"), dir.path().join("r.html"));
        let out = Command::new(CLI)
            .args(["run", "--filter", "bearer-secret-stays-in-environment", "--version", "0.171.0", "--driver-cmd"])
            .arg(format!("python3 {} {mode}", shim.display()))
            .args(["--tap", tap.to_str().unwrap(), "--junit", junit.to_str().unwrap(), "--matrix", html.to_str().unwrap()])
            .env("CONFORMANCE_TRIAL_TIMEOUT", "5")
            .env("CONFORMANCE_KEEP", "1")
            .env("TMPDIR", dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{mode}: {text}");
        assert!(text.contains(says), "{mode}: {text}");
        let kept = text.lines().find_map(|l| l.strip_prefix("kept run directory ")).and_then(|l| l.split(' ').next()).unwrap();
        let secret = std::fs::read_dir(Path::new(kept).join("mcp"))
            .unwrap()
            .flatten()
            .find(|e| e.path().extension().is_some_and(|x| x == "token"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .unwrap();
        let secret = secret.trim();
        assert!(secret.starts_with("canary-"), "{secret}");
        assert!(!text.contains(secret), "{mode}: the value is in the output: {text}");
        if mode == "secret-stderr" {
            assert!(text.contains("debug: token=[REDACTED]"), "the stderr tail is shown, redacted: {text}");
        }
        for report in [&tap, &junit, &html] {
            assert!(!std::fs::read_to_string(report).unwrap().contains(secret), "{mode}: {}", report.display());
        }
    }
}
