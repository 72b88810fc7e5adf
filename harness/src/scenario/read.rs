//! Finding and reading scenario files without trusting the tree: only
//! regular files are read (a FIFO would block forever, `/dev/zero` never
//! ends), at most [`MAX_SCENARIO_BYTES`] of them, and directory links are not
//! followed (a link to `/` would walk the whole filesystem).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::error::ScenarioError;
use super::spans::line_col;

/// Far above any real scenario; a bigger file is refused, not read.
pub const MAX_SCENARIO_BYTES: u64 = 4 << 20;

/// All `*.toml` scenario files below `dir`, sorted by path. Links to
/// directories are skipped; links to files are listed (and must lead to a
/// regular file when read).
pub fn discover(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") && !(kind.is_symlink() && path.is_dir()) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The text of a scenario file: a regular file, within the size bound, in
/// UTF-8 (else the error names the first bad byte's line and column).
pub fn read(path: &Path) -> Result<String, ScenarioError> {
    let unreadable = |m: String| ScenarioError::unreadable(path, m);
    let meta = std::fs::metadata(path).map_err(|e| unreadable(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(unreadable("not a regular file (a scenario is read only from one)".into()));
    }
    if meta.len() > MAX_SCENARIO_BYTES {
        return Err(unreadable(format!("{} bytes: larger than the {MAX_SCENARIO_BYTES}-byte limit for a scenario", meta.len())));
    }
    let file = open_nonblocking(path).map_err(|e| unreadable(format!("cannot read: {e}")))?;
    let mut bytes = Vec::new();
    // The file may grow between the check and the read: read one byte more
    // than the bound to notice.
    file.take(MAX_SCENARIO_BYTES + 1).read_to_end(&mut bytes).map_err(|e| unreadable(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(unreadable(format!("larger than the {MAX_SCENARIO_BYTES}-byte limit for a scenario")));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let text = String::from_utf8_lossy(&e.as_bytes()[..good]).into_owned();
        let (line, column) = line_col(&text, good);
        ScenarioError { path: path.to_path_buf(), line, column, message: "not UTF-8: a scenario file is UTF-8 text".into() }
    })
}

/// Opening never blocks, even if the path became a FIFO after the check.
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000; // Linux
    std::fs::OpenOptions::new().read(true).custom_flags(O_NONBLOCK).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.toml");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(read(&fifo).unwrap_err().message.contains("not a regular file"));
        let zero = dir.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(read(&zero).unwrap_err().message.contains("not a regular file"));
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_SCENARIO_BYTES as usize + 1]).unwrap();
        assert!(read(&big).unwrap_err().message.contains("limit"));
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, b"id = \"x\"\ntitle = \"\xff\"\n").unwrap();
        assert_eq!(read(&bad).unwrap_err().to_string(), format!("{}:2:10: not UTF-8: a scenario file is UTF-8 text", bad.display()));
    }

    #[test]
    fn directory_links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.toml"), "").unwrap();
        std::os::unix::fs::symlink("/", dir.path().join("root")).unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("loop.toml")).unwrap();
        assert_eq!(discover(dir.path()).unwrap(), vec![dir.path().join("a.toml")]);
    }
}
