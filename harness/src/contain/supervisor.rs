//! The supervisor process itself (`conformance supervise -- PROGRAM ARGS...`).
//!
//! It is a child subreaper, so every process below it that loses its parent
//! (a `setsid` plus double fork included) becomes its child instead of
//! init's, and it can find and kill the whole tree. It runs PROGRAM with its
//! own stdio, then waits. When PROGRAM exits, or on SIGTERM, SIGINT or SIGHUP
//! (the harness's request, or its death through the parent-death signal), it
//! SIGKILLs every descendant, reaps them all, and exits as PROGRAM did.
//!
//! One thread, signals blocked and taken with `sigwaitinfo`: no handler, no
//! race between a signal and a wait, and no child reaped while its pid is
//! about to be signalled.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// While ending the tree, how often to look for descendants again: one that
/// a dying descendant forked is reparented here without any signal.
const RESCAN: libc::timespec = libc::timespec { tv_sec: 0, tv_nsec: 50_000_000 };

pub fn main_with_args(args: Vec<String>) -> i32 {
    let args = match args.split_first() {
        Some((dashes, rest)) if dashes == "--" => rest,
        _ => &args[..],
    };
    let Some((program, rest)) = args.split_first() else {
        eprintln!("supervise: usage: supervise -- PROGRAM ARGS...");
        return 2;
    };
    let (set, old) = match prepare() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("supervise: {e}");
            return 2;
        }
    };
    let mut cmd = Command::new(program);
    cmd.args(rest);
    // SAFETY: sigprocmask and prctl are async-signal-safe and touch nothing
    // of ours; the program gets the mask we were started with, and dies if
    // we are SIGKILLed (our own handling cannot run then).
    unsafe {
        cmd.pre_exec(move || {
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("supervise: cannot start `{program}`: {e}");
            return 127;
        }
    };
    release_stdio();
    let status = supervise(child.id() as libc::pid_t, &set);
    finish(status)
}

/// Subreaper, default dispositions, and the signals we wait for blocked.
/// Returns the set and the mask to restore for the program.
fn prepare() -> Result<(libc::sigset_t, libc::sigset_t), String> {
    // SAFETY: plain syscalls on values we own.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(format!("cannot become a child subreaper: {}", std::io::Error::last_os_error()));
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGCHLD] {
            // An inherited SIG_IGN for SIGCHLD would reap children behind our back.
            libc::signal(sig, libc::SIG_DFL);
            libc::sigaddset(&mut set, sig);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
        Ok((set, old))
    }
}

/// Our stdin and stdout belong to the program alone: when it closes them, or
/// dies, the harness must see end of file without waiting for us.
fn release_stdio() {
    // SAFETY: replaces fds 0 and 1 with /dev/null; nothing else uses them here.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
}

/// Waits for the program, ends the tree, and returns the program's wait status.
fn supervise(program: libc::pid_t, set: &libc::sigset_t) -> libc::c_int {
    let mut status = None;
    let mut ending = false;
    loop {
        // Reap whatever ended; no children at all means the tree is gone.
        loop {
            let mut st = 0;
            // SAFETY: waitpid writes only `st`.
            let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if pid == program {
                status = Some(st);
                ending = true;
            } else if pid == 0 {
                break;
            } else if pid < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // ECHILD: the program was reaped before, so `status` is set.
                return status.unwrap_or(0);
            }
        }
        if ending {
            kill_descendants();
        }
        // SAFETY: waits for one of the blocked signals in `set`.
        let sig = unsafe {
            if ending {
                libc::sigtimedwait(set, std::ptr::null_mut(), &RESCAN)
            } else {
                libc::sigwaitinfo(set, std::ptr::null_mut())
            }
        };
        if matches!(sig, libc::SIGTERM | libc::SIGINT | libc::SIGHUP) {
            ending = true;
        }
    }
}

/// SIGKILLs every process below us. Our own children cannot be reaped (and
/// their pids reused) meanwhile, since only this thread reaps them.
fn kill_descendants() {
    let me = std::process::id() as libc::pid_t;
    for pid in super::tree::descendants(me) {
        // SAFETY: a signal to a process below us.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// Exits as the program did: its exit code, or death by the same signal.
fn finish(status: libc::c_int) -> i32 {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: restores the default action, unblocks everything and
        // raises the signal on ourselves; no core file for a mirrored crash.
        unsafe {
            let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            libc::signal(sig, libc::SIG_DFL);
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::raise(sig);
        }
        return 128 + sig;
    }
    libc::WEXITSTATUS(status)
}
