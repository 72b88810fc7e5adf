//! One channel per driver carries everything its loop must react to: lines
//! from the child process and calls arriving on the bridge.

use std::sync::mpsc::Sender;

use serde_json::Value;

#[derive(Debug)]
pub enum Event {
    /// A line from child process `generation` (stale generations are dropped).
    Child { generation: u64, line: Result<Value, String> },
    /// Child `generation` closed its output.
    ChildExited { generation: u64 },
    Bridge(BridgeCall),
}

/// One `tools/call` the child made on the bridge, waiting for its answer.
#[derive(Debug)]
pub struct BridgeCall {
    pub tool: String,
    pub arguments: Value,
    pub meta: Value,
    pub reply: Sender<Value>,
}
