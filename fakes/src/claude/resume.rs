//! Which session a process continues (`--session-id`, `--resume`,
//! `--continue`, `--fork-session`), from the per-run state that knows the
//! sessions of earlier processes.

use super::cli::Options;
use super::profile;
use super::uuid::{is_uuid, new_uuid};

pub struct SessionError {
    pub message: String,
    /// Session id of the error result the real CLI prints on stdout.
    pub result_session: Option<String>,
}

pub fn resolve_session(opts: &Options, state: &State) -> Result<String, SessionError> {
    let err = |m: String, s: Option<String>| SessionError { message: m, result_session: s };
    if (opts.resume.is_some() || opts.continue_session) && opts.session_id.is_some() && !opts.fork_session {
        return Err(err(profile::SESSION_ID_NEEDS_FORK.into(), None));
    }
    if let Some(id) = &opts.session_id {
        if !is_uuid(id) {
            return Err(err(profile::INVALID_SESSION_ID.into(), None));
        }
        if state.sessions.contains(id) {
            return Err(err(profile::session_id_in_use(id), None));
        }
    }
    let fresh = || opts.session_id.clone().unwrap_or_else(new_uuid);
    let resumed = if let Some(r) = &opts.resume {
        if !is_uuid(r) {
            return Err(err(profile::resume_not_uuid(r), Some(new_uuid())));
        }
        if !state.sessions.contains(r) {
            return Err(err(profile::no_conversation(r), Some(r.clone())));
        }
        r.clone()
    } else if opts.continue_session {
        match state.sessions.last() {
            Some(s) => s.clone(),
            None => return Err(err(profile::NOTHING_TO_CONTINUE.into(), None)),
        }
    } else {
        return Ok(fresh());
    };
    Ok(if opts.fork_session { fresh() } else { resumed })
}

/// Per-run state kept across the driver's `claude -p` processes.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct State {
    pub next_turn: usize,
    pub sessions: Vec<String>,
    /// Prompts each session has had: a resumed conversation carries them.
    #[serde(default)]
    pub prompts: std::collections::BTreeMap<String, usize>,
    /// Deferred tools each session loaded with ToolSearch: a resumed
    /// conversation still has them (measured through both Agent SDKs'
    /// resume, 2.1.332 and 2.1.334).
    #[serde(default)]
    pub loaded: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl State {
    /// Keeps what the session loaded during its turn for a later process.
    pub fn keep_loaded(&mut self, session_id: &str, loaded: &std::collections::BTreeSet<String>, script: &crate::script::Script) {
        self.loaded.insert(session_id.to_string(), loaded.clone());
        script.save_state(self);
    }
}
