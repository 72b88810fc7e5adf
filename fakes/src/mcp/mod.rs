//! Recording fake MCP server. One protocol core ([`handle`]) serves both
//! transports: newline-delimited stdio and Streamable HTTP on loopback.
//! Everything said in either direction is appended to a [`Recorder`] so
//! conformance tests can assert which tool calls actually reached a server.

pub mod catalog;
pub mod http;
pub mod stdio;
mod stopper;

use std::io::Read;
use std::path::{Path, PathBuf};

use std::time::Duration;

use serde_json::{json, Value};

pub use catalog::{Catalog, Tool};
pub use http::{start_http, HttpServer};
pub use stdio::serve_stdio;

use crate::wire::Recorder;

/// Offered when the client names no protocol version.
pub const DEFAULT_PROTOCOL_VERSION: &str = "2025-06-18";

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// Handles one decoded message: records it, answers it (sleeping first for a
/// tool's `delay_ms`) and records the answer. `None` for notifications and
/// responses, which get no reply.
pub fn handle(catalog: &Catalog, msg: &Value, rec: &Recorder) -> Option<Value> {
    rec.record(&json!({"dir": "in", "msg": msg}));
    let reply = respond(catalog, msg, rec);
    std::thread::sleep(reply.delay);
    record_out(rec, reply.msg)
}

/// A computed answer and how long to hold it back.
pub(crate) struct Reply {
    pub msg: Option<Value>,
    pub delay: Duration,
    /// `elicitation/create` params to send the client first; `msg` then
    /// waits for its reply (stdio; over HTTP it is sent at once).
    pub ask: Option<Value>,
}

/// The protocol core without recording of the message itself or of the
/// answer, so transports can decide where the delay is spent.
pub(crate) fn respond(catalog: &Catalog, msg: &Value, rec: &Recorder) -> Reply {
    let now = |msg| Reply { msg, delay: Duration::ZERO, ask: None };
    let Some(obj) = msg.as_object() else {
        // Batches were removed from MCP in 2025-06-18; anything else is nonsense.
        return now(Some(error_reply(&Value::Null, INVALID_REQUEST, "invalid request: not an object")));
    };
    let id = obj.get("id");
    let method = obj.get("method");
    let (id, method) = match (id, method) {
        (None, Some(_)) => return now(None), // notification
        (Some(_), None) if obj.contains_key("result") || obj.contains_key("error") => {
            return now(None); // a response to something we never asked; just recorded
        }
        (Some(id), Some(Value::String(m))) => (id, m.as_str()),
        (id, _) => {
            let id = id.cloned().unwrap_or(Value::Null);
            return now(Some(error_reply(&id, INVALID_REQUEST, "invalid request")));
        }
    };
    let params = obj.get("params").unwrap_or(&Value::Null);
    match method {
        "initialize" => {
            let version =
                params.get("protocolVersion").and_then(Value::as_str).unwrap_or(DEFAULT_PROTOCOL_VERSION);
            now(Some(ok_reply(
                id,
                json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": format!("fake-mcp-{}", catalog.server), "version": "0.1.0"},
                }),
            )))
        }
        "ping" => now(Some(ok_reply(id, json!({})))),
        "tools/list" => now(Some(ok_reply(id, json!({"tools": catalog.tools_json()})))),
        "tools/call" => call_tool(catalog, id, params, rec),
        other => now(Some(error_reply(id, METHOD_NOT_FOUND, &format!("method not found: {other}")))),
    }
}

/// The vault holds a non-empty token for `target`.
fn has_consent(catalog: &Catalog, target: &str) -> bool {
    let vault = catalog.vault.as_ref().and_then(|p| std::fs::read_to_string(p).ok());
    let vault: Value = vault.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null);
    vault[target].as_str().is_some_and(|t| !t.is_empty())
}

fn call_tool(catalog: &Catalog, id: &Value, params: &Value, rec: &Recorder) -> Reply {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let Some(tool) = catalog.tool(name) else {
        rec.record(&json!({"event": "unknown_tool", "tool": name}));
        let reply = error_reply(id, INVALID_PARAMS, &format!("unknown tool: {name}"));
        return Reply { msg: Some(reply), delay: Duration::ZERO, ask: None };
    };
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    let meta = params.get("_meta").cloned().unwrap_or(Value::Null);
    if let Some(target) = &tool.oauth_target {
        if !has_consent(catalog, target) {
            rec.record(&json!({"event": "blocked", "reason": "oauth_required", "tool": name, "target": target, "arguments": arguments}));
            let text = format!("oauth_required: no consent token for target `{target}`");
            let result = json!({"content": [{"type": "text", "text": text}], "isError": true});
            return Reply { msg: Some(ok_reply(id, result)), delay: Duration::ZERO, ask: None };
        }
    }
    rec.record(&json!({
        "event": "tools/call",
        "server": catalog.server,
        "tool": name,
        "arguments": arguments,
        "meta": meta,
    }));
    let args_for_echo = if arguments.is_null() { json!({}) } else { arguments };
    let result = tool.result_for(&catalog.server, &args_for_echo);
    Reply { msg: Some(ok_reply(id, result)), delay: tool.delay(), ask: tool.elicitation() }
}

