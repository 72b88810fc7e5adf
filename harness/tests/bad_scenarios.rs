//! Malformed scenario files: each gives one clear error naming file, line,
//! column and the field, never a panic; the CLI exits 2 on them.

use std::path::Path;
use std::process::Command;

use harness::scenario::Scenario;

fn corpus() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    files
}

#[test]
fn every_malformed_scenario_gets_a_located_error_naming_the_problem() {
    let files = corpus();
    assert!(files.len() >= 20, "corpus shrank: {}", files.len());
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let header = String::from_utf8_lossy(&bytes).lines().next().unwrap_or("").to_string();
        let expected = header.strip_prefix("# error: ").unwrap_or_else(|| panic!("{}: no `# error:` header", file.display()));
        let err = match Scenario::load(&file) {
            Ok(_) => panic!("{}: loaded without error", file.display()),
            Err(e) => e.to_string(),
        };
        let prefix = format!("{}:", file.display());
        assert!(err.starts_with(&prefix), "{}: error does not start with the file: {err}", file.display());
        let position = err[prefix.len()..].split(':').take(2).collect::<Vec<_>>();
        assert!(position.iter().all(|p| p.parse::<usize>().is_ok()), "{}: no line:column in {err}", file.display());
        assert!(err.contains(expected), "{}: expected `{expected}` in: {err}", file.display());
        assert_eq!(err.lines().count(), 1, "{}: one line please: {err}", file.display());
    }
}

#[test]
fn the_cli_exits_2_and_reports_each_bad_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-scenarios");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance")).args(["run", "--scenarios"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for file in corpus() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(stderr.contains(&name), "{name} not reported:\n{stderr}");
    }
    assert!(!stderr.contains("panicked"));
}
