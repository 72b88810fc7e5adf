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
fn every_malformed_scenario_gets_its_exact_located_error() {
    let files = corpus();
    assert!(files.len() >= 35, "corpus shrank: {}", files.len());
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let header = String::from_utf8_lossy(&bytes).lines().next().unwrap_or("").to_string();
        let expected = header.strip_prefix("# error: ").unwrap_or_else(|| panic!("{}: no `# error:` header", file.display()));
        let err = match Scenario::load(&file) {
            Ok(_) => panic!("{}: loaded without error", file.display()),
            Err(e) => e.to_string(),
        };
        assert_eq!(err, format!("{}:{expected}", file.display()));
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

/// Checks across files: the second use of an id names the first, and an
/// unknown mutant in `caught_by` is located at the entry.
#[test]
fn problems_across_files_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/approve-tool-runs-without-prompt.toml")).unwrap();
    std::fs::write(dir.path().join("a.toml"), &good).unwrap();
    std::fs::write(dir.path().join("b.toml"), format!("\n{good}")).unwrap();
    let typo = good.replace("approve-tool-runs-without-prompt", "typo").replace("\"fail-closed-unprojected\"", "\"fail-closed-unprojectd\"");
    std::fs::write(dir.path().join("c.toml"), typo).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_conformance")).args(["list", "--scenarios"]).arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (a, b, c) = (dir.path().join("a.toml"), dir.path().join("b.toml"), dir.path().join("c.toml"));
    assert!(stderr.contains(&format!("{}:2:6: field `id`: `approve-tool-runs-without-prompt` is also the id of {}:1:6", b.display(), a.display())), "{stderr}");
    assert!(stderr.contains(&format!("{}:6:29: field `caught_by[2]`: no mutant `fail-closed-unprojectd`", c.display())), "{stderr}");
}

/// The loader reads only regular files within the size bound and does not
/// follow directory links: a FIFO, a link to /dev/zero and a link to / end
/// in located errors or are skipped, never in a hang.
#[test]
fn hostile_files_in_the_tree_neither_hang_nor_exhaust() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Command::new("mkfifo").arg(dir.path().join("pipe.toml")).status().unwrap().success());
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.toml")).unwrap();
    std::os::unix::fs::symlink("/", dir.path().join("root")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_conformance")).args(["list", "--scenarios"]).arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("pipe.toml:0:0: not a regular file"), "{stderr}");
    assert!(stderr.contains("zero.toml:0:0: not a regular file"), "{stderr}");
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
}
