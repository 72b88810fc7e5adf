//! Checks the wire messages of a Codex transcript against the real
//! app-server JSON Schema of that version: `schemas/codex/VERSION/`, generated
//! by the real binary (`scripts/vendor-codex-schema.sh`) and embedded at build
//! time. A driver that sends what the real CLI would reject fails the trial,
//! and so does the fake when it sends what the real CLI never would.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

/// `(version, [(schema name, JSON text)])`, written by build.rs.
const EMBEDDED: &[(&str, &[(&str, &str)])] = include!(concat!(env!("OUT_DIR"), "/embedded_codex_schemas.rs"));

/// The message unions, validated one `oneOf` branch (picked by `method`) at a time.
const SERVER_REQUEST: &str = "ServerRequest";
const SERVER_NOTIFICATION: &str = "ServerNotification";
const CLIENT_REQUEST: &str = "ClientRequest";
const CLIENT_NOTIFICATION: &str = "ClientNotification";

/// Problems reported per message at most; the rest are usually consequences.
const MAX_PER_MESSAGE: usize = 5;

/// Versions with vendored schemas, oldest first.
pub fn versions() -> Vec<&'static str> {
    EMBEDDED.iter().map(|(v, _)| *v).collect()
}

fn text(version: &str, name: &str) -> Option<&'static str> {
    let (_, files) = EMBEDDED.iter().find(|(v, _)| *v == version)?;
    files.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The schema of the response to a server request, by the request's method.
fn response_schema(method: &str) -> Option<&'static str> {
    Some(match method {
        "mcpServer/elicitation/request" => "McpServerElicitationRequestResponse",
        "item/commandExecution/requestApproval" => "CommandExecutionRequestApprovalResponse",
        "item/fileChange/requestApproval" => "FileChangeRequestApprovalResponse",
        "item/permissions/requestApproval" => "PermissionsRequestApprovalResponse",
        "item/tool/requestUserInput" => "ToolRequestUserInputResponse",
        _ => return None,
    })
}

/// What a lookup found: a validator, a union without that method, or no
/// schema at all.
enum Lookup {
    Found(Arc<Validator>),
    UnknownMethod,
    Missing,
}

/// Compiles a validator for (version, schema, method) on first use. For a
/// union, the validator is the union's root with `oneOf` narrowed to the
/// branch for `method`, so errors name the field at fault instead of "not
/// valid under any of the schemas listed in the 'oneOf' keyword".
fn validator(version: &str, name: &str, method: Option<&str>) -> Lookup {
    type Key = (String, String, Option<String>);
    static CACHE: OnceLock<Mutex<HashMap<Key, Option<Arc<Validator>>>>> = OnceLock::new();
    let Some(text) = text(version, name) else { return Lookup::Missing };
    let key = (version.to_string(), name.to_string(), method.map(String::from));
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return found.clone().map_or(Lookup::UnknownMethod, Lookup::Found);
    }
    let compiled = compile(version, name, text, method).map(Arc::new);
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(key, compiled.clone());
    compiled.map_or(Lookup::UnknownMethod, Lookup::Found)
}

fn compile(version: &str, name: &str, text: &str, method: Option<&str>) -> Option<Validator> {
    let mut schema: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("schemas/codex/{version}/{name}.json is not JSON: {e}"));
    if let Some(method) = method {
        let branch = schema["oneOf"].as_array()?.iter().find(|b| branch_method(b) == Some(method))?.clone();
        let root = schema.as_object_mut()?;
        root.remove("oneOf");
        root.insert("allOf".into(), Value::Array(vec![branch]));
    }
    let v = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("schemas/codex/{version}/{name}.json does not compile: {e}"));
    Some(v)
}

/// The method a union branch accepts: `properties.method.enum` of one value.
fn branch_method(branch: &Value) -> Option<&str> {
    match branch.pointer("/properties/method/enum")?.as_array()?.as_slice() {
        [m] => m.as_str(),
        _ => None,
    }
}

