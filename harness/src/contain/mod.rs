//! Containment of the processes a trial starts: each shim runs under its
//! own supervisor (`conformance supervise -- PROGRAM ARGS...`, see
//! [`supervisor`]), which kills everything the shim started, a process that
//! left its process group or session included, when the trial ends or the
//! harness dies.

mod supervisor;
mod tree;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub use supervisor::main_with_args as supervise;
pub(crate) use tree::{alive, kill};

use crate::command::FakeCommand;

/// How long a supervisor gets to kill and reap its tree before it is killed
/// itself; it needs milliseconds, this only bounds a broken one.
const GRACE: Duration = Duration::from_secs(10);

/// `program args` under the supervisor `supervisor` (the CLI and its
/// `supervise` argument). The supervisor leads its own process group, so a
/// Ctrl-C at the terminal reaches the harness alone, which ends trials in
/// order; and it gets SIGTERM if the thread that starts it dies, so it must
/// be started, and ended, by the thread that runs the trial.
pub fn command(supervisor: &FakeCommand, program: &str, args: &[String]) -> Command {
    let mut cmd = Command::new(&supervisor.program);
    cmd.args(&supervisor.prefix).arg("--").arg(program).args(args);
    cmd.process_group(0);
    let harness = std::process::id() as libc::pid_t;
    // SAFETY: prctl and getppid are async-signal-safe and touch nothing of
    // ours. The parent check closes the race with the harness dying before
    // the parent-death signal was set.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            if libc::getppid() != harness {
                return Err(std::io::Error::other("the harness ended"));
            }
            Ok(())
        });
    }
    cmd
}

/// Ends a supervised tree: SIGTERM asks the supervisor to kill and reap
/// everything below it, then it exits and is reaped here. A supervisor that
/// does not end within [`GRACE`] is killed with its process group.
pub fn end(child: &mut Child) {
    if !matches!(child.try_wait(), Ok(None)) {
        return; // ended and reaped already: its tree went with it
    }
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our unreaped child, so it cannot name anyone else.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            _ => return,
        }
    }
    // SAFETY: still unreaped, so the group it leads is still its own.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}
