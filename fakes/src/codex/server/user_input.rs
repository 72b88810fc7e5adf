//! A `user_input` request step as real Codex plays it: the model calls
//! request_user_input (the mock model does, with
//! [`user_input_call_arguments`]), which a Default-mode turn allows only
//! with config's `[features] default_mode_request_user_input` (the real-run
//! wrapper turns it on); Codex marks the thread waiting on user input, passes
//! the question on to the client, and gives the model the client's answers.
//! No item stands for the call (measured 2026-12-07 on 0.146.1, 0.147.0,
//! 0.149.1, 0.150.0 and 0.171.0: recordings/labs/codex/<V>/request-kinds.json
//! user_input_feature).

use serde_json::{json, Value};

use super::channel::{classify_user_input, recorded};
use super::turn::Turn;
use crate::model::user_input_call_arguments;

impl Turn<'_> {
    /// Plays request step `step` as the model's request_user_input call `call_<step>`.
    pub(crate) fn user_input_request(&mut self, ctx: &Value, step: usize) {
        let call_id = format!("call_{step}");
        self.model_item(json!({"type": "function_call", "call_id": call_id, "name": "request_user_input"}));
        let thread_id = self.thread.id.clone();
        let flags = |f: Value| json!({"threadId": thread_id, "status": {"type": "active", "activeFlags": f}});
        self.channel.notify("thread/status/changed", flags(json!(["waitingOnUserInput"])));
        let mut params = ctx.clone();
        params["itemId"] = json!(call_id);
        params["questions"] = asked_questions();
        // Only Plan mode's request is blocking.
        if self.profile.user_input_has_is_blocking() {
            params["isBlocking"] = json!(false);
        }
        params["autoResolutionMs"] = Value::Null;
        self.call_meta.asked_user();
        let reply = self.channel.ask(&thread_id, "item/tool/requestUserInput", params);
        self.channel.notify("thread/status/changed", flags(json!([])));
        let answer = classify_user_input(&reply);
        // The model gets the client's result as JSON (measured with answers
        // and empty answers; what it gets for an error is not measured).
        let model_saw = reply.as_ref().and_then(|r| r.result.as_ref()).map_or(Value::Null, |r| json!(r.to_string()));
        self.rec.record(&json!({"event": "outcome", "step": step, "method": "item/tool/requestUserInput", "prompted": true,
                                "answer": answer, "reply": recorded(&reply), "model_saw": model_saw}));
        self.call_answered(ctx, &call_id);
    }
}

/// The model's questions as Codex passes them on: each says the user may
/// answer otherwise (`isOther`) and is no secret.
fn asked_questions() -> Value {
    let mut questions = user_input_call_arguments()["questions"].take();
    for q in questions.as_array_mut().into_iter().flatten() {
        q["isOther"] = json!(true);
        q["isSecret"] = json!(false);
    }
    questions
}
