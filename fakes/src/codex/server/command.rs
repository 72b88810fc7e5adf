//! A `command` request step as real Codex plays it: the model asks to run
//! a shell command outside the sandbox (`exec_command` with
//! `sandbox_permissions: "require_escalated"`, as the mock model does), so
//! the CLI puts a commandExecution item up and asks the client first.
//! Accepted, the command runs and the model gets its output; declined, the
//! model is told it was rejected; cancelled, the turn ends there (measured
//! 2026-12-06 on 0.146.1..0.171.0 through `conformance record`).

use serde_json::{json, Value};

use super::channel::{classify_decision, recorded};
use super::shapes::now_ms;
use super::thread::State;
use super::turn::{Ended, Turn};
use crate::model::{COMMAND, COMMAND_OUTPUT, COMMAND_REASON};

impl Turn<'_> {
    /// Plays request step `step` as the model's command call `call_<step>`.
    pub(crate) fn command_request(&mut self, ctx: &Value, step: usize) -> Ended {
        let call_id = format!("call_{step}");
        let shell = login_shell();
        let command = format!("{shell} -lc '{COMMAND}'");
        let cwd = self.thread.info["cwd"].clone();
        let actions = json!([{"type": "unknown", "command": COMMAND}]);
        let item = |status: &str, source: &str, output: Value, exit: Value, pid: Value| {
            json!({"type": "commandExecution", "id": call_id, "pluginId": null, "scriptPath": null, "command": command, "cwd": cwd,
                   "processId": pid, "source": source, "status": status, "commandActions": actions,
                   "aggregatedOutput": output, "exitCode": exit, "durationMs": if status == "completed" { json!(0) } else { Value::Null }})
        };
        self.model_item(json!({"type": "function_call", "call_id": call_id, "name": "exec_command"}));
        // Under `never` (or granular without sandbox approval) nobody can be
        // asked: refused before any item.
        if let Some(policy) = escalation_refused(&self.thread.approval_policy) {
            let text = format!("approval policy is {policy}; reject command \u{2014} you cannot ask for escalated permissions if the approval policy is {policy}");
            return self.refused_unasked(ctx, step, "item/commandExecution/requestApproval", &call_id, &text);
        }
        let thread_id = self.thread.id.clone();
        self.channel.notify("thread/status/changed", json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": ["waitingOnApproval"]}}));
        let started_ms = now_ms();
        self.item_started(ctx, item("inProgress", "agent", Value::Null, Value::Null, Value::Null), started_ms);
        let amendment: Vec<&str> = COMMAND.split(' ').collect();
        let mut params = json!({"threadId": thread_id, "turnId": ctx["turnId"], "itemId": call_id, "startedAtMs": started_ms,
            "environmentId": "local", "reason": COMMAND_REASON, "command": command, "cwd": cwd, "commandActions": actions,
            "proposedExecpolicyAmendment": amendment,
            "availableDecisions": ["accept", {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": amendment}}, "cancel"]});
        if self.profile.command_approval_has_kind() {
            params["kind"] = json!("command");
        }
        // Unlike an MCP tool's approval, later calls' _meta does not say the user was asked.
        let reply = self.channel.ask(&thread_id, "item/commandExecution/requestApproval", params);
        let answer = classify_decision(&reply);
        let accepted = matches!(answer, "accept" | "accept-for-session" | "accept-with-amendment");
        let idle = json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": []}});
        let (status, model_saw) = if accepted {
            self.channel.notify("thread/status/changed", idle);
            let delta = json!({"threadId": thread_id, "turnId": ctx["turnId"], "itemId": call_id, "delta": format!("{COMMAND_OUTPUT}\n")});
            self.channel.notify("item/commandExecution/outputDelta", delta);
            let done = item("completed", "unifiedExecStartup", json!(format!("{COMMAND_OUTPUT}\n")), json!(0), json!((u64::from(std::process::id()) * 1000 + step as u64).to_string()));
            self.item_completed(ctx, done, started_ms);
            ("completed", format!("Chunk ID: {:06x}\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\n{COMMAND_OUTPUT}\n", now_ms() & 0xff_ffff))
        } else {
            // A JSON-RPC error or a reply Codex cannot read fails the item
            // (both measured; no reply is taken alike); a decline or cancel
            // declines it.
            let unreadable = matches!(answer, "error" | "malformed" | "none");
            let (status, why) = if unreadable { ("failed", "approval request failed") } else { ("declined", "rejected by user") };
            self.item_completed(ctx, item(status, "agent", Value::Null, Value::Null, Value::Null), started_ms);
            self.channel.notify("thread/status/changed", idle);
            (status, self.profile.command_rejected(&command, why))
        };
        let cancelled = answer == "cancel";
        let raw = recorded(&reply);
        let saw = if cancelled { Value::Null } else { json!(model_saw) };
        self.rec.record(&json!({"event": "outcome", "step": step, "method": "item/commandExecution/requestApproval", "prompted": true,
                                "answer": answer, "reply": raw, "item_status": status, "model_saw": saw}));
        if cancelled {
            return self.cancelled(ctx, step, &call_id);
        }
        self.call_answered(ctx, &call_id);
        Ended::Answered
    }

    /// A command or patch whose prompt the client cancelled: its call gets
    /// an output, the response that asked for it still reports its usage
    /// (both in the rollout, measured on 0.151.0), and the model is shown
    /// the aborted call at the thread's next turn.
    pub(super) fn cancelled(&mut self, ctx: &Value, step: usize, call_id: &str) -> Ended {
        let mut state: State = self.script.load_state();
        state.aborted.push((self.thread.id.clone(), step));
        self.script.save_state(&state);
        self.thread.rollout.write("response_item", json!({"type": "function_call_output", "call_id": call_id}));
        self.model_responded(ctx);
        Ended::Cancelled
    }

    /// A request nobody may be asked is refused before any item; the model
    /// is told why.
    pub(super) fn refused_unasked(&mut self, ctx: &Value, step: usize, method: &str, call_id: &str, model_saw: &str) -> Ended {
        self.rec.record(&json!({"event": "outcome", "step": step, "method": method, "prompted": false,
                                "answer": null, "item_status": null, "model_saw": model_saw}));
        self.call_answered(ctx, call_id);
        Ended::Answered
    }
}

/// The approval policy, as Codex prints it (Rust's Debug), when it lets
/// nobody be asked to run outside the sandbox: `never`, or granular with
/// `sandbox_approval` false (absent fields read false). Codex names it in
/// what it tells the model of a refused command (measured the same in
/// 0.146.1, 0.150.0, 0.162.0 and 0.171.0).
pub(super) fn escalation_refused(policy: &Value) -> Option<String> {
    if policy.as_str() == Some("never") {
        return Some("Never".into());
    }
    let granular = policy.get("granular")?;
    let flag = |k: &str| granular.get(k).and_then(Value::as_bool).unwrap_or(false);
    if flag("sandbox_approval") {
        return None;
    }
    let fields = ["sandbox_approval", "rules", "skill_approval", "request_permissions", "mcp_elicitations"];
    let shown: Vec<String> = fields.iter().map(|k| format!("{k}: {}", flag(k))).collect();
    Some(format!("Granular(GranularApprovalConfig {{ {} }})", shown.join(", ")))
}

/// The shell Codex runs commands with: the user's login shell from the
/// password database, as Codex looks it up.
fn login_shell() -> String {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0).to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 7 && f[2] == uid)
        .map(|f| f[6].to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/sh".into())
}
