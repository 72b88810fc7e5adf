//! The errors a driver reports.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    /// Stable machine-readable kind (`invalid-policy`, `provider-rejected` ...).
    pub kind: String,
    pub message: String,
}

impl DriverError {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> DriverError {
        DriverError { kind: kind.into(), message: message.into() }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for DriverError {}

impl From<crate::spec::SpecError> for DriverError {
    fn from(e: crate::spec::SpecError) -> DriverError {
        DriverError::new(e.kind, e.message)
    }
}
