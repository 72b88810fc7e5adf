//! The process tree below a process, read from /proc.

use std::collections::BTreeMap;

/// Every living process below `root` (zombies left out: they have ended).
pub fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let mut children: BTreeMap<libc::pid_t, Vec<libc::pid_t>> = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<libc::pid_t>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        if let Some((state, ppid)) = parse_stat(&stat) {
            if state != 'Z' {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(p) = next.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or_default() {
            found.push(c);
            next.push(c);
        }
    }
    found
}

/// Whether `pid` still runs: a zombie has ended (where init is slow to reap,
/// it lingers).
pub fn alive(pid: libc::pid_t) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    parse_stat(&stat).is_some_and(|(state, _)| state != 'Z')
}

/// SIGKILL to one process (gone already: nothing to do). Only a positive
/// pid: 0 or -1 would signal a whole group, or everyone.
pub fn kill(pid: libc::pid_t) {
    if pid > 0 {
        // SAFETY: kill(2) with a positive pid signals that process only.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// State and parent pid from `/proc/PID/stat`; the command name before them
/// may hold spaces and parentheses, so read after its last `)`.
fn parse_stat(stat: &str) -> Option<(char, libc::pid_t)> {
    let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((state, ppid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_name_whatever_it_holds() {
        assert_eq!(parse_stat("42 (a) b) c) S 7 42 42 0"), Some(('S', 7)));
        assert_eq!(parse_stat("9 (python3) Z 1 9 9"), Some(('Z', 1)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_child_is_found_below_us_and_not_after_it_ended() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let me = std::process::id() as libc::pid_t;
        let pid = child.id() as libc::pid_t;
        assert!(descendants(me).contains(&pid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!descendants(me).contains(&pid));
    }
}
