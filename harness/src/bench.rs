//! `conformance bench`: how fast the suite runs through the fakes, how much
//! the harness adds over the bare cost of the processes and lines a trial
//! needs, how the fakes compare with the real Codex, and whether memory stays
//! flat over many scenarios. Everything is printed as ratios; nothing here
//! asserts a time.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fakes::version::Version;


use crate::plan::versions;
use crate::reference::ReferenceDriver;
use crate::runner::run_with;
use crate::scenario::{Provider, Scenario};
use crate::trial::{run_in, Fakes, TRANSCRIPT};
use crate::verdict::judge;

pub fn report(scenarios: &[Scenario], fakes: &Fakes, threads: usize) -> String {
    let mut out = String::new();
    let trials: Vec<(&Scenario, Option<Version>)> =
        scenarios.iter().flat_map(|s| versions(s.provider).into_iter().map(move |v| (s, v))).collect();

    // 1. The whole suite through the fakes, on `threads` workers.
    let started = Instant::now();
    let verdicts = crate::pool::map_ordered(&trials, threads, |(s, v)| run_with(s, *v, &mut ReferenceDriver::new(), fakes).verdict, |_, _| {});
    let suite_time = started.elapsed();
    let failed = verdicts.iter().filter(|v| v.failed()).count();
    let _ = writeln!(out, "suite through the fakes: {} trials in {:.2} s on {threads} threads ({failed} failed); goal < 3 s: ratio {:.2}",
        trials.len(), suite_time.as_secs_f64(), suite_time.as_secs_f64() / 3.0);

    // 2. Per-trial overhead against the floor: the same fake processes,
    // spawned from the same run directory, fed the same client lines, with
    // no driver and no judging.
    let mut harness_total = Duration::ZERO;
    let mut floor_total = Duration::ZERO;
    let mut ratios = Vec::new();
    // HTTP servers live only as long as their trial: replay stdio-only ones.
    let stdio_only = |s: &Scenario| {
        s.bridge.is_none() && s.servers.iter().all(|d| d.transport == crate::scenario::TransportKind::Stdio)
    };
    let replayable: Vec<&(&Scenario, Option<Version>)> = trials.iter().filter(|(s, _)| s.provider == Provider::Codex && stdio_only(s)).collect();
    // Warm up first: per-process caches (compiled schemas) are steady-state
    // costs of a long run, not per-trial ones.
    for (s, v) in &replayable {
        if let Ok(dir) = tempfile::tempdir() {
            let obs = run_in(s, *v, &mut ReferenceDriver::new(), fakes, dir.path());
            let _ = judge(s, *v, &obs);
        }
    }
    for (s, v) in replayable {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(_) => continue,
        };
        let t0 = Instant::now();
        let obs = run_in(s, *v, &mut ReferenceDriver::new(), fakes, dir.path());
        let _ = judge(s, *v, &obs);
        let trial = t0.elapsed();
        if obs.provider.launches() != 1 {
            continue; // relaunching trials cannot be replayed as one exchange
        }
        let Some(floor) = floor_time(s, *v, fakes, dir.path()) else { continue };
        harness_total += trial;
        floor_total += floor;
        ratios.push(trial.as_secs_f64() / floor.as_secs_f64().max(1e-6));
    }
    ratios.sort_by(|a, b| a.total_cmp(b));
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
    let _ = writeln!(out, "per-trial overhead over the floor ({} single-launch codex trials): total {:.2}x, median {:.2}x, worst {:.2}x; goal <= 1.5x",
        ratios.len(), harness_total.as_secs_f64() / floor_total.as_secs_f64().max(1e-6), median, ratios.last().copied().unwrap_or(f64::NAN));

    // 3. The same scenarios on the real Codex, where cached.
    let real_fakes = fakes.clone().with_cached_real_binaries();
    let mut fake_time = Duration::ZERO;
    let mut real_time = Duration::ZERO;
    let mut compared = 0;
    for (s, v) in trials.iter().filter(|(s, _)| s.provider == Provider::Codex && crate::plan::real_run_skip(s).is_none()) {
        if real_fakes.real_binary(s.provider, *v).is_none() {
            continue;
        }
        let t0 = Instant::now();
        run_with(s, *v, &mut ReferenceDriver::new(), fakes);
        let t1 = Instant::now();
        run_with(s, *v, &mut ReferenceDriver::new(), &real_fakes);
        fake_time += t1 - t0;
        real_time += t1.elapsed();
        compared += 1;
    }
    if compared == 0 {
        let _ = writeln!(out, "real codex: no cached binary (scripts/fetch-provider.sh codex VERSION) - skipped");
    } else {
        let _ = writeln!(out, "real codex vs fake: {compared} trials, real {:.2} s, fake {:.2} s: the fake is {:.1}x faster",
            real_time.as_secs_f64(), fake_time.as_secs_f64(), real_time.as_secs_f64() / fake_time.as_secs_f64().max(1e-6));
    }

    // 4. Memory over 10,000 generated scenarios, loaded, validated and
    // turned into provider scripts one at a time; 200 of them also run.
    let mut rss = Vec::new();
    for i in 0..10_000 {
        let text = generated(i);
        if let Ok(s) = Scenario::parse(std::path::Path::new("generated.toml"), &text) {
            if i % 50 == 0 {
                let dir = tempfile::tempdir().ok();
                if let Some(d) = &dir {
                    let newest = versions(Provider::Codex).last().copied().flatten();
                    let obs = run_in(&s, newest, &mut ReferenceDriver::new(), fakes, d.path());
                    let _ = judge(&s, newest, &obs);
                }
            }
        }
        if i == 999 || i == 4_999 || i == 9_999 {
            rss.push(rss_kib());
        }
    }
    let _ = writeln!(out, "memory over 10,000 generated scenarios (200 run): RSS {} KiB at 1k, {} KiB at 5k, {} KiB at 10k: growth 1k->10k {:.2}x; goal flat (~1.0x)",
        rss[0], rss[1], rss[2], rss[2] as f64 / rss[0].max(1) as f64);
    out
}

