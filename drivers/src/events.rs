//! One channel per driver carries everything its loop must react to: lines
//! from the child process and calls arriving on the bridge.

use serde_json::Value;

use crate::bridge::BridgeCall;

#[derive(Debug)]
pub enum Event {
    /// A line from child process `generation` (stale generations are dropped).
    Child { generation: u64, line: Result<Value, String> },
    /// Child `generation` closed its output.
    ChildExited { generation: u64 },
    Bridge(BridgeCall),
}
