//! Conformance harness for per-tool MCP approval policies in coding-agent
//! drivers: scenario files in, verdicts out.
//!
//! The pipeline, each stage only looking at the ones before it:
//! [`scenario`] (the data) -> [`plan`] (which trials exist) -> [`trial`]
//! (run one, observe) -> [`verdict`] (judge) -> [`runner`] (many, in
//! parallel, into `reports`) -> [`recordings`] (the fakes replayed against
//! recordings of the real CLIs). The drivers under test sit beside it:
//! [`driver`] (the trait), [`reference`], [`mutants`], [`shim`], chosen by
//! [`source`]; a shim runs under a per-trial supervisor ([`contain`]), and
//! [`stop`] ends a run in order on SIGINT or SIGTERM.

pub mod agreement;
pub mod atomic;
pub mod bench;
pub mod bisect;
pub mod cache;
pub mod command;
pub mod contain;
pub mod differential;
pub mod driver;
pub mod examples;
pub mod fuzzing;
pub mod generate;
pub mod limits;
pub mod matrix;
pub mod mutants;
pub mod partition;
pub mod plan;
pub mod probes;
pub mod pool;
pub mod recordings;
pub mod reference;
pub mod runner;
pub mod scenario;
pub mod schema;
pub mod shim;
pub mod source;
pub mod stop;
pub mod trial;
pub mod verdict;
pub mod versions;
