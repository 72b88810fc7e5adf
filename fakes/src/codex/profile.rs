//! What each Codex version does, as measured on the real binaries
//! (../shared/PROVIDERS.md). Behaviour is keyed on version thresholds so any
//! version between the measured ones gets the nearest measured behaviour.

use crate::version::Version;

/// Versions measured on the real binary; the suite runs one trial per version.
pub const MEASURED: [Version; 5] = [
    Version::new(0, 146, 0),
    Version::new(0, 147, 0),
    Version::new(0, 148, 0),
    Version::new(0, 153, 4),
    Version::new(0, 171, 0),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub version: Version,
}

impl Profile {
    pub fn new(version: Version) -> Profile {
        Profile { version }
    }

    /// From 0.148.0 a call that needs approval under `never` fails in the CLI
    /// instead of sending the elicitation.
    pub fn never_denies_in_cli(&self) -> bool {
        self.version.at_least(0, 148, 0)
    }

    /// Up to 0.162.x a float `annotations.priority` in a result block fails the
    /// item with "Unexpected response type"; 0.163.0 fixed it.
    pub fn float_priority_breaks(&self) -> bool {
        !self.version.at_least(0, 163, 0)
    }

    /// Up to 0.150.x the model gets one string with the blocks as JSON
    /// (annotations kept); from 0.152.1 an array of input_text parts.
    pub fn output_as_input_text_array(&self) -> bool {
        self.version.at_least(0, 152, 1)
    }

    /// `{readOnlyHint:true, destructiveHint:true}` prompts up to 0.167.x and
    /// not in 0.171.0; the versions between were not measured.
    pub fn read_only_wins_over_destructive(&self) -> bool {
        self.version.at_least(0, 171, 0)
    }

    /// Elicitation `_meta.tool_name` appears in 0.167.2.
    pub fn elicitation_has_tool_name(&self) -> bool {
        self.version.at_least(0, 167, 2)
    }

    /// Elicitation params carry `environmentId` after 0.169.1.
    pub fn elicitation_has_environment_id(&self) -> bool {
        self.version > Version::new(0, 169, 1)
    }

    /// tools/call `_meta` gains callId and itemId in 0.153.4.
    pub fn call_meta_has_call_id(&self) -> bool {
        self.version.at_least(0, 153, 4)
    }

    /// tools/call `_meta` gains sessionId and windowId in 0.171.0.
    pub fn call_meta_has_session_id(&self) -> bool {
        self.version.at_least(0, 171, 0)
    }
}
