//! exec sessions across the run's processes, kept in the script's state
//! file: which thread a `resume` continues, and which script turn comes next.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::args::Resume;
use crate::script::Script;
use crate::codex::profile;
use crate::uuid::{is_uuid, new_uuid};

/// The app-server fake's state fields plus exec's sessions (a run uses one
/// of the two commands).
#[derive(Default, Serialize, Deserialize)]
struct State {
    #[serde(default)]
    next_turn: usize,
    #[serde(default)]
    threads: Vec<String>,
    #[serde(default)]
    exec_sessions: Vec<Session>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Session {
    id: String,
    home: String,
    cwd: String,
}

/// The thread this run works on, or `None` for a new one. `resume <id>`
/// keeps the id; `--last` takes the newest session of the same cwd and, from
/// another cwd, starts a new thread (measured on 0.146.0, 0.147.0, 0.148.0,
/// 0.163.0 and 0.171.0, exit 0).
///
/// `Err`: a `resume <uuid>` with no such session, exit 1 before stdin is
/// read. An id that is not a UUID and names no session starts a new thread,
/// exit 0 (measured on 0.146.0 and 0.171.0 with `resume notauuid PROMPT`).
pub fn find(script: &Script, resume: Option<&Resume>, home: &Path, cwd: &Path) -> Result<Option<String>, String> {
    let state: State = script.load_state();
    let (home, cwd) = (home.display().to_string(), cwd.display().to_string());
    let found = match resume {
        Some(Resume::Id(id)) => state.exec_sessions.iter().find(|s| &s.id == id && s.home == home).map(|s| s.id.clone()),
        Some(Resume::Last) => state.exec_sessions.iter().rev().find(|s| s.home == home && s.cwd == cwd).map(|s| s.id.clone()),
        None => None,
    };
    match (found, resume) {
        (None, Some(Resume::Id(id))) if is_uuid(id) => Err(profile::exec_no_rollout(id)),
        (found, _) => Ok(found),
    }
}

/// Records the session `id` (a new one when `None`) as the newest of `cwd`; returns its id.
pub fn open(script: &Script, id: Option<String>, home: &Path, cwd: &Path) -> String {
    let mut state: State = script.load_state();
    let id = id.unwrap_or_else(new_uuid);
    state.exec_sessions.retain(|s| s.id != id);
    state.exec_sessions.push(Session { id: id.clone(), home: home.display().to_string(), cwd: cwd.display().to_string() });
    state.threads.push(id.clone());
    script.save_state(&state);
    id
}

/// The script turn this process plays.
pub fn next_turn(script: &Script) -> usize {
    let mut state: State = script.load_state();
    let turn = state.next_turn;
    state.next_turn += 1;
    script.save_state(&state);
    turn
}
