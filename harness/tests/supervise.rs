//! `conformance supervise -- PROGRAM ARGS...`, the per-trial supervisor, on
//! its own: it exits as its program did, and nothing its program started
//! outlives it, however it got away.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CLI: &str = env!("CARGO_BIN_EXE_conformance");

fn supervise(script: &str) -> std::process::Output {
    Command::new(CLI).args(["supervise", "--", "sh", "-c", script]).stdin(Stdio::null()).output().unwrap()
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only a running process counts.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

#[test]
fn it_exits_as_its_program_did() {
    assert_eq!(supervise("exit 7").status.code(), Some(7));
    let killed = supervise("kill -9 $$").status;
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&killed), Some(9), "{killed:?}");
    let out = Command::new(CLI).args(["supervise", "--", "no-such-program-here"]).output().unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot start `no-such-program-here`"));
}

/// Its stdin and stdout are the program's alone: output passes through, and
/// the program's end is the end of the output even while it is supervised.
#[test]
fn stdio_passes_through() {
    let out = Command::new(CLI)
        .args(["supervise", "--", "sh", "-c", "read line; echo got $line"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"hello\n")?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "got hello\n");
}

/// A grandchild in a session of its own that ignores SIGTERM and holds
/// stdout dies when the program exits; the output ends with it, so reading
/// it to the end cannot hang.
#[test]
fn an_escaped_grandchild_dies_with_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let p = pidfile.display();
    let script = format!("setsid sh -c 'trap \"\" TERM; echo $$ > {p}; exec sleep 300' & while [ ! -s {p} ]; do sleep 0.05; done; exit 0");
    let started = Instant::now();
    let out = supervise(&script);
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(0));
    let pid: u32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    assert!(!alive(pid), "the grandchild {pid} survived");
}

/// SIGTERM to the supervisor ends the whole tree, a program ignoring it
/// included, and the supervisor reports the program killed.
#[test]
fn sigterm_ends_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pids");
    let script = format!("trap '' TERM; setsid sleep 300 & echo $$ $! > {}; wait", pidfile.display());
    let mut child = Command::new(CLI).args(["supervise", "--", "sh", "-c", &script]).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let pids: Vec<u32> = loop {
        let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
        if text.ends_with('\n') {
            break text.split_whitespace().map(|p| p.parse().unwrap()).collect();
        }
        assert!(Instant::now() < deadline, "the program did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    Command::new("kill").args(["-s", "TERM", "--", &child.id().to_string()]).status().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9), "{status:?}");
    let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