/// Every schema problem in the recorded wire messages of a fake Codex
/// transcript (`provider.jsonl` lines `{"dir": "s2c" | "c2s", "msg": ...,
/// "pid": ...}`, the pid naming the provider process), one readable line
/// each: direction, method, JSON pointer, complaint.
/// Nothing for a version without vendored schemas.
///
/// - s2c requests against ServerRequest, s2c notifications against
///   ServerNotification, c2s requests against ClientRequest, c2s
///   notifications against ClientNotification, each by its method's branch;
/// - a c2s response to a server request of the same provider process: its
///   `result` against that request's response schema when vendored (a
///   JSON-RPC `error` is a legal answer);
/// - an s2c response to a client request: only that it has a result or an
///   error (the per-method response schemas are not vendored).
///
/// A request the fake sent from a scenario's `raw_request` step (`"raw":
/// true` on its line) is the scenario's own and is not checked, but the
/// answer to it is.
pub fn check_transcript(version: &str, transcript: &[Value]) -> Vec<String> {
    if !EMBEDDED.iter().any(|(v, _)| *v == version) {
        return Vec::new();
    }
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    // (provider process, server request id), as JSON text -> method: each
    // relaunched app-server numbers its requests from 0 again.
    let mut asked: HashMap<(String, String), String> = HashMap::new();
    // `codex exec` speaks JSONL events, not the app-server protocol.
    let exec: BTreeSet<String> = transcript
        .iter()
        .filter(|e| e["event"] == "launch" && fakes::codex::exec::is_exec_launch(e))
        .map(|e| e["pid"].to_string())
        .collect();
    for line in transcript {
        let Some(dir @ ("s2c" | "c2s")) = line.get("dir").and_then(Value::as_str) else { continue };
        if exec.contains(&fakes::wire::process_of(line).to_string()) {
            continue;
        }
        let msg = &line["msg"];
        let mut found = Vec::new();
        let process = fakes::wire::process_of(line).to_string();
        let raw = line.get("raw") == Some(&Value::Bool(true));
        check_message(version, dir, msg, raw, &process, &mut asked, &mut found);
        for p in found.into_iter().take(MAX_PER_MESSAGE) {
            // The same flaw in every item/started is one problem.
            if seen.insert(p.clone()) {
                problems.push(p);
            }
        }
    }
    problems
}

fn check_message(
    version: &str,
    dir: &str,
    msg: &Value,
    raw: bool,
    process: &str,
    asked: &mut HashMap<(String, String), String>,
    out: &mut Vec<String>,
) {
    if !msg.is_object() {
        out.push(format!("{dir} message: not a JSON object: {}", short(msg)));
        return;
    }
    let id = msg.get("id");
    match msg.get("method") {
        Some(Value::String(method)) => {
            let union = match (dir, id.is_some()) {
                ("s2c", true) => SERVER_REQUEST,
                ("s2c", false) => SERVER_NOTIFICATION,
                (_, true) => CLIENT_REQUEST,
                (_, false) => CLIENT_NOTIFICATION,
            };
            if dir == "s2c" {
                if let Some(id) = id {
                    asked.insert((process.to_string(), id.to_string()), method.clone());
                }
                if raw {
                    return;
                }
            }
            match validator(version, union, Some(method)) {
                Lookup::Found(v) => report(&v, msg, "", &format!("{dir} {method}"), out),
                Lookup::UnknownMethod => {
                    out.push(format!("{dir} {method}: not a method of {union} in codex {version}"));
                }
                Lookup::Missing => {}
            }
        }
        Some(other) => out.push(format!("{dir} message at /method: {} is not a string", short(other))),
        None => {
            let (result, error) = (msg.get("result"), msg.get("error"));
            let id_text = id.map_or_else(|| "null".to_string(), Value::to_string);
            if dir == "s2c" {
                if result.is_none() && error.is_none() {
                    out.push(format!("s2c response (id {id_text}): has neither `result` nor `error`"));
                }
                return;
            }
            let Some(method) = asked.get(&(process.to_string(), id_text.clone())).cloned() else {
                out.push(format!("c2s response (id {id_text}): answers no server request"));
                return;
            };
            let what = format!("c2s response to {method} (id {id_text})");
            match (result, error) {
                (Some(_), Some(_)) => out.push(format!("{what}: has both `result` and `error`")),
                (None, None) => out.push(format!("{what}: has neither `result` nor `error`")),
                (None, Some(e)) => {
                    let ok = e.get("code").is_some_and(Value::is_i64) && e.get("message").is_some_and(Value::is_string);
                    if !ok {
                        out.push(format!("{what} at /error: not a JSON-RPC error object (integer `code`, string `message`): {}", short(e)));
                    }
                }
                (Some(result), None) => {
                    if let Some(Lookup::Found(v)) = response_schema(&method).map(|name| validator(version, name, None)) {
                        report(&v, result, "/result", &what, out);
                    }
                }
            }
        }
    }
}

/// Validates `instance` and pushes one line per problem, pointers prefixed
/// with `prefix` (where `instance` sits in the message).
fn report(v: &Validator, instance: &Value, prefix: &str, what: &str, out: &mut Vec<String>) {
    if v.is_valid(instance) {
        return;
    }
    let mut leaves = Vec::new();
    for e in v.iter_errors(instance) {
        explain(&e, &mut leaves);
    }
    for (pointer, complaint) in leaves {
        let pointer = format!("{prefix}{pointer}");
        let at = if pointer.is_empty() { "the top level".to_string() } else { pointer };
        out.push(format!("{what} at {at}: {complaint}"));
    }
}

