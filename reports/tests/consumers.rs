//! The reports are read by real consumers: `prove` for TAP, an independent
//! JUnit parser for the XML.

use std::process::Command;

use reports::{junit, matrix_html, tap, tap_with_version, Mismatch, Outcome, RunInfo, Trial};

fn info() -> RunInfo {
    RunInfo { harness: "approval-conformance 0.1.0".into(), driver: "reference".into(), providers: vec!["codex 0.148.0".into()], criteria: Vec::new(), incomplete: None }
}

fn trial(name: &str, outcome: Outcome) -> Trial {
    let mismatches = match outcome {
        Outcome::Fail | Outcome::ExpectedFail => vec![Mismatch {
            at: "step 2 (tool_call files.write_file)".into(),
            field: "server_calls".into(),
            expected: "0".into(),
            actual: "1 # with a hash, \"quotes\", <angle> & amp: colon".into(),
        }],
        _ => Vec::new(),
    };
    let note = match outcome {
        Outcome::Skip => Some("driver does not claim: bridge".into()),
        Outcome::ExpectedFail => Some("known bug #12".into()),
        _ => None,
    };
    Trial {
        name: format!("codex-0.148.0::{name}"),
        scenario: name.into(),
        provider: "codex 0.148.0".into(),
        driver: "reference".into(),
        outcome,
        note,
        mismatches,
        seconds: 0.25,
    }
}

fn prove(tap: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.tap");
    std::fs::write(&file, tap).unwrap();
    let out = Command::new("prove").arg("--exec").arg("cat").arg(&file).output().expect("prove is installed");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

#[test]
fn prove_accepts_passes_skips_and_todos_and_rejects_failures() {
    let green = [trial("a", Outcome::Pass), trial("b", Outcome::Skip), trial("c", Outcome::ExpectedFail)];
    let (ok, out) = prove(&tap_with_version(&info(), &green, 13));
    assert!(ok, "{out}");
    assert!(out.contains("All tests successful"), "{out}");

    let red = [trial("a", Outcome::Pass), trial("d", Outcome::Fail), trial("e", Outcome::UnexpectedPass)];
    let (ok, out) = prove(&tap_with_version(&info(), &red, 13));
    assert!(!ok, "{out}");
    assert!(out.contains("Failed tests:  2-3"), "{out}");
    assert!(!out.contains("Parse errors"), "{out}");
}

#[test]
fn tap14_differs_from_13_only_in_the_version_line() {
    let trials = [trial("a", Outcome::Pass), trial("d", Outcome::Fail)];
    let v14 = tap(&info(), &trials);
    assert!(v14.starts_with("TAP version 14\n"));
    assert_eq!(v14.replacen("TAP version 14", "TAP version 13", 1), tap_with_version(&info(), &trials, 13));
    // prove 3.44 knows TAP up to 13: its only complaint about 14 is the version.
    let (_, out) = prove(&v14);
    let parse_errors: Vec<&str> = out.lines().filter(|l| l.contains("Parse errors") || l.trim_start().starts_with("Badly")).collect();
    assert!(parse_errors.iter().all(|l| l.contains("TAP specified version 14")), "{out}");
}

#[test]
fn tap_has_run_info_skip_todo_and_yaml_diff() {
    let t = tap(&info(), &[trial("b", Outcome::Skip), trial("c", Outcome::ExpectedFail), trial("d", Outcome::Fail)]);
    assert!(t.contains("# driver: reference"));
    assert!(t.contains("ok 1 - codex-0.148.0::b # SKIP driver does not claim: bridge"));
    assert!(t.contains("not ok 2 - codex-0.148.0::c # TODO expected failure known bug \\#12"));
    assert!(t.contains("  expected: |\n    step 2 (tool_call files.write_file) server_calls: 0\n"));
    assert!(t.contains("  diff: |\n    --- expected\n    +++ actual\n"));
}

#[test]
fn junit_parses_with_an_independent_parser() {
    let trials = [trial("a", Outcome::Pass), trial("b", Outcome::Skip), trial("d", Outcome::Fail), trial("e", Outcome::UnexpectedPass)];
    let xml = junit(&info(), &trials);
    let parsed = junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes())).expect("valid JUnit XML");
    assert_eq!(parsed.tests, 4);
    assert_eq!(parsed.failures, 2);
    assert_eq!(parsed.skipped, 1);
    let suite = &parsed.suites[0];
    assert_eq!(suite.name, "codex 0.148.0");
    let names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
    let failed = suite.cases.iter().find(|c| c.name.ends_with("codex-0.148.0::d")).unwrap_or_else(|| panic!("{names:?}"));
    assert!(failed.status.is_failure());
    let props: Vec<(&str, &str)> = suite.properties.hashmap.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert!(props.contains(&("driver", "reference")), "{props:?}");
}

#[test]
fn matrix_page_has_one_cell_per_trial_and_escapes_text() {
    let page = matrix_html(&info(), &[trial("a", Outcome::Pass), trial("d", Outcome::Fail), trial("b", Outcome::Skip)]);
    assert_eq!(page.matches("<td class=\"pass\"").count(), 1);
    assert_eq!(page.matches("<td class=\"fail\"").count(), 1);
    assert_eq!(page.matches("<td class=\"skip\"").count(), 1);
    assert!(page.contains("&lt;angle&gt; &amp; amp"));
    assert!(!page.contains("<angle>"));
    assert!(page.contains("1 passed, 1 failed, 1 skipped"));
}

/// An interrupted run: every report says it is incomplete, where each kind
/// of consumer looks, and interrupted trials are not failures.
#[test]
fn an_incomplete_run_says_so_in_every_report() {
    let why = "interrupted by SIGINT: 2 of 5 trials finished, 1 interrupted, 2 not started";
    let stopped = RunInfo { incomplete: Some(why.into()), ..info() };
    let trials = [trial("a", Outcome::Pass), trial("b", Outcome::Skip), trial("c", Outcome::Interrupted)];

    let t = tap_with_version(&stopped, &trials, 13);
    assert!(t.contains(&format!("# incomplete: {why}\n1..3\n")), "{t}");
    assert!(t.contains("ok 3 - codex-0.148.0::c # SKIP interrupted"), "{t}");
    // prove reads the closing `Bail out!` and says why testing stopped.
    let (_, out) = prove(&t);
    assert!(out.contains(&format!("Bailout called.  Further testing stopped:  {why}")), "{out}");
    assert!(!out.contains("Parse errors"), "{out}");

    let xml = junit(&stopped, &trials);
    let parsed = junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes())).expect("valid JUnit XML");
    assert_eq!((parsed.tests, parsed.failures, parsed.skipped), (3, 0, 2));
    let props = &parsed.suites[0].properties.hashmap;
    assert_eq!(props.get("incomplete").map(String::as_str), Some(why), "{props:?}");
    // With nothing finished, a suite still carries the notice.
    let empty = junit(&stopped, &[]);
    assert!(empty.contains(&format!("name=\"incomplete\" value=\"{why}\"")), "{empty}");

    let page = matrix_html(&stopped, &trials);
    assert!(page.contains(&format!("<p id=\"incomplete\" class=\"incomplete\">Incomplete run: {why}</p>")), "{page}");
    assert_eq!(page.matches("<td class=\"intr\"").count(), 1, "{page}");
    assert!(page.contains("1 passed, 0 failed, 1 skipped, 1 interrupted"), "{page}");
    // A complete run has no notice.
    assert!(!matrix_html(&info(), &trials).contains("id=\"incomplete\""));
    assert!(!tap(&info(), &trials).contains("Bail out!"));
}