/// Replays a finished trial's client lines against a fresh fake in a fresh
/// copy of its run directory: the time the processes and lines alone take.
fn floor_time(s: &Scenario, v: Option<Version>, fakes: &Fakes, recorded: &std::path::Path) -> Option<Duration> {
    let wire = fakes::wire::read_jsonl(&recorded.join(TRANSCRIPT)).ok()?;
    // Thread ids differ run to run: the replay swaps in its own, in order.
    let recorded_threads: Vec<String> =
        wire.iter().filter(|e| e["event"] == "thread").filter_map(|e| e["id"].as_str().map(String::from)).collect();
    // Each client line, and how many provider lines came before it.
    let mut plan = Vec::new();
    let mut seen = 0;
    for e in &wire {
        match e["dir"].as_str() {
            Some("s2c") => seen += 1,
            Some("c2s") => plan.push((seen, e["msg"].to_string())),
            _ => {}
        }
    }
    let total_s2c = seen;
    let dir = tempfile::tempdir().ok()?;
    let obs_dir = dir.path();
    run_trial_setup_only(s, v, fakes, obs_dir)?;
    std::fs::copy(recorded.join("home/config.toml"), obs_dir.join("home/config.toml")).ok()?;
    // Timing starts here: one process, the recorded lines, nothing else.
    let t0 = Instant::now();
    let mut child = Command::new(obs_dir.join("bin/codex"))
        .args(["app-server", "--listen", "stdio://"])
        .env("CODEX_HOME", obs_dir.join("home"))
        .current_dir(obs_dir.join("work"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Never hang: a replay that diverges is dropped from the comparison.
    let mut replay_threads: Vec<String> = Vec::new();
    let next = |threads: &mut Vec<String>| {
        let line = rx.recv_timeout(Duration::from_secs(5)).ok()?;
        let value: Option<serde_json::Value> = serde_json::from_str(&line).ok();
        if let Some(id) = value.as_ref().and_then(|v| v.pointer("/result/thread/id")?.as_str()) {
            threads.push(id.to_string());
        }
        Some(())
    };
    let mut got = 0;
    let mut complete = true;
    for (before, line) in plan {
        while got < before {
            if next(&mut replay_threads).is_none() {
                complete = false;
                break;
            }
            got += 1;
        }
        let mut line = line;
        for (old, new) in recorded_threads.iter().zip(&replay_threads) {
            line = line.replace(old.as_str(), new);
        }
        if !complete || writeln!(stdin, "{line}").is_err() {
            complete = false;
            break;
        }
    }
    while complete && got < total_s2c {
        if next(&mut replay_threads).is_none() {
            complete = false;
        }
        got += 1;
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    complete.then(|| t0.elapsed())
}

/// The run directory a trial starts from, without a driver: built by running
/// a trial whose driver does nothing.
fn run_trial_setup_only(s: &Scenario, v: Option<Version>, fakes: &Fakes, dir: &std::path::Path) -> Option<()> {
    let mut idle = Idle;
    let _ = run_in(s, v, &mut idle, fakes, dir);
    let _ = std::fs::remove_file(dir.join(TRANSCRIPT));
    let _ = std::fs::remove_file(dir.join("provider-state.json"));
    Some(())
}

struct Idle;

impl crate::driver::Driver for Idle {
    fn name(&self) -> String {
        "idle".into()
    }
    fn capabilities(&self) -> std::collections::BTreeSet<String> {
        Default::default()
    }
    fn fingerprint(&mut self, _: &[crate::driver::ServerSpec], _: &str) -> Result<String, crate::driver::Failure> {
        Ok(String::new())
    }
    fn open(&mut self, _: &crate::driver::Launch) -> Result<(), crate::driver::Failure> {
        Err(crate::driver::Failure::new("idle", "setup only"))
    }
    fn turn(&mut self, _: &str, _: &[crate::driver::ServerSpec], _: &mut dyn crate::driver::Host) -> Result<crate::driver::TurnOutput, crate::driver::Failure> {
        Ok(Default::default())
    }
    fn resume(&mut self, _: &crate::driver::Launch) -> Result<(), crate::driver::Failure> {
        Ok(())
    }
    fn close(&mut self) {}
}

/// A valid scenario that differs from its neighbours in names and policies.
fn generated(i: usize) -> String {
    let mode = if i.is_multiple_of(2) { "approve" } else { "prompt" };
    let answer = if i.is_multiple_of(3) { "accept" } else { "decline" };
    format!(
        "id = \"generated-{i}\"\ntitle = \"generated {i}\"\ncovers = [\"AC-1\"]\nprovider = \"codex\"\ncaught_by = [\"drop-policy\"]\n\n\
         [policy]\nglobal = \"ask\"\n\n[[servers]]\nname = \"srv{s}\"\ntransport = \"stdio\"\nreason = \"generated\"\n\
         tools.tool{i}.approval_mode = \"{mode}\"\n\n[[steps]]\nkind = \"tool_call\"\nserver = \"srv{s}\"\ntool = \"tool{i}\"\nhost = \"{answer}\"\n\
         expect = {{ item = \"{item}\" }}\n",
        s = i % 7,
        item = if mode == "approve" || answer == "accept" { "completed" } else { "failed" },
    )
}

/// Resident set size of this process, from /proc.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