/// A tool result with what its elicitation got appended as a text block
/// (the elicitation's result, its error, or that none came).
pub(crate) fn with_elicited(mut answer: Value, got: &str) -> Value {
    if let Some(blocks) = answer.pointer_mut("/result/content").and_then(Value::as_array_mut) {
        blocks.push(json!({"type": "text", "text": format!("elicitation: {got}")}));
    }
    answer
}

/// Records an outgoing message (before it is written, so a peer that has
/// read the answer can rely on the transcript already holding it).
pub(crate) fn record_out(rec: &Recorder, msg: Option<Value>) -> Option<Value> {
    if let Some(m) = &msg {
        rec.record(&json!({"dir": "out", "msg": m}));
    }
    msg
}

/// Records undecodable input and builds the JSON-RPC parse error for it.
pub(crate) fn garbage(rec: &Recorder, error: &str, text: Option<&str>) -> Value {
    let mut event = json!({"event": "garbage", "error": error});
    if let Some(t) = text {
        event["text"] = json!(t);
    }
    rec.record(&event);
    error_reply(&Value::Null, PARSE_ERROR, &format!("parse error: {error}"))
}

pub fn ok_reply(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error_reply(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub(crate) use stopper::Stopper;

const USAGE: &str = "usage: fake-mcp stdio --catalog FILE [--record FILE]
       fake-mcp http --catalog FILE [--record FILE] [--token-file FILE] --port-file FILE";

#[derive(Debug, Default, PartialEq)]
struct Args {
    http: bool,
    catalog: Option<PathBuf>,
    record: Option<PathBuf>,
    token_file: Option<PathBuf>,
    port_file: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut out = Args::default();
    let mut it = args.iter();
    out.http = match it.next().map(String::as_str) {
        Some("stdio") => false,
        Some("http") => true,
        Some(other) => return Err(format!("unknown mode {other:?} (expected stdio or http)")),
        None => return Err("missing mode (stdio or http)".into()),
    };
    while let Some(arg) = it.next() {
        // Accept both "--flag value" and "--flag=value".
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let slot = match flag {
            "--catalog" => &mut out.catalog,
            "--record" => &mut out.record,
            "--token-file" if out.http => &mut out.token_file,
            "--port-file" if out.http => &mut out.port_file,
            _ => return Err(format!("unknown argument {arg:?}")),
        };
        let value = match inline.or_else(|| it.next().cloned()) {
            Some(v) if !v.is_empty() => v,
            _ => return Err(format!("{flag} needs a value")),
        };
        if slot.replace(PathBuf::from(value)).is_some() {
            return Err(format!("{flag} given twice"));
        }
    }
    if out.catalog.is_none() {
        return Err("--catalog is required".into());
    }
    if out.http && out.port_file.is_none() {
        return Err("--port-file is required in http mode".into());
    }
    Ok(out)
}

/// The `fake-mcp` executable. Exit codes: 0 clean EOF, 1 I/O failure while
/// serving, 2 bad arguments or unreadable files.
pub fn main_with_args(args: Vec<String>) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return 0;
    }
    let args = match parse_args(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fake-mcp: {e}\n{USAGE}");
            return 2;
        }
    };
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fake-mcp: {e}");
            2
        }
    }
}

fn run(args: Args) -> Result<i32, String> {
    let catalog_path = args.catalog.as_deref().unwrap_or(Path::new(""));
    let catalog = Catalog::load(catalog_path)?;
    let rec = match &args.record {
        Some(p) => Recorder::open(p).map_err(|e| format!("--record {}: {e}", p.display()))?,
        None => Recorder::none(),
    };
    if !args.http {
        // Each record names this process: a relaunched provider starts the
        // next instance before this one has read its EOF, and both append
        // to the same recording.
        let rec = rec.for_process(std::process::id());
        let stdin = std::io::stdin();
        return Ok(serve_stdio(&catalog, &rec, stdin.lock(), std::io::stdout()));
    }
    let port_file = args.port_file.unwrap_or_default();
    let server =
        start_http(catalog, rec, args.token_file).map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
    write_atomically(&port_file, &server.addr.port().to_string())
        .map_err(|e| format!("--port-file {}: {e}", port_file.display()))?;
    // Serve until the parent closes our stdin (or kills us): a parent that
    // dies without cleanup then never leaves an orphan server behind.
    let mut sink = [0u8; 4096];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    server.shutdown();
    Ok(0)
}

