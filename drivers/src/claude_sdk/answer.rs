//! The SDK host's answer to `can_use_tool`: the same decision the print
//! driver's permission prompt tool makes ([`decide`]: policy first, then the
//! host), with the host's decision mapped to the CLI's behavior object in
//! one place ([`answer`]).

use serde_json::{json, Value};

use crate::claude::respond::decide;
use crate::codex::respond::Context;
use crate::gateway::binding::{GatewayEvent, ResumeAnswer};
use crate::host::{Host, HostDecision, HostPrompt};

/// The behavior object for one `can_use_tool` request about `tool_name`
/// (Claude Code's renamed `mcp__S__T`) called with `input`.
pub fn can_use_tool(tool_name: &str, input: &Value, ctx: &Context, host: &mut dyn Host) -> Value {
    let mut host = Editing { host, edit: None };
    match decide(tool_name, ctx, &mut host) {
        Ok(decision) => answer(decision, tool_name, host.edit.as_ref().unwrap_or(input)),
        // Nobody vouched for the tool: refused, the turn goes on.
        Err(why) => json!({"behavior": "deny", "message": why}),
    }
}

/// The answer to a server's own `elicitation` request (a form to fill or a
/// page to open, `mcp_server_name` asking): the host decides; nothing is
/// accepted without it. Claude Code passes the action (and any content) on
/// to the server.
pub fn elicitation(request: &Value, host: &mut dyn Host) -> Value {
    let server = request.get("mcp_server_name").and_then(Value::as_str).unwrap_or_default().to_string();
    let prompt = if request.get("mode").and_then(Value::as_str) == Some("url") {
        HostPrompt::UrlElicitation { server }
    } else {
        HostPrompt::FormElicitation { server }
    };
    host.decide(&prompt).elicit_result()
}

/// The host as [`decide`] asks it, keeping the input the host puts in
/// place of the model's when it accepts.
pub struct Editing<'a> {
    pub host: &'a mut dyn Host,
    pub edit: Option<Value>,
}

impl Host for Editing<'_> {
    fn decide(&mut self, prompt: &HostPrompt) -> HostDecision {
        let decision = self.host.decide(prompt);
        if decision == HostDecision::Accept {
            self.edit = self.host.edited_input(prompt).filter(Value::is_object);
        }
        decision
    }

    fn call_tool(&mut self, tool: &str, arguments: &Value) -> Value {
        self.host.call_tool(tool, arguments)
    }

    fn interrupt(&mut self, event: &GatewayEvent) -> ResumeAnswer {
        self.host.interrupt(event)
    }
}

/// A decision as the CLI takes it: Accept runs the call with `input` (the
/// host's edit, else the model's), Decline refuses this call, Cancel
/// refuses it and ends the turn.
pub fn answer(decision: HostDecision, tool_name: &str, input: &Value) -> Value {
    match decision {
        // `updatedInput` must be an object.
        HostDecision::Accept => json!({"behavior": "allow", "updatedInput": if input.is_object() { input.clone() } else { json!({}) }}),
        HostDecision::Decline => json!({"behavior": "deny", "message": format!("The host declined {tool_name}")}),
        HostDecision::Cancel => json!({"behavior": "deny", "message": format!("The host cancelled {tool_name}"), "interrupt": true}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{ApprovalPolicy, GlobalPolicy, McpServerSpec, ServerSet, Transport};

    struct Answers(HostDecision, Vec<HostPrompt>);

    impl Host for Answers {
        fn decide(&mut self, prompt: &HostPrompt) -> HostDecision {
            self.1.push(prompt.clone());
            self.0
        }
        fn edited_input(&mut self, prompt: &HostPrompt) -> Option<Value> {
            matches!(prompt, HostPrompt::ToolCall { tool, .. } if tool == "edited").then(|| json!({"by": "host"}))
        }
        fn call_tool(&mut self, _: &str, _: &Value) -> Value {
            json!({})
        }
        fn interrupt(&mut self, _: &GatewayEvent) -> ResumeAnswer {
            unreachable!()
        }
    }

    fn set() -> ServerSet {
        let spec = McpServerSpec {
            name: "notes".into(),
            transport: Transport::Stdio { command: "x".into(), args: vec![], env: Default::default() },
            reason: "r".into(),
            tools: [("notes.append".to_string(), ApprovalPolicy::Prompt), ("list".to_string(), ApprovalPolicy::Approve)].into(),
        };
        ServerSet::build(vec![spec]).unwrap()
    }

    fn ask(name: &str, global: GlobalPolicy, host: HostDecision) -> (Value, Vec<HostPrompt>) {
        let servers = set();
        let ctx = Context { servers: &servers, global, thread_id: "", bridge: None };
        let mut h = Answers(host, Vec::new());
        (can_use_tool(name, &json!({"a": 1}), &ctx, &mut h), h.1)
    }

    #[test]
    fn policy_first_then_the_host() {
        // A prompt tool asks the host even under auto-approve, by its declared name.
        let (v, asked) = ask("mcp__notes__notes_append", GlobalPolicy::AutoApprove, HostDecision::Accept);
        assert_eq!(v, json!({"behavior": "allow", "updatedInput": {"a": 1}}));
        assert_eq!(asked, [HostPrompt::ToolCall { server: "notes".into(), tool: "notes.append".into() }]);
        // approve, and no policy under auto-approve: settled without the host.
        assert!(ask("mcp__notes__list", GlobalPolicy::Ask, HostDecision::Decline).1.is_empty());
        let (v, asked) = ask("mcp__notes__other", GlobalPolicy::AutoApprove, HostDecision::Decline);
        assert_eq!((v["behavior"].as_str(), asked.len()), (Some("allow"), 0));
        // No policy under ask: the host.
        assert_eq!(ask("mcp__notes__other", GlobalPolicy::Ask, HostDecision::Accept).1.len(), 1);
        // Unknown tools are refused without asking.
        let (v, asked) = ask("Bash", GlobalPolicy::AutoApprove, HostDecision::Accept);
        assert_eq!((v["behavior"].as_str(), asked.len()), (Some("deny"), 0));
        assert_eq!(ask("mcp__mirror__list", GlobalPolicy::AutoApprove, HostDecision::Accept).0["behavior"], "deny");
    }

    #[test]
    fn host_answers_map_to_behaviors() {
        let (decline, _) = ask("mcp__notes__notes_append", GlobalPolicy::Ask, HostDecision::Decline);
        assert_eq!(decline["behavior"], "deny");
        assert!(decline["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(decline.get("interrupt"), None);
        let (cancel, _) = ask("mcp__notes__notes_append", GlobalPolicy::Ask, HostDecision::Cancel);
        assert_eq!((cancel["behavior"].as_str(), &cancel["interrupt"]), (Some("deny"), &json!(true)));
        assert_eq!(answer(HostDecision::Accept, "t", &Value::Null), json!({"behavior": "allow", "updatedInput": {}}));
    }

    #[test]
    fn an_accepting_host_edit_replaces_the_models_input() {
        let (v, _) = ask("mcp__notes__edited", GlobalPolicy::Ask, HostDecision::Accept);
        assert_eq!(v, json!({"behavior": "allow", "updatedInput": {"by": "host"}}));
        // Settled without the host: the model's input.
        assert_eq!(ask("mcp__notes__edited", GlobalPolicy::AutoApprove, HostDecision::Accept).0["updatedInput"], json!({"a": 1}));
    }
}
