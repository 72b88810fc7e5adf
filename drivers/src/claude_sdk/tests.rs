//! The driver against stand-in CLIs (shell scripts speaking just enough of
//! the protocol) for what the fake CLI never does: bad lines, exits and
//! silence mid-turn. The conformance trials run it against the fake.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{ClaudeSdkDriver, Timeouts};
use crate::gateway::binding::{GatewayEvent, ResumeAnswer};
use crate::host::{Host, HostDecision, HostPrompt};
use crate::launch::{Launch, Process};
use crate::spec::{ApprovalPolicy, GlobalPolicy, McpServerSpec, Transport};
use crate::{DriverError, Parts};

/// Answers the initialize request (by its id) the way the CLI does.
const INIT: &str = r#"read init
id=$(printf '%s' "$init" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
echo "{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\",\"request_id\":\"$id\",\"response\":{\"mcp_servers_applied\":true}}}"
"#;

const SYSTEM_INIT: &str = r#"echo '{"type":"system","subtype":"init","session_id":"sess-1"}'"#;

struct Asked(Vec<HostPrompt>, HostDecision);

impl Host for Asked {
    fn decide(&mut self, prompt: &HostPrompt) -> HostDecision {
        self.0.push(prompt.clone());
        self.1
    }
    fn call_tool(&mut self, _: &str, _: &Value) -> Value {
        json!({"content": []})
    }
    fn interrupt(&mut self, _: &GatewayEvent) -> ResumeAnswer {
        unreachable!("no gateway here")
    }
}

struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        Lab { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A stand-in CLI: records its pid and argv, then runs `body`.
    fn cli(&self, body: &str) -> PathBuf {
        let path = self.path("claude");
        let pid = self.path("pid");
        let argv = self.path("argv");
        let text = format!("#!/bin/sh\necho $$ > '{}'\necho \"$@\" >> '{}'\n{body}", pid.display(), argv.display());
        std::fs::write(&path, text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        path
    }

    fn launch(&self, binary: &Path, policy: ApprovalPolicy) -> Launch {
        let spec = McpServerSpec {
            name: "notes".into(),
            transport: Transport::Stdio { command: "notes-server".into(), args: vec![], env: Default::default() },
            reason: "r".into(),
            tools: [("append".to_string(), policy)].into(),
        };
        Launch {
            process: Process { binary: binary.into(), home: self.dir.path().into(), cwd: self.dir.path().into(), secrets: Default::default() },
            global: GlobalPolicy::Ask,
            servers: vec![spec],
            bridge: None,
            gateway: None,
        }
    }

    fn alive(&self) -> bool {
        let pid = std::fs::read_to_string(self.path("pid")).unwrap_or_default();
        std::process::Command::new("kill").args(["-0", pid.trim()]).stderr(std::process::Stdio::null()).status().is_ok_and(|s| s.success())
    }
}

fn driver() -> ClaudeSdkDriver {
    let timeouts = Timeouts { initialize: Duration::from_secs(5), turn: Duration::from_millis(800), exit: Duration::from_millis(300) };
    ClaudeSdkDriver::new(Parts::reference()).with_timeouts(timeouts)
}

fn turn(lab: &Lab, body: &str) -> (Result<crate::TurnReport, DriverError>, Asked) {
    let cli = lab.cli(body);
    let mut d = driver();
    d.open(lab.launch(&cli, ApprovalPolicy::Prompt)).unwrap();
    let mut host = Asked(Vec::new(), HostDecision::Accept);
    let out = d.turn("go", Vec::new(), &mut host);
    d.close();
    (out, host)
}

#[test]
fn a_gated_call_goes_to_the_host_and_its_answer_back_to_the_cli() {
    let lab = Lab::new();
    let reply = lab.path("reply");
    let body = format!(
        r#"{INIT}read user
{SYSTEM_INIT}
echo '{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"toolu_1","name":"mcp__notes__append","input":{{"x":1}}}}]}}}}'
echo '{{"type":"control_request","request_id":"cli-1","request":{{"subtype":"hook_callback","callback_id":"h"}}}}'
read hook
echo '{{"type":"control_request","request_id":"cli-2","request":{{"subtype":"can_use_tool","tool_name":"mcp__notes__append","input":{{"x":1}},"tool_use_id":"toolu_1"}}}}'
read answer
echo "$hook" > '{r}.hook'
echo "$answer" > '{r}'
echo '{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}}]}}}}'
echo '{{"type":"result","subtype":"success"}}'
read eof
"#,
        r = reply.display()
    );
    let (out, host) = turn(&lab, &body);
    let report = out.unwrap();
    assert_eq!(host.0, [HostPrompt::ToolCall { server: "notes".into(), tool: "append".into() }]);
    let answer: Value = serde_json::from_str(&std::fs::read_to_string(&reply).unwrap()).unwrap();
    assert_eq!(answer["response"]["request_id"], "cli-2");
    assert_eq!(answer["response"]["response"], json!({"behavior": "allow", "updatedInput": {"x": 1}, "toolUseID": "toolu_1"}));
    let hook: Value = serde_json::from_str(&std::fs::read_to_string(lab.path("reply.hook")).unwrap()).unwrap();
    // A hook it registered none of gets no opinion: the rules decide.
    assert_eq!((hook["response"]["request_id"].as_str(), hook["response"]["subtype"].as_str()), (Some("cli-1"), Some("success")));
    assert_eq!(hook["response"]["response"], json!({}));
    let calls: Vec<_> = report.tool_calls.iter().map(|c| (c.call_id.as_str(), c.server.as_str(), c.tool.as_str(), c.status.as_str())).collect();
    assert_eq!(calls, [("toolu_1", "notes", "append", "completed")]);
    let argv = std::fs::read_to_string(lab.path("argv")).unwrap();
    assert!(argv.contains("--input-format stream-json") && argv.contains("--permission-prompt-tool=stdio") && argv.contains("--await-initialize"), "{argv}");
}

#[test]
fn a_line_that_is_not_json_is_a_protocol_error_and_the_cli_is_killed() {
    let lab = Lab::new();
    let (out, _) = turn(&lab, &format!("{INIT}read user\necho 'not json'\nexec sleep 30\n"));
    assert_eq!(out.err().map(|e| e.kind).as_deref(), Some("protocol-error"));
    assert!(!lab.alive(), "the stand-in CLI outlived the failed turn");
}

#[test]
fn a_cli_that_exits_mid_turn_is_provider_exited() {
    let lab = Lab::new();
    let (out, _) = turn(&lab, &format!("{INIT}read user\n{SYSTEM_INIT}\nexit 3\n"));
    let e = out.unwrap_err();
    assert_eq!(e.kind, "provider-exited", "{e}");
}

#[test]
fn silence_times_out_at_initialize_and_mid_turn() {
    let lab = Lab::new();
    let started = Instant::now();
    let (out, _) = turn(&lab, &format!("{INIT}read user\nexec sleep 30\n"));
    assert_eq!(out.err().map(|e| e.kind).as_deref(), Some("timeout"));
    assert!(!lab.alive());
    let lab = Lab::new();
    let cli = lab.cli("exec sleep 30\n");
    let mut d = ClaudeSdkDriver::new(Parts::reference()).with_timeouts(Timeouts { initialize: Duration::from_millis(300), ..Timeouts::default() });
    d.open(lab.launch(&cli, ApprovalPolicy::Prompt)).unwrap();
    let e = d.turn("go", Vec::new(), &mut Asked(Vec::new(), HostDecision::Accept)).unwrap_err();
    assert_eq!(e.kind, "timeout", "{e}");
    drop(d);
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_cli_that_does_not_apply_the_servers_is_refused() {
    let lab = Lab::new();
    let body = r#"read init
id=$(printf '%s' "$init" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
echo "{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\",\"request_id\":\"$id\",\"response\":{}}}"
exec sleep 30
"#;
    let (out, _) = turn(&lab, body);
    assert_eq!(out.err().map(|e| e.kind).as_deref(), Some("provider-rejected"));
}

#[test]
fn one_cli_per_session_replaced_by_a_resuming_one_when_policies_change() {
    let lab = Lab::new();
    // Plays one turn per user message, for as long as its input is open.
    let inits = lab.path("inits");
    let record = format!("echo \"$init\" >> '{}'\n", inits.display());
    let cli = lab.cli(&format!("{INIT}{record}while read user; do\n{SYSTEM_INIT}\necho '{{\"type\":\"result\",\"subtype\":\"success\"}}'\ndone\n"));
    let mut d = driver();
    let mut host = Asked(Vec::new(), HostDecision::Accept);
    d.open(lab.launch(&cli, ApprovalPolicy::Approve)).unwrap();
    d.turn("one", Vec::new(), &mut host).unwrap();
    d.turn("two", Vec::new(), &mut host).unwrap();
    // Unchanged declarations keep the CLI.
    d.resume(lab.launch(&cli, ApprovalPolicy::Approve)).unwrap();
    d.turn("three", Vec::new(), &mut host).unwrap();
    let argv = std::fs::read_to_string(lab.path("argv")).unwrap();
    assert_eq!(argv.lines().count(), 1, "{argv}");
    assert!(argv.contains("--allowedTools=mcp__notes__append"), "{argv}");
    // A changed policy: the next turn runs in a new CLI resuming the session.
    d.resume(lab.launch(&cli, ApprovalPolicy::Prompt)).unwrap();
    d.turn("four", Vec::new(), &mut host).unwrap();
    let argv = std::fs::read_to_string(lab.path("argv")).unwrap();
    let lines: Vec<&str> = argv.lines().collect();
    assert_eq!(lines.len(), 2, "{argv}");
    assert!(lines[1].contains("--resume=sess-1") && !lines[1].contains("--allowedTools"), "{argv}");
    assert!(lines[1].contains("mcp__notes__append"), "the prompt tool's ask rule: {argv}");
    // A call-scoped server: a CLI with it for that turn, one without after.
    let scoped = McpServerSpec { name: "extra".into(), tools: Default::default(), ..lab.launch(&cli, ApprovalPolicy::Prompt).servers[0].clone() };
    d.turn("five", vec![scoped], &mut host).unwrap();
    d.turn("six", Vec::new(), &mut host).unwrap();
    let inits: Vec<Value> = std::fs::read_to_string(&inits).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let servers: Vec<Vec<&String>> = inits.iter().map(|i| i["request"]["mcpServers"].as_object().unwrap().keys().collect()).collect();
    assert_eq!(servers, [vec!["notes"], vec!["notes"], vec!["extra", "notes"], vec!["notes"]]);
    assert!(lab.alive());
    d.close();
    assert!(!lab.alive());
}