/// Readers polling for the file never see it half-written.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;
    use crate::wire::read_jsonl;

    fn catalog() -> Catalog {
        Catalog::from_json_str(
            r#"{"server":"files","tools":[
                {"name":"read_file","annotations":{"readOnlyHint":true}},
                {"name":"canned","result":{"content":[{"type":"text","text":"custom"}],"isError":true}},
                {"name":"plain","description":"no hints"}]}"#,
        )
        .unwrap()
    }

    fn recorded() -> (tempfile::TempDir, PathBuf, Recorder) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let rec = Recorder::open(&path).unwrap();
        (dir, path, rec)
    }

    /// The answer to a `tools/call` of `tool` with no arguments.
    fn call(rec: &Recorder, tool: &str) -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": tool}});
        handle(&catalog(), &msg, rec).unwrap()
    }

    #[test]
    fn initialize_echoes_version_or_defaults() {
        let c = catalog();
        let r = handle(
            &c,
            &json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}),
            &Recorder::none(),
        )
        .unwrap();
        assert_eq!(r["id"], 1);
        assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(r["result"]["serverInfo"]["name"], "fake-mcp-files");
        assert_eq!(r["result"]["capabilities"], json!({"tools":{"listChanged":false}}));
        let r =
            handle(&c, &json!({"jsonrpc":"2.0","id":"x","method":"initialize"}), &Recorder::none()).unwrap();
        assert_eq!(r["id"], "x");
        assert_eq!(r["result"]["protocolVersion"], DEFAULT_PROTOCOL_VERSION);
    }

    #[test]
    fn tools_list_carries_annotations_only_when_given() {
        let r = handle(&catalog(), &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}), &Recorder::none())
            .unwrap();
        let tools = r["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 3);
        assert_eq!(tools[0]["annotations"], json!({"readOnlyHint": true}));
        assert!(tools[2].as_object().unwrap().get("annotations").is_none());
        assert_eq!(tools[2]["description"], "no hints");
        assert_eq!(
            tools[1]["inputSchema"],
            json!({"type":"object","properties":{},"additionalProperties":true})
        );
    }

    #[test]
    fn tools_call_default_result_and_recorded_event() {
        let (_d, path, rec) = recorded();
        let msg = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
            "params":{"name":"read_file","arguments":{"path":"/a b","n":1},"_meta":{"progressToken":7}}});
        let r = handle(&catalog(), &msg, &rec).unwrap();
        assert_eq!(r["result"]["isError"], json!(false));
        assert_eq!(r["result"]["content"][0]["type"], "text");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        let echoed = text.strip_prefix("files/read_file ok: ").unwrap();
        assert!(!echoed.contains("\": ") && !echoed.contains(", "), "not compact: {echoed}");
        assert_eq!(serde_json::from_str::<Value>(echoed).unwrap(), json!({"path":"/a b","n":1}));
        let log = read_jsonl(&path).unwrap();
        assert_eq!(log.len(), 3);
        assert_eq!(log[0], json!({"dir":"in","msg":msg}));
        assert_eq!(
            log[1],
            json!({"event":"tools/call","server":"files","tool":"read_file",
            "arguments":{"path":"/a b","n":1},"meta":{"progressToken":7}})
        );
        assert_eq!(log[2], json!({"dir":"out","msg":r}));
    }

    #[test]
    fn tools_call_canned_result_and_null_meta() {
        let (_d, path, rec) = recorded();
        let r = call(&rec, "canned");
        assert_eq!(r["result"], json!({"content":[{"type":"text","text":"custom"}],"isError":true}));
        let log = read_jsonl(&path).unwrap();
        assert_eq!(log[1]["meta"], Value::Null);
        assert_eq!(log[1]["arguments"], Value::Null);
    }

    #[test]
    fn unknown_tool_is_invalid_params_and_recorded() {
        let (_d, path, rec) = recorded();
        let r = call(&rec, "rm_rf");
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        assert_eq!(r["error"]["message"], "unknown tool: rm_rf");
        let log = read_jsonl(&path).unwrap();
        assert_eq!(log[1], json!({"event":"unknown_tool","tool":"rm_rf"}));
        assert!(!log.iter().any(|e| e["event"] == "tools/call"));
    }

    #[test]
    fn unknown_methods_notifications_and_responses() {
        let c = catalog();
        let r = handle(&c, &json!({"jsonrpc":"2.0","id":6,"method":"server/discover"}), &Recorder::none())
            .unwrap();
        assert_eq!(r["error"]["code"], METHOD_NOT_FOUND);
        assert_eq!(r["error"]["message"], "method not found: server/discover");
        assert_eq!(
            handle(&c, &json!({"jsonrpc":"2.0","id":7,"method":"ping"}), &Recorder::none()).unwrap()
                ["result"],
            json!({})
        );
        assert!(handle(
            &c,
            &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            &Recorder::none()
        )
        .is_none());
        assert!(handle(&c, &json!({"jsonrpc":"2.0","id":8,"result":{}}), &Recorder::none()).is_none());
        let r = handle(&c, &json!([1, 2]), &Recorder::none()).unwrap();
        assert_eq!(r["error"]["code"], INVALID_REQUEST);
        let r = handle(&c, &json!({"jsonrpc":"2.0","id":9}), &Recorder::none()).unwrap();
        assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(9), json!(INVALID_REQUEST)));
    }

    #[test]
    fn garbage_is_recorded_and_answered_with_parse_error() {
        let (_d, path, rec) = recorded();
        let r = garbage(&rec, "expected value", Some("nope"));
        assert_eq!(r["id"], Value::Null);
        assert_eq!(r["error"]["code"], PARSE_ERROR);
        assert_eq!(
            read_jsonl(&path).unwrap(),
            vec![json!({"event":"garbage","error":"expected value","text":"nope"})]
        );
    }

    #[test]
    fn stopper_sleep_ends_early_when_stopped() {
        let s = Stopper::default();
        let s2 = s.clone();
        let t = std::thread::spawn(move || {
            let start = Instant::now();
            s2.sleep(Duration::from_secs(30));
            start.elapsed()
        });
        std::thread::sleep(Duration::from_millis(20));
        s.stop();
        assert!(t.join().unwrap() < Duration::from_secs(5));
        // Once stopped, later sleeps end at once.
        let start = Instant::now();
        s.sleep(Duration::from_secs(30));
        assert!(start.elapsed() < Duration::from_secs(5));
        let start = Instant::now();
        Stopper::default().sleep(Duration::from_millis(30));
        assert!(start.elapsed() >= Duration::from_millis(30));
    }

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_arguments_and_rejects_bad_ones() {
        let a = parse_args(&strings(&["http", "--catalog", "c.json", "--token-file=t", "--port-file", "p"]))
            .unwrap();
        assert!(a.http);
        assert_eq!(a.token_file, Some(PathBuf::from("t")));
        assert_eq!(a.port_file, Some(PathBuf::from("p")));
        let a = parse_args(&strings(&["stdio", "--catalog", "c.json", "--record", "r"])).unwrap();
        assert_eq!((a.http, a.record), (false, Some(PathBuf::from("r"))));
        for (bad, needle) in [
            (vec![], "missing mode"),
            (vec!["sse"], "unknown mode"),
            (vec!["stdio"], "--catalog is required"),
            (vec!["stdio", "--catalog"], "--catalog needs a value"),
            (vec!["stdio", "--catalog", "a", "--catalog", "b"], "given twice"),
            (vec!["stdio", "--catalog", "a", "--port-file", "p"], "unknown argument"),
            (vec!["http", "--catalog", "a"], "--port-file is required"),
            (vec!["http", "--catalog", "a", "--port-file", "p", "-x"], "unknown argument"),
        ] {
            let err = parse_args(&strings(&bad)).unwrap_err();
            assert!(err.contains(needle), "{bad:?}: {err}");
        }
    }

    #[test]
    fn main_exits_2_on_bad_args_and_unreadable_catalog() {
        assert_eq!(main_with_args(strings(&["bogus"])), 2);
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.json");
        assert_eq!(main_with_args(strings(&["stdio", "--catalog", missing.to_str().unwrap()])), 2);
        let cat = dir.path().join("c.json");
        std::fs::write(&cat, r#"{"server":"s","tools":[]}"#).unwrap();
        let rec = dir.path().join("no/such/dir/rec.jsonl");
        let code = main_with_args(strings(&[
            "stdio",
            "--catalog",
            cat.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
        ]));
        assert_eq!(code, 2);
    }

    #[test]
    fn port_file_is_written_via_rename() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("port");
        write_atomically(&p, "1234").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1234");
        assert!(!dir.path().join("port.tmp").exists());
    }
}