/// The errors worth showing for `e`: for a failed `oneOf`/`anyOf`, the errors
/// of the one branch the value was evidently meant for (the others ruled out
/// by a wrong tag such as `type` or by the wrong JSON type), else `e` itself.
fn explain(e: &ValidationError<'_>, out: &mut Vec<(String, String)>) {
    if let ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } = e.kind() {
        let here = e.instance_path().as_str();
        let mut meant = context.iter().filter(|branch| !branch.iter().any(|b| rules_out(b, here)));
        if let (Some(branch), None) = (meant.next(), meant.next()) {
            if !branch.is_empty() {
                for b in branch {
                    explain(b, out);
                }
                return;
            }
        }
    }
    out.push((e.instance_path().as_str().to_string(), complaint(e)));
}

/// Whether an error in a union branch shows the value was not meant for that
/// branch: the wrong JSON type for it, or a tag (a property fixed to one
/// value) with another value.
fn rules_out(e: &ValidationError<'_>, here: &str) -> bool {
    let path = e.instance_path().as_str();
    match e.kind() {
        ValidationErrorKind::Type { .. } => path == here,
        ValidationErrorKind::Constant { .. } => is_child(path, here),
        ValidationErrorKind::Enum { options } => is_child(path, here) && options.as_array().is_some_and(|o| o.len() == 1),
        _ => false,
    }
}

fn is_child(path: &str, parent: &str) -> bool {
    path.strip_prefix(parent).and_then(|rest| rest.strip_prefix('/')).is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
}

/// The validator's message, with the offending value left out when it is long.
fn complaint(e: &ValidationError<'_>) -> String {
    let full = e.to_string();
    if full.len() <= 200 {
        full
    } else {
        e.masked_with(format!("the {}", kind_of(e.instance()))).to_string()
    }
}

