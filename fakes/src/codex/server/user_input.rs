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
        let model_saw = reply.as_ref().map_or(Value::Null, |r| json!(told(r.result.as_ref()).to_string()));
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

/// What the model is told of the client's reply: the answers Codex read from
/// it, as JSON, nothing else of the result; an error or a result it cannot
/// read gives empty answers (request-kinds.json user_input_feature,
/// user_input_error, user_input_malformed, user_input_extra).
fn told(result: Option<&Value>) -> Value {
    let read = |a: &Value| a.get("answers").and_then(Value::as_array).is_some_and(|l| l.iter().all(Value::is_string));
    match result.and_then(|r| r.get("answers")).and_then(Value::as_object) {
        Some(answers) if answers.values().all(read) => {
            json!({"answers": answers.iter().map(|(k, a)| (k.clone(), json!({"answers": a["answers"]}))).collect::<serde_json::Map<_, _>>()})
        }
        _ => json!({"answers": {}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_told_only_the_answers_codex_reads() {
        let dev = json!({"branch": {"answers": ["dev"]}});
        assert_eq!(told(Some(&json!({"answers": dev, "extra": 1}))), json!({"answers": dev}));
        assert_eq!(told(Some(&json!({"answers": {"branch": {"answers": ["dev"], "note": "x"}}}))), json!({"answers": dev}));
        for unreadable in [None, Some(json!({"bogus": 1})), Some(json!({"answers": {"branch": "dev"}})), Some(json!({"answers": []}))] {
            assert_eq!(told(unreadable.as_ref()), json!({"answers": {}}), "{unreadable:?}");
        }
    }
}
