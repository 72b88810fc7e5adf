//! Where the driver under test comes from: a built-in driver (the reference
//! or one of its mutants) in process, or a shim program of any language.

use crate::driver::{Driver, Failure};
use crate::mutants::mutants;
use crate::reference::{ReferenceDriver, CLAUDE_SDK, CODEX_EXEC, FAIL_CLOSED};
use crate::command::FakeCommand;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverSource {
    /// `reference`, `reference-fail-closed`, `reference-claude-sdk` or
    /// `mutant:NAME`, in process.
    Builtin(String),
    /// A shim program and its arguments (docs/driver-protocol.md).
    Shim(Vec<String>),
}

impl DriverSource {
    pub fn reference() -> DriverSource {
        DriverSource::Builtin("reference".into())
    }

    pub fn fail_closed() -> DriverSource {
        DriverSource::Builtin(FAIL_CLOSED.into())
    }

    pub fn claude_sdk() -> DriverSource {
        DriverSource::Builtin(CLAUDE_SDK.into())
    }

    pub fn codex_exec() -> DriverSource {
        DriverSource::Builtin(CODEX_EXEC.into())
    }

    pub fn mutant(name: &str) -> DriverSource {
        DriverSource::Builtin(format!("mutant:{name}"))
    }

    pub fn label(&self) -> String {
        match self {
            DriverSource::Builtin(n) => n.clone(),
            DriverSource::Shim(cmd) => cmd.join(" "),
        }
    }

    /// A fresh driver for one trial; a shim starts under `supervisor`
    /// (`Fakes::supervise`).
    pub fn make(&self, supervisor: &FakeCommand) -> Result<Box<dyn Driver>, Failure> {
        match self {
            DriverSource::Shim(cmd) => Ok(Box::new(crate::shim::ShimDriver::start(cmd, supervisor)?)),
            DriverSource::Builtin(name) => DriverSource::builtin(name),
        }
    }

    /// The source of built-in driver `name` (the reference, another
    /// reference, a mutant), if there is one by that name.
    pub fn builtin_named(name: &str) -> Option<DriverSource> {
        DriverSource::builtin(name).is_ok().then(|| DriverSource::Builtin(name.to_string()))
    }

    /// The built-in driver `name`, in process.
    pub fn builtin(name: &str) -> Result<Box<dyn Driver>, Failure> {
        match name {
            "reference" => Ok(Box::new(ReferenceDriver::new())),
            FAIL_CLOSED => Ok(Box::new(ReferenceDriver::fail_closed())),
            CLAUDE_SDK => Ok(Box::new(ReferenceDriver::claude_sdk())),
            CODEX_EXEC => Ok(Box::new(ReferenceDriver::codex_exec())),
            _ => {
                let wanted = name.strip_prefix("mutant:").unwrap_or(name);
                mutants()
                    .into_iter()
                    .find(|m| m.name == wanted)
                    .map(|m| Box::new(m.build()) as Box<dyn Driver>)
                    .ok_or_else(|| Failure::new("bad-driver", format!("no built-in driver `{name}`")))
            }
        }
    }
}