fn kind_of(v: &Value) -> &'static str {
    fakes::wire::json_kind(v)
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 80 {
        s
    } else {
        format!("{}...", s.chars().take(77).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(dir: &str, msg: Value) -> Value {
        json!({"dir": dir, "msg": msg})
    }

    /// An approval round trip as the real codex 0.171.0 sent and took it
    /// (codex-lab run `plain_accept`).
    fn real_round_trip(answer: Value) -> Vec<Value> {
        vec![
            line("c2s", json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "codex-lab", "title": "codex lab", "version": "0.0.1"}, "capabilities": {}}})),
            line("s2c", json!({"id": 1, "result": {"userAgent": "codex-lab/0.171.0", "codexHome": "/tmp/home", "platformFamily": "unix", "platformOs": "linux"}})),
            line("c2s", json!({"jsonrpc": "2.0", "method": "initialized"})),
            line("s2c", json!({"method": "mcpServer/startupStatus/updated", "params": {"threadId": "01a23715-40b9-7113-9f77-a07892714d22", "name": "lab", "environmentId": null, "status": "ready", "error": null, "failureReason": null}, "emittedAtMs": 1796220469599u64})),
            line("s2c", json!({"method": "item/started", "params": {"item": {"type": "mcpToolCall", "id": "call_1", "server": "lab", "environmentId": null, "tool": "plain_tool", "status": "inProgress", "arguments": {"message": "hi from mock model"}, "appContext": null, "mcpAppUi": null, "pluginId": null, "readOnlyHint": null, "result": null, "error": null, "durationMs": null, "startedAtMs": 1796220469687u64, "completedAtMs": null}, "threadId": "01a23715-40b9-7113-9f77-a07892714d22", "turnId": "01a23715-40ef-7560-945c-2c8e0cf905a1", "startedAtMs": 1796220469687u64}, "emittedAtMs": 1796220469688u64})),
            line("s2c", json!({"method": "mcpServer/elicitation/request", "id": 0, "params": {"threadId": "01a23715-40b9-7113-9f77-a07892714d22", "turnId": "01a23715-40ef-7560-945c-2c8e0cf905a1", "serverName": "lab", "environmentId": null, "mode": "form", "_meta": {"codex_approval_kind": "mcp_tool_call", "persist": ["session", "always"], "tool_name": "plain_tool", "tool_description": "Plain tool, no annotations.", "tool_params": {"message": "hi from mock model"}, "tool_params_display": [{"name": "message", "value": "hi from mock model", "display_name": "message"}]}, "message": "Allow the lab MCP server to run tool \"plain_tool\"?", "requestedSchema": {"type": "object", "properties": {}}}})),
            line("c2s", json!({"jsonrpc": "2.0", "id": 0, "result": answer})),
            line("s2c", json!({"method": "serverRequest/resolved", "params": {"threadId": "01a23715-40b9-7113-9f77-a07892714d22", "requestId": 0}, "emittedAtMs": 1796220469692u64})),
        ]
    }

    #[test]
    fn every_measured_version_is_vendored() {
        for v in fakes::codex::profile::MEASURED {
            let v = v.to_string();
            assert!(versions().contains(&v.as_str()), "no schemas/codex/{v}");
            for name in [SERVER_REQUEST, SERVER_NOTIFICATION, CLIENT_REQUEST, CLIENT_NOTIFICATION] {
                assert!(text(&v, name).is_some(), "no {name} for {v}");
            }
        }
    }

    #[test]
    fn real_messages_pass() {
        let t = real_round_trip(json!({"action": "accept", "content": {}}));
        assert_eq!(check_transcript("0.171.0", &t), Vec::<String>::new());
    }

    #[test]
    fn a_bad_answer_is_reported_with_its_pointer() {
        let t = real_round_trip(json!({"action": "maybe", "content": {}}));
        let problems = check_transcript("0.171.0", &t);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        let p = &problems[0];
        assert!(p.starts_with("c2s response to mcpServer/elicitation/request (id 0) at /result/action: "), "{p}");
        assert!(p.contains("\"maybe\""), "{p}");
    }

    #[test]
    fn a_union_member_is_explained_by_its_own_branch() {
        // An mcpToolCall item missing its fields: the complaint names them,
        // not "not valid under any of the schemas listed in the 'oneOf' keyword".
        let mut t = real_round_trip(json!({"action": "accept", "content": {}}));
        t[4]["msg"]["params"]["item"] = json!({"type": "mcpToolCall", "id": "call_1", "server": "lab", "tool": "plain_tool", "arguments": {}});
        let problems = check_transcript("0.171.0", &t);
        assert!(!problems.is_empty());
        for p in &problems {
            assert!(p.starts_with("s2c item/started at /params/item: "), "{p}");
            assert!(p.contains("is a required property"), "{p}");
        }
        assert!(problems.iter().any(|p| p.contains("\"status\"")), "{problems:#?}");
    }

    #[test]
    fn unknown_methods_and_stray_answers_are_reported() {
        let t = vec![
            line("c2s", json!({"id": 5, "method": "thread/frobnicate", "params": {}})),
            line("c2s", json!({"id": 99, "result": {}})),
            line("s2c", json!({"id": 5})),
        ];
        assert_eq!(
            check_transcript("0.146.0", &t),
            vec![
                "c2s thread/frobnicate: not a method of ClientRequest in codex 0.146.0",
                "c2s response (id 99): answers no server request",
                "s2c response (id 5): has neither `result` nor `error`",
            ]
        );
    }

    #[test]
    fn raw_requests_are_the_scenarios_own_but_their_answers_are_checked() {
        let t = vec![
            json!({"dir": "s2c", "raw": true, "msg": {"id": 3, "method": "vendor/surprise", "params": {"anything": true}}}),
            line("c2s", json!({"id": 3, "error": {"code": "nope"}})),
        ];
        let problems = check_transcript("0.171.0", &t);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(problems[0].starts_with("c2s response to vendor/surprise (id 3) at /error: "), "{}", problems[0]);
    }

    #[test]
    fn answers_are_matched_to_requests_of_their_own_provider_process() {
        // A relaunched app-server numbers its requests from 0 again, and the
        // old one may still be running: each answer belongs to its process.
        let of = |pid: u32, mut l: Value| {
            l["pid"] = json!(pid);
            l
        };
        let t = vec![
            of(1, json!({"dir": "s2c", "raw": true, "msg": {"id": 0, "method": "mcpServer/elicitation/request", "params": {}}})),
            of(2, json!({"dir": "s2c", "raw": true, "msg": {"id": 0, "method": "item/commandExecution/requestApproval", "params": {}}})),
            of(1, line("c2s", json!({"id": 0, "result": {"action": "accept", "content": {}}}))),
            of(2, line("c2s", json!({"id": 0, "result": {"decision": "decline"}}))),
            of(3, line("c2s", json!({"id": 0, "result": {"decision": "decline"}}))),
        ];
        assert_eq!(check_transcript("0.171.0", &t), vec!["c2s response (id 0): answers no server request"]);
    }

    #[test]
    fn versions_without_schemas_and_other_lines_are_ignored() {
        let t = vec![line("c2s", json!({"id": 1, "method": "nonsense"})), json!({"event": "launch"})];
        assert!(check_transcript("2.1.0", &t).is_empty());
        assert!(check_transcript("0.171.0", &[json!({"event": "launch"})]).is_empty());
    }
}
