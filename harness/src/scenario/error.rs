//! The one error a scenario file gives, located as `file:line:col`.

use std::path::{Path, PathBuf};

/// A scenario file that could not be used, located as precisely as known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.path.display(), self.line, self.column, self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// A file or directory that could not be read at all (no position).
    pub fn unreadable(path: &Path, message: String) -> ScenarioError {
        ScenarioError { path: path.to_path_buf(), line: 0, column: 0, message }
    }
}
