//! Stopping a run in order on SIGINT or SIGTERM: the handler only records
//! the signal; the runner then starts no more trials, each running trial
//! notices within [`POLL`] and kills what it started (its supervised shim,
//! its provider processes), and the CLI writes the reports of what finished.
//! A second signal ends the process at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How often a waiting trial looks whether the run was stopped.
pub const POLL: Duration = Duration::from_millis(50);

static STOPPED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicUsize = AtomicUsize::new(0);

/// Handles SIGINT and SIGTERM from now on (the CLI's `run`).
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as the previous signal left it.
        flag::register_conditional_shutdown(sig, 128 + sig, &STOPPED)?;
        flag::register_usize(sig, &SIGNAL, sig as usize)?;
        flag::register(sig, &STOPPED)?;
    }
    Ok(())
}

/// Whether the run was asked to stop.
pub fn requested() -> bool {
    STOPPED.load(Ordering::SeqCst)
}

/// The signal that stopped the run, if one did.
pub fn signal() -> Option<i32> {
    let sig = SIGNAL.load(Ordering::SeqCst);
    (requested() && sig != 0).then_some(sig as i32)
}

/// `SIGINT`, `SIGTERM`: the name of a stopping signal, for messages.
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        other => format!("signal {other}"),
    }
}

/// Why [`recv_until`] got nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoMessage {
    /// The run was stopped while waiting.
    Stopped,
    TimedOut,
    /// The sender is gone.
    Disconnected,
}

/// The next message from `rx` by `deadline`, looking every [`POLL`] whether
/// the run was stopped.
pub fn recv_until<T>(rx: &Receiver<T>, deadline: Instant) -> Result<T, NoMessage> {
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now()).min(POLL)) {
            Ok(message) => return Ok(message),
            Err(RecvTimeoutError::Disconnected) => return Err(NoMessage::Disconnected),
            Err(RecvTimeoutError::Timeout) if requested() => return Err(NoMessage::Stopped),
            Err(RecvTimeoutError::Timeout) if Instant::now() >= deadline => return Err(NoMessage::TimedOut),
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}
