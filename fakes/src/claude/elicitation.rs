//! A stdio server's own `elicitation/create` during a call, as the CLI
//! answers it (measured 2026-12-07 with the lab's elicit tool on 2.1.267,
//! 2.1.271..2.1.276, 2.1.286, 2.1.287, 2.1.290, 2.1.296, 2.1.299, 2.1.318
//! and 2.1.331, print mode and SDK host mode): print mode cancels it; an
//! SDK host gets it as a `control_request` of subtype `elicitation` and
//! the server gets the host's action; a URL-mode one is refused by the
//! CLI's MCP client before 2.1.287, which announces no elicitation modes.

use serde_json::{json, Value};

use super::profile::Profile;

/// The JSON-RPC error the CLI answers a URL-mode elicitation with when its
/// client announced no `url` mode; None when it handles it.
pub fn url_refusal(profile: &Profile, params: &Value) -> Option<Value> {
    if params.get("mode").and_then(Value::as_str) != Some("url") || profile.announces_elicitation_modes() {
        return None;
    }
    let text = "Client does not support URL-mode elicitation requests";
    let message = if profile.prefixes_url_refusal() { format!("MCP error -32602: {text}") } else { text.to_string() };
    Some(json!({"code": -32602, "message": message}))
}

/// The `control_request` body an SDK host gets for `server`'s elicitation;
/// a form's `property_order` (its field names) is there from 2.1.299 (not
/// in 2.1.296), so in every release the fake runs SDK host mode (2.1.326 on).
pub fn control_request(server: &str, params: &Value) -> Value {
    let message = params.get("message").cloned().unwrap_or(json!(""));
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        return json!({"subtype": "elicitation", "mcp_server_name": server, "message": message, "mode": "url",
                      "url": params.get("url").cloned().unwrap_or(Value::Null),
                      "elicitation_id": params.get("elicitationId").cloned().unwrap_or(Value::Null)});
    }
    let schema = params.get("requestedSchema").cloned().unwrap_or(json!({}));
    let mut request = json!({"subtype": "elicitation", "mcp_server_name": server, "message": message, "mode": "form", "requested_schema": schema});
    let order: Vec<Value> = schema.get("properties").and_then(Value::as_object).map(|p| p.keys().map(|k| json!(k)).collect()).unwrap_or_default();
    request["property_order"] = json!(order);
    request
}

/// The host's action, when its reply (a control_response's `response`)
/// is a success naming accept, decline or cancel.
pub fn host_action(reply: Option<&Value>) -> Option<&str> {
    let reply = reply.filter(|r| r.get("subtype").and_then(Value::as_str) == Some("success"))?;
    let action = reply.pointer("/response/action").and_then(Value::as_str)?;
    ["accept", "decline", "cancel"].contains(&action).then_some(action)
}

/// The host's answer in a word, for the judge: its action, `error` (an
/// error reply), `invalid` (a success the CLI cannot read) or `none`.
pub fn answer_word(reply: Option<&Value>) -> &'static str {
    match (host_action(reply), reply) {
        (Some("accept"), _) => "accept",
        (Some("decline"), _) => "decline",
        (Some(_), _) => "cancel",
        (None, None) => "none",
        (None, Some(r)) if r.get("subtype").and_then(Value::as_str) == Some("error") => "error",
        (None, Some(_)) => "invalid",
    }
}

/// What the server gets for the host's reply: the action and any content
/// (nothing else of the reply: `_meta` and other fields are dropped), and
/// cancel for an error, an empty answer or an unknown action.
pub fn passed_back(reply: Option<&Value>) -> Value {
    let Some(action) = host_action(reply) else {
        return json!({"action": "cancel"});
    };
    let mut back = json!({"action": action});
    if let Some(content) = reply.and_then(|r| r.pointer("/response/content")) {
        back["content"] = content.clone();
    }
    back
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;

    fn at(patch: u32) -> Profile {
        Profile { version: Version::new(2, 1, patch) }
    }

    #[test]
    fn url_mode_is_refused_before_the_client_announces_it() {
        let url = json!({"mode": "url", "message": "m", "url": "https://x.invalid/", "elicitationId": "e"});
        assert_eq!(url_refusal(&at(273), &url).unwrap()["message"], "MCP error -32602: Client does not support URL-mode elicitation requests");
        assert_eq!(url_refusal(&at(286), &url).unwrap()["message"], "Client does not support URL-mode elicitation requests");
        assert_eq!(url_refusal(&at(287), &url), None);
        assert_eq!(url_refusal(&at(267), &json!({"message": "form"})), None);
    }

    #[test]
    fn the_host_request_has_the_measured_fields() {
        let form = json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}});
        assert_eq!(control_request("srv", &form)["property_order"], json!(["name"]));
        let url = json!({"mode": "url", "message": "Sign in", "url": "https://x.invalid/", "elicitationId": "e-1"});
        assert_eq!(
            control_request("srv", &url),
            json!({"subtype": "elicitation", "mcp_server_name": "srv", "message": "Sign in", "mode": "url", "url": "https://x.invalid/", "elicitation_id": "e-1"})
        );
    }

    #[test]
    fn only_an_action_and_its_content_reach_the_server() {
        let ok = |r: Value| json!({"subtype": "success", "request_id": "r", "response": r});
        assert_eq!(passed_back(Some(&ok(json!({"action": "accept", "content": {"name": "Bob"}})))), json!({"action": "accept", "content": {"name": "Bob"}}));
        assert_eq!(passed_back(Some(&ok(json!({"action": "accept"})))), json!({"action": "accept"}));
        let extra = ok(json!({"action": "decline", "content": {"a": 1}, "x": 2, "_meta": {"m": 1}}));
        assert_eq!(passed_back(Some(&extra)), json!({"action": "decline", "content": {"a": 1}}));
        for bad in [ok(json!({})), ok(json!({"action": "maybe"})), json!({"subtype": "error", "request_id": "r", "error": "no"})] {
            assert_eq!(passed_back(Some(&bad)), json!({"action": "cancel"}));
        }
        assert_eq!(passed_back(None), json!({"action": "cancel"}));
    }
}
