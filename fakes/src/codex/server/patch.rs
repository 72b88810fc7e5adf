//! A `file_change` request step as real Codex plays it: the model runs
//! `apply_patch` as a shell command (as the mock model does), Codex takes
//! it over as a patch, and since the sandbox is read-only it puts a
//! fileChange item up and asks the client first. Accepted, the file is
//! written and the model told so; declined, the model hears "patch rejected
//! by user"; an unreadable reply declines it too; cancelled, the item never
//! completes and the turn ends there. Measured 2026-12-06 on 0.146.1..
//! 0.171.0 (the same in every release), by scripts/labs and `conformance
//! record` of scenarios/file-change-requests-go-to-host.toml.

use serde_json::{json, Value};

use super::channel::{classify_decision, recorded};
use super::command::escalation_refused;
use super::shapes::now_ms;
use super::turn::{Ended, Turn};
use crate::model::{patch_file, PATCH_LINE};

impl Turn<'_> {
    /// Plays request step `step` as the model's patch call `call_<step>`.
    pub(crate) fn patch_request(&mut self, ctx: &Value, step: usize) -> Ended {
        const METHOD: &str = "item/fileChange/requestApproval";
        let call_id = format!("call_{step}");
        let file = patch_file(step);
        let cwd = self.thread.info["cwd"].as_str().unwrap_or("").to_string();
        let changes = json!([{"path": format!("{cwd}/{file}"), "kind": {"type": "add"}, "diff": format!("{PATCH_LINE}\n")}]);
        let item = |status: &str| json!({"type": "fileChange", "id": call_id, "changes": changes, "status": status});
        self.model_item(json!({"type": "function_call", "call_id": call_id, "name": "exec_command"}));
        // Nobody may be asked (`never`, or granular without sandbox
        // approval): refused before any item.
        if escalation_refused(&self.thread.approval_policy).is_some() {
            return self.refused_unasked(ctx, step, METHOD, &call_id, REFUSED);
        }
        let thread_id = self.thread.id.clone();
        let started_ms = now_ms();
        self.item_started(ctx, item("inProgress"), started_ms);
        let waiting = |flags: Value| json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": flags}});
        self.channel.notify("thread/status/changed", waiting(json!(["waitingOnApproval"])));
        let params = json!({"threadId": thread_id, "turnId": ctx["turnId"], "itemId": call_id, "startedAtMs": started_ms,
                            "reason": null, "grantRoot": null});
        let reply = self.channel.ask(&thread_id, METHOD, params);
        let answer = classify_decision(&reply);
        self.channel.notify("thread/status/changed", waiting(json!([])));
        let raw = recorded(&reply);
        if answer == "cancel" {
            self.rec.record(&json!({"event": "outcome", "step": step, "method": METHOD, "prompted": true,
                                    "answer": answer, "reply": raw, "item_status": null, "model_saw": null}));
            return self.cancelled(ctx, step, &call_id);
        }
        let (status, model_saw) = match answer {
            "accept" | "accept-for-session" | "accept-with-amendment" => {
                let _ = std::fs::write(std::path::Path::new(&cwd).join(&file), format!("{PATCH_LINE}\n"));
                ("completed", format!("Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA {file}\n"))
            }
            // A JSON-RPC error or a reply Codex cannot read declines the patch
            // (measured), but the model is told why.
            "error" | "malformed" | "none" => ("declined", "approval request failed".to_string()),
            _ => ("declined", "patch rejected by user".to_string()),
        };
        self.item_completed(ctx, item(status), started_ms);
        if status == "completed" {
            self.patched.push(file.clone());
            self.turn_diff(ctx);
        }
        self.rec.record(&json!({"event": "outcome", "step": step, "method": METHOD, "prompted": true,
                                "answer": answer, "reply": raw, "item_status": status, "model_saw": model_saw}));
        self.call_answered(ctx, &call_id);
        Ended::Answered
    }

    /// turn/diff/updated: the turn's diff so far, as git shows it (every
    /// file this turn's patches added).
    pub(super) fn turn_diff(&mut self, ctx: &Value) {
        let diff: String = self.patched.iter().map(|f| added_file_diff(f)).collect();
        self.channel.notify("turn/diff/updated", json!({"threadId": ctx["threadId"], "turnId": ctx["turnId"], "diff": diff}));
    }
}

/// What the model is told of a patch nobody may be asked about, under the
/// read-only sandbox every driver here asks for.
const REFUSED: &str = "patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings";

/// `git diff` of a new file holding the one line [`PATCH_LINE`].
fn added_file_diff(file: &str) -> String {
    format!("diff --git a/{file} b/{file}\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..{PATCH_BLOB}\n--- /dev/null\n+++ b/{file}\n@@ -0,0 +1 @@\n+{PATCH_LINE}\n")
}

/// Git's blob id of the added file's content, "approved\n" (`git hash-object`).
const PATCH_BLOB: &str = "367ff430540e7bc5c23d699de65ee5af6706b274";
