//! Conformance harness for per-tool MCP approval policies in coding-agent
//! drivers: scenario files in, verdicts out.

pub mod bench;
pub mod driver;
pub mod expected;
pub mod fidelity;
pub mod judge;
pub mod real;
pub mod reference;
pub mod run;
pub mod scenario;
pub mod schema;
pub mod shim;
pub mod suite;
