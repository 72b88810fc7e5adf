//! Files written whole or not at all: a report, the README's generated
//! tables, the agreement log that hours of runs fill. A reader (or a run
//! stopped halfway) sees the old file or the new one, never half of one.

use std::io::Write;
use std::path::Path;

/// Writes `text` to `path` through a temp file in the same directory and a
/// rename.
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    // A temp file is private; a report is not.
    std::fs::set_permissions(file.path(), std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
    file.persist(path).map(drop).map_err(|e| e.error)
}

/// Replaces the text between the lines `begin` and `end` of the file at
/// `path` (the README) with `table`, errors naming the file.
pub fn write_between(path: &Path, begin: &str, end: &str, table: &str) -> Result<(), String> {
    let at = |e: String| format!("{}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| at(e.to_string()))?;
    let new = crate::matrix::splice_between(&text, begin, end, table).map_err(at)?;
    write(path, &new).map_err(|e| at(e.to_string()))
}
