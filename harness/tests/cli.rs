//! The `conformance` CLI as a user runs it: exit codes, filters, reports,
//! expected-failure lists, shims, and the matrix page in headless Chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CLI: &str = env!("CARGO_BIN_EXE_conformance");

fn cli(args: &[&str]) -> Output {
    Command::new(CLI).args(args).output().expect("the CLI runs")
}

/// How many Codex trials one scenario makes: one per behaviour band.
fn codex_bands() -> usize {
    harness::plan::versions(harness::scenario::Provider::Codex).len()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

fn shim(name: &str) -> String {
    format!("python3 {}", Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shims").join(name).display())
}

#[test]
fn exit_0_when_conformant_1_on_failures_2_on_bad_input() {
    let ok = cli(&["run", "--filter", "approve-tool-runs-without-prompt"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    assert!(text(&ok).contains(&format!("{} passed, 0 failed, 0 skipped", codex_bands())), "{}", text(&ok));

    let bad = cli(&["run", "--filter", "approve-tool-runs-without-prompt", "--driver", "mutant:drop-policy"]);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    assert!(text(&bad).contains("prompted: expected false, got true"), "{}", text(&bad));

    assert_eq!(cli(&["run", "--no-such-flag"]).status.code(), Some(2));
    assert_eq!(cli(&["run", "--driver", "mutant:nope"]).status.code(), Some(2));
    assert_eq!(cli(&["explain", "no-such-scenario"]).status.code(), Some(2));
}

/// Whatever would make a run useless is said before the first trial, once,
/// with exit 2: a selection that matches nothing, unknown versions, drivers
/// or programs, an unusable temp dir, a report path that cannot be written.
#[test]
fn a_run_that_cannot_be_useful_says_why_before_the_first_trial() {
    let dir = tempfile::tempdir().unwrap();
    let tap = dir.path().join("nodir/x.tap");
    let cases: [(&[&str], &str); 6] = [
        (&["--filter", "zzz"], "no scenario matches --filter `zzz`"),
        (&["--provider", "cursor", "--filter", "approve-tool"], "no scenario matches --filter `approve-tool` with --provider cursor"),
        (&["--version", "9.9.9"], "--version 9.9.9: not a release the fakes simulate (simulated: codex 0.146.0 to 0.171.0"),
        (&["--driver-cmd", "no-such-program-here --flag"], "--driver-cmd: no program `no-such-program-here`"),
        (&["--filter", "approve-tool-runs", "--tap", tap.to_str().unwrap()], "nodir/x.tap: cannot write a report there: no directory"),
        (&["--filter", "approve-tool-runs", "--junit", dir.path().to_str().unwrap()], "is a directory, not a report file"),
    ];
    for (args, says) in cases {
        let o = cli(&[&["run"][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("[  1/"), "{args:?}: a trial ran: {}", text(&o));
    }
    let o = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["run", "--filter", "approve-tool-runs"])
        .env("TMPDIR", dir.path().join("gone"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(text(&o).matches("no such directory to hold run directories").count(), 1, "said once: {}", text(&o));
}

#[test]
fn a_malformed_scenario_is_exit_2_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), "id = \"x\"\ntitle = \"t\"\ncolour = 1\n").unwrap();
    let o = cli(&["run", "--scenarios", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("bad.toml:"), "{}", text(&o));
}

#[test]
fn list_and_explain_describe_scenarios() {
    let o = cli(&["list"]);
    assert!(text(&o).contains("approve-is-exact-per-server"));
    assert!(text(&o).lines().any(|l| l.starts_with("approve-is-exact-per-tool ") && l.contains("AC-4") && l.contains("exact")), "{}", text(&o));
    let o = cli(&["list", "--criteria"]);
    let page = text(&o);
    assert!(page.contains("\"A fifth tool on the same server still requests approval and is rejected by the current client.\""), "{page}");
    assert!(page.contains("**exact Exactness.**"), "{page}");
    let o = cli(&["explain", "approve-is-exact-per-tool"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o).contains("caught by: server-wide-approve"), "{}", text(&o));
    assert!(text(&o).contains("step 2: tool_call files.write_file"), "{}", text(&o));
}

#[test]
fn expected_failures_are_strict_and_baseline_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--filter", "approve-is-exact", "--driver", "mutant:server-wide-approve"];
    let base = cli(&[&["baseline"][..], &args].concat());
    assert_eq!(base.status.code(), Some(0));
    let list = String::from_utf8_lossy(&base.stdout).into_owned();
    let baseline: String = list.lines().filter(|l| !l.starts_with('[') && !l.trim().is_empty()).map(|l| format!("{l}\n")).collect();
    assert!(baseline.contains("approve-is-exact-per-tool:prompted"), "{baseline}");
    let file = dir.path().join("expected.txt");
    std::fs::write(&file, &baseline).unwrap();
    let tap = dir.path().join("run.tap");
    let o = cli(&[&["run"][..], &args, &["--expected-failures", file.to_str().unwrap(), "--tap", tap.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(std::fs::read_to_string(&tap).unwrap().contains("# TODO expected failure"));

    // An entry that no longer fails fails the run.
    std::fs::write(&file, format!("{baseline}approve-is-exact-per-server\n")).unwrap();
    let o = cli(&[&["run"][..], &args, &["--expected-failures", file.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no longer fails"), "{}", text(&o));

    // A list naming an unknown scenario is bad input.
    std::fs::write(&file, "not-a-scenario\n").unwrap();
    let o = cli(&[&["run"][..], &args, &["--expected-failures", file.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn reports_carry_run_info_and_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let (tap, junit, matrix) = (dir.path().join("r.tap"), dir.path().join("r.xml"), dir.path().join("r.html"));
    let o = cli(&[
        "run", "--provider", "codex", "--filter", "approve-is-exact-per-tool", "--driver", "mutant:server-wide-approve",
        "--tap", tap.to_str().unwrap(), "--junit", junit.to_str().unwrap(), "--matrix", matrix.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let tap = std::fs::read_to_string(tap).unwrap();
    assert!(tap.starts_with("TAP version 14\n"));
    assert!(tap.contains("# driver: mutant:server-wide-approve"));
    let oldest = harness::plan::versions(harness::scenario::Provider::Codex)[0].unwrap();
    assert!(tap.contains(&format!("not ok 1 - codex-{oldest}::approve-is-exact-per-tool")), "{tap}");
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains("<failure") && xml.contains("codex 0.171.0"), "{xml}");
    let html = std::fs::read_to_string(&matrix).unwrap();
    // A failed trial per band, and the three criteria the scenario covers failing.
    assert_eq!(html.matches("class=\"fail\"").count(), codex_bands() + 3);
    let criteria = &html[html.find("<table id=\"criteria\">").expect("criteria table")..];
    assert!(criteria.contains("<th scope=\"row\">AC-4</th><td>A fifth tool on the same server"), "{criteria}");
    assert!(criteria.contains("<th scope=\"row\">exact</th>"), "{criteria}");
    rendered_in_chromium(&matrix, codex_bands() + 3);
}

/// Headless Chromium renders the page with one failed cell per trial. CI
/// installs Chromium; elsewhere the check is skipped with a notice.
fn rendered_in_chromium(page: &Path, failed_cells: usize) {
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"].iter().find(|c| which(c).is_some()) else {
        assert!(std::env::var_os("CI").is_none(), "CI must have Chromium (.ci/run installs it)");
        eprintln!("skipping the Chromium check: no chromium on PATH");
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let shot = profile.path().join("matrix.png");
    let url = format!("file://{}", page.display());
    let common = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ];
    let user_dir = format!("--user-data-dir={}", profile.path().join("p").display());
    let dom = Command::new(chromium).args(common).arg(&user_dir).arg("--dump-dom").arg(&url).output().unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("<table id=\"matrix\">"), "{dom}");
    assert_eq!(dom.matches("<td class=\"fail\"").count(), failed_cells, "{dom}");
    let o = Command::new(chromium)
        .args(common)
        .arg(&user_dir)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,800")
        .arg(&url)
        .output()
        .unwrap();
    let png = std::fs::read(&shot).unwrap_or_else(|_| panic!("no screenshot: {}", String::from_utf8_lossy(&o.stderr)));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 2000, "screenshot is {} bytes", png.len());
}

fn which(cmd: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(cmd)).find(|p| p.is_file())
}

#[test]
fn a_shim_missing_operations_is_not_testable_and_garbage_is_a_protocol_error() {
    let o = cli(&["run", "--filter", "approve-tool-runs-without-prompt", "--version", "0.171.0", "--driver-cmd", &shim("partial.py")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("not testable"), "{}", text(&o));
    // Scenarios for providers it does not claim are skipped, with the reason.
    let o = cli(&["run", "--filter", "claude-approve-is-exact", "--driver-cmd", &shim("partial.py")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("driver does not claim provider claude"), "{}", text(&o));

    let o = cli(&["run", "--filter", "approve-tool-runs-without-prompt", "--version", "0.171.0", "--driver-cmd", &shim("garbage.py")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("protocol-error") && text(&o).contains("not JSON"), "{}", text(&o));

    // A capability the harness does not know: not testable, named; the
    // other driver's results are still reported; exit 1, not 2.
    let o = cli(&["run", "--filter", "approve-tool-runs-without-prompt", "--version", "0.171.0", "--driver-cmd", &format!("{} teleport", shim("partial.py")), "--driver", "reference"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("unknown capabilities teleport"), "{}", text(&o));
    assert!(text(&o).contains("driver reference: 1 passed"), "{}", text(&o));

    let o = cli(&["run", "--driver-cmd", "/nonexistent/shim"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn several_drivers_make_one_report_with_a_column_group_each() {
    let dir = tempfile::tempdir().unwrap();
    let matrix = dir.path().join("m.html");
    let o = cli(&[
        "run", "--provider", "codex", "--filter", "approve-tool-runs-without-prompt",
        "--driver", "reference", "--driver", "mutant:drop-policy", "--matrix", matrix.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let n = codex_bands();
    assert!(text(&o).contains(&format!("driver reference: {n} passed, 0 failed")), "{}", text(&o));
    assert!(text(&o).contains(&format!("driver mutant:drop-policy: 0 passed, {n} failed")), "{}", text(&o));
    let html = std::fs::read_to_string(matrix).unwrap();
    // A trial per band each, and the scenario's two criteria in a column per driver.
    assert_eq!(html.matches("<td class=\"pass\"").count(), n + 2);
    assert_eq!(html.matches("<td class=\"fail\"").count(), n + 2);
    let reference = html.find("reference<br>").unwrap();
    assert!(reference < html.find("mutant:drop-policy<br>").unwrap(), "columns follow the order drivers ran");
}

/// `conformance versions` lists the registry's releases from the committed
/// snapshot (offline), marks each band's stand-in and names each band's facts.
#[test]
fn versions_lists_releases_and_their_behaviour_bands() {
    let out = cli(&["versions", "codex", "--recordings", "/nonexistent"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let row = |v: &str| t.lines().find(|l| l.split_whitespace().next() == Some(v)).unwrap_or_else(|| panic!("no {v}:\n{t}")).to_string();
    // The newest release of each band is the one the default run plays.
    assert!(row("0.171.0").ends_with("default run"), "{t}");
    let bands = t.lines().filter(|l| l.starts_with("band ")).count() + 1;
    assert_eq!(t.lines().filter(|l| l.ends_with("default run")).count(), bands, "one per band:\n{t}");
    assert!(row("0.158.0").split_whitespace().nth(3) == Some("0"), "{}", row("0.158.0"));
    assert!(!t.lines().any(|l| l.starts_with("0.145.")), "older than the simulated range without --all:\n{t}");
    assert!(t.contains("band 3 from 0.148.0: never_denies_in_cli, call_meta_has_call_id"), "{t}");
    assert!(t.lines().any(|l| l.contains(" from 0.149.0: ") && l.contains("exec_rejects_untrusted")), "{t}");
    let all = text(&cli(&["versions", "codex", "--all"]));
    assert!(all.lines().any(|l| l.starts_with("0.145.")), "{all}");
    let claude = text(&cli(&["versions", "claude"]));
    assert!(claude.contains("2.1.334") && claude.contains("2.1.300"), "{claude}");
    let bad = cli(&["versions", "cursor"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}

/// A run split into 3 shards (slice and hash) and merged writes the reports
/// the unsplit run writes (JUnit but for its timings); a missing or
/// repeated shard, or a bad partition, is exit 2.
#[test]
fn three_shards_merged_report_as_the_unsplit_run() {
    let dir = tempfile::tempdir().unwrap();
    let at = |f: &str| dir.path().join(f).display().to_string();
    let select = ["--filter", "approve", "-q"];
    let run = |extra: &[&str]| {
        let out = cli(&[&["run"][..], &select, extra].concat());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    };
    run(&["--tap", &at("all.tap"), "--junit", &at("all.xml")]);
    let untimed = |path: String| {
        let xml = std::fs::read_to_string(path).unwrap();
        let re = regex::Regex::new(r#" (time|timestamp)="[^"]*""#).unwrap();
        re.replace_all(&xml, "").into_owned()
    };
    for kind in ["slice", "hash"] {
        let shards: Vec<String> = (1..=3).map(|k| at(&format!("{kind}{k}.json"))).collect();
        for (k, json) in shards.iter().enumerate() {
            run(&["--partition", &format!("{kind}:{}/3", k + 1), "--json", json]);
        }
        let tap = at(&format!("{kind}.tap"));
        let xml = at(&format!("{kind}.xml"));
        let merged = cli(&[&["merge"][..], &shards.iter().map(String::as_str).collect::<Vec<_>>(), &["--tap", &tap, "--junit", &xml]].concat());
        assert_eq!(merged.status.code(), Some(0), "{}", text(&merged));
        assert_eq!(std::fs::read_to_string(&tap).unwrap(), std::fs::read_to_string(at("all.tap")).unwrap(), "{kind}");
        assert_eq!(untimed(xml), untimed(at("all.xml")), "{kind}");
        let missing = cli(&["merge", &shards[0], &shards[2]]);
        assert_eq!(missing.status.code(), Some(2));
        assert!(text(&missing).contains(&format!("shard {kind}:2/3 is missing")), "{}", text(&missing));
        let twice = cli(&["merge", &shards[0], &shards[0], &shards[1], &shards[2]]);
        assert!(text(&twice).contains("is given twice") && twice.status.code() == Some(2), "{}", text(&twice));
    }
    let bad = cli(&["run", "--partition", "3/2"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("1 <= K <= N"), "{}", text(&bad));
}

/// `conformance bisect --offline` searches the committed recordings and
/// finds a known threshold: codex exec cancels an unapproved MCP call up to
/// 0.147.0 and denies it under `never` from 0.148.0.
#[test]
fn bisect_offline_finds_the_never_denial_threshold() {
    let recordings = Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings").display().to_string();
    let base = ["bisect", "--offline", "--recordings", &recordings, "--provider", "codex", "--driver", "reference-codex-exec", "--filter", "ask-forwards-default-prompts"];
    let out = cli(&[&base[..], &["--check", "model_saw", "--good", "0.146.0", "--bad", "0.171.0"]].concat());
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("first release that differs: 0.148.0 (the one before, like --good: 0.147.0)"), "{t}");
    assert!(t.contains("0.147.0 \"user cancelled MCP tool call\", 0.148.0 \"MCP tool call requires approval, but approval policy is never\""), "{t}");
    for (args, error) in [
        (vec!["--good", "0.148.0", "--bad", "0.171.0", "--check", "server_calls"], "do not differ in `server_calls`"),
        (vec!["--good", "0.146.0", "--bad", "0.999.0"], "0.999.0 is not a codex release on the registry"),
        (vec!["--good", "0.171.0", "--bad", "0.146.0"], "must be older than --bad"),
        (vec!["--good", "0.146.0", "--bad", "0.157.1"], "no recording of ask-forwards-default-prompts on codex 0.157.1"),
    ] {
        let out = cli(&[&base[..], &args].concat());
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(error), "{}", text(&out));
    }
}

/// Any registry release in the simulated range runs on the fake as its
/// behaviour band has it: a regression reported against 0.158.0 can be run
/// by that number; a version that is no release is exit 2.
#[test]
fn a_release_between_simulated_versions_runs_by_its_number() {
    let ok = cli(&["run", "--version", "0.158.0", "--filter", "approve-tool-runs-without-prompt"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    assert!(text(&ok).contains("ok   codex-0.158.0::approve-tool-runs-without-prompt"), "{}", text(&ok));
    // exec refuses `untrusted` from 0.149.0: 0.158.0 is in that band.
    let args = ["run", "--filter", "approve-tool-runs-without-prompt", "--driver", "mutant:exec-untrusted", "--version"];
    assert_eq!(cli(&[&args[..], &["0.158.0"]].concat()).status.code(), Some(1));
    assert_eq!(cli(&[&args[..], &["0.148.0"]].concat()).status.code(), Some(0));
    let bad = cli(&["run", "--version", "0.158.1"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("--version 0.158.1: not a release the fakes simulate"), "{}", text(&bad));
}

/// `conformance cache` lists an (XDG) cache's releases with their sizes and
/// marks what the default run does not play; `--prune` removes just those
/// and unfinished fetches, `--keep` spares one.
#[test]
fn cache_lists_sizes_and_prunes_what_the_default_run_does_not_play() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("approval-conformance/codex");
    for (dir, bytes) in [("0.171.0", 2_000_000), ("0.146.0", 1_000), ("0.150.0", 10), (".fetch-abc", 5)] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        std::fs::write(root.join(dir).join("bin"), vec![0u8; bytes]).unwrap();
    }
    let run = |args: &[&str]| Command::new(CLI).args(args).env("XDG_CACHE_HOME", home.path()).output().unwrap();
    let out = run(&["cache"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("2.0 MB in 4 folders"), "{t}");
    let line = |v: &str| t.lines().find(|l| l.contains(v)).unwrap_or_else(|| panic!("no {v}:\n{t}")).to_string();
    assert!(!line("0.171.0").ends_with("prunable"), "the newest release is played by default:\n{t}");
    assert!(line(".fetch-abc").ends_with("prunable") && line("0.150.0").ends_with("prunable"), "{t}");
    let pruned = run(&["cache", "--prune", "--keep", "0.150.0"]);
    assert_eq!(pruned.status.code(), Some(0), "{}", text(&pruned));
    assert!(root.join("0.171.0").is_dir() && root.join("0.150.0").is_dir() && !root.join(".fetch-abc").exists(), "{}", text(&pruned));
    assert_eq!(run(&["cache", "--keep", "0.150.0"]).status.code(), Some(2), "--keep needs --prune");
}

/// Generated fidelity cases need a provider and a simulated version; bad
/// ones are exit 2 with one line, before anything runs or is fetched.
#[test]
fn generated_fidelity_cases_refuse_bad_input() {
    let cases: [(&[&str], &str); 3] = [
        (&["fidelity", "--cases", "3", "--provider", "codex", "--version", "0.99.0"], "--version 0.99.0: not a codex release the fakes simulate"),
        (&["fidelity", "--cases", "3", "--provider", "codex"], "--version"),
        (&["fidelity", "--cases", "3", "--provider", "codex", "--version", "0.171.0", "--driver", "nope"], "no built-in driver `nope`"),
    ];
    for (args, says) in cases {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
    }
}
