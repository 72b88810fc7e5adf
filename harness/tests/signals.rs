//! A run stopped by a signal: SIGINT or SIGTERM ends it in order (reports of
//! what finished, marked incomplete; every process it started killed; run
//! directories removed; exit 130 or 143), and a harness killed outright
//! still takes every shim's process tree with it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CLI: &str = env!("CARGO_BIN_EXE_conformance");

/// A `conformance run` of 10 trials on 2 jobs: 5 of the reference driver,
/// then 5 of a shim that hangs at `open` with an escaped grandchild (see
/// tests/shims/hostile.py), under a limit far longer than the test.
struct Run {
    child: Child,
    dir: tempfile::TempDir,
}

impl Run {
    fn start() -> Run {
        Run::launch(|dir, shim| {
            let report = |name: &str| dir.join(name).to_str().unwrap().to_string();
            let mut args: Vec<String> = ["run", "--filter", "approve-tool-runs-without-prompt", "-j", "2"].map(String::from).to_vec();
            // Five releases (five trials per driver), whatever the bands.
            for v in ["0.146.0", "0.147.0", "0.148.0", "0.153.4", "0.171.0"] {
                args.extend(["--version".into(), v.into()]);
            }
            args.extend(["--driver".into(), "reference".into(), "--driver-cmd".into(), shim]);
            args.extend(["--tap".into(), report("r.tap"), "--junit".into(), report("r.xml"), "--matrix".into(), report("r.html")]);
            args
        })
    }

    /// The CLI with the arguments `args` makes from the test's directory and
    /// the hostile shim's command line.
    fn launch(args: impl FnOnce(&Path, String) -> Vec<String>) -> Run {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shims/hostile.py");
        let child = Command::new(CLI)
            .args(args(dir.path(), format!("python3 {} escape-hang", shim.display())))
            .env("TMPDIR", dir.path().join("tmp"))
            .env("HOSTILE_PIDS", dir.path().join("pids"))
            .env("CONFORMANCE_TRIAL_TIMEOUT", "600")
            .env_remove("CONFORMANCE_KEEP")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Run { child, dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Every pid the shims recorded: each shim, its supervisor, its grandchild.
    fn pids(&self) -> Vec<u32> {
        let text = std::fs::read_to_string(self.path("pids")).unwrap_or_default();
        text.split_whitespace().filter_map(|p| p.parse().ok()).collect()
    }

    /// Waits until both jobs run a hanging shim trial: the reference
    /// trials are done and two shims are started (3 pids each).
    fn wait_for_two_hanging_trials(&self) {
        self.wait_for_pids(6);
    }

    fn wait_for_pids(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.pids().len() < n {
            assert!(Instant::now() < deadline, "the shim trials did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, name: &str) {
        let ok = Command::new("kill").args(["-s", name, "--", &self.child.id().to_string()]).status().unwrap();
        assert!(ok.success());
    }

    /// Exit code and output, within a bound that only proves no hang.
    fn finish(mut self) -> (Option<i32>, String, Run) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the run did not end after the signal");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut text = String::new();
        self.child.stdout.take().unwrap().read_to_string(&mut text).unwrap();
        self.child.stderr.take().unwrap().read_to_string(&mut text).unwrap();
        (self.child.wait().unwrap().code(), text, self)
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only a running process counts.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

fn stopped_by(signal: &str, code: i32) {
    let run = Run::start();
    run.wait_for_two_hanging_trials();
    run.signal(signal);
    let (got, text, run) = run.finish();
    assert_eq!(got, Some(code), "{text}");
    let why = format!("interrupted by SIG{signal}: 5 of 10 trials finished, 2 interrupted, 3 not started");
    assert!(text.contains(&why), "{text}");
    assert_eq!(text.matches("] ok   codex-").count(), 5, "{text}");
    assert_eq!(text.matches("] intr codex-").count(), 2, "{text}");
    assert!(!text.contains("FAIL"), "an interrupted trial is no failure: {text}");

    let tap = std::fs::read_to_string(run.path("r.tap")).unwrap();
    assert!(tap.contains(&format!("# incomplete: {why}")), "{tap}");
    assert!(tap.contains("\n1..7\n"), "{tap}");
    assert_eq!(tap.matches("\nok ").count(), 7, "{tap}");
    assert_eq!(tap.matches("# SKIP interrupted").count(), 2, "{tap}");
    assert!(tap.ends_with(&format!("Bail out! {why}\n")), "{tap}");
    let junit = std::fs::read_to_string(run.path("r.xml")).unwrap();
    assert!(junit.contains(&format!("name=\"incomplete\" value=\"{why}\"")), "{junit}");
    assert_eq!(junit.matches("<testcase ").count(), 7, "{junit}");
    assert_eq!(junit.matches("<skipped message=\"interrupted").count(), 2, "{junit}");
    let html = std::fs::read_to_string(run.path("r.html")).unwrap();
    assert!(html.contains(&format!("<p id=\"incomplete\" class=\"incomplete\">Incomplete run: {why}</p>")), "{html}");
    assert_eq!(html.matches(">interrupted</td>").count(), 2, "{html}");

    let pids = run.pids();
    assert_eq!(pids.len(), 6, "{pids:?}");
    let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "processes left behind: {left:?}");
    let tmp: Vec<String> =
        std::fs::read_dir(run.path("tmp")).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(tmp.is_empty(), "left in TMPDIR: {tmp:?}");
}

#[test]
fn sigint_writes_incomplete_reports_kills_everything_and_exits_130() {
    stopped_by("INT", 130);
}

#[test]
fn sigterm_writes_incomplete_reports_kills_everything_and_exits_143() {
    stopped_by("TERM", 143);
}

/// SIGKILL leaves the harness no say: each supervisor gets its parent-death
/// signal and takes its shim's tree with it, the escaped grandchild too.
#[test]
fn a_killed_harness_takes_every_shim_tree_with_it() {
    let run = Run::start();
    run.wait_for_two_hanging_trials();
    run.signal("KILL");
    let pids = run.pids();
    let (got, _, _run) = run.finish();
    assert_eq!(got, None, "killed by a signal");
    let deadline = Instant::now() + Duration::from_secs(30);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

/// `conformance record` stopped while a trial hangs: the trial kills its
/// shim's tree and is not written (a cut-short recording would replace a
/// good one), and the CLI exits 143.
#[test]
fn a_stopped_record_writes_no_cut_short_recording_and_kills_the_shim() {
    let run = Run::launch(|dir, shim| {
        let out = dir.join("out").to_str().unwrap().to_string();
        ["record", "--fake", "--out", &out, "--filter", "approve-tool-runs-without-prompt", "--version", "0.171.0", "--driver-cmd", &shim]
            .map(String::from)
            .to_vec()
    });
    run.wait_for_pids(3);
    run.signal("TERM");
    let (got, text, run) = run.finish();
    assert_eq!(got, Some(143), "{text}");
    assert!(text.contains("interrupted by SIGTERM: codex-0.171.0::approve-tool-runs-without-prompt"), "{text}");
    assert!(text.contains("cut short, not recorded; 0 recordings written"), "{text}");
    assert!(!run.path("out").exists(), "nothing written");
    let left: Vec<u32> = run.pids().into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "processes left behind: {left:?}");
}
