//! Limits and switches a user sets through the environment.

use std::time::Duration;

/// Per-trial limit; CONFORMANCE_TRIAL_TIMEOUT (seconds) overrides it.
pub fn trial_timeout() -> Duration {
    std::env::var("CONFORMANCE_TRIAL_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(60))
}

/// CONFORMANCE_KEEP=1 keeps the run directories of failed trials, =all of
/// every trial.
pub fn keep_run_dir(failed: bool) -> bool {
    let keep = std::env::var("CONFORMANCE_KEEP").unwrap_or_default();
    keep == "all" || (!keep.is_empty() && failed)
}
