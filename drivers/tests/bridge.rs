//! The bridge server speaks enough Streamable HTTP for the child CLIs, hands
//! each tools/call to the driver loop, and filters results for the model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;

use drivers::bridge::{model_facing, BridgeServer};
use drivers::events::Event;
use serde_json::{json, Value};

/// One request on a keep-alive connection: (status, body).
fn post(conn: &mut BufReader<TcpStream>, body: &Value) -> (u16, Option<Value>) {
    let text = body.to_string();
    let head = format!("POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", text.len());
    conn.get_mut().write_all(head.as_bytes()).unwrap();
    conn.get_mut().write_all(text.as_bytes()).unwrap();
    let mut status = String::new();
    conn.read_line(&mut status).unwrap();
    let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut length = 0;
    loop {
        let mut h = String::new();
        conn.read_line(&mut h).unwrap();
        if h.trim().is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut buf = vec![0; length];
    conn.read_exact(&mut buf).unwrap();
    (code, if length == 0 { None } else { Some(serde_json::from_slice(&buf).unwrap()) })
}

#[test]
fn serves_tools_and_forwards_calls_to_the_driver_loop() {
    let (tx, rx) = mpsc::channel();
    let server = BridgeServer::start(vec![json!({"name": "lookup"})], tx).unwrap();
    std::thread::spawn(move || {
        while let Ok(Event::Bridge(call)) = rx.recv() {
            let _ = call.reply.send(json!({"content": [{"type": "text", "text": format!("{} {}", call.tool, call.meta["callId"])}]}));
        }
    });
    let mut conn = BufReader::new(TcpStream::connect(server.addr).unwrap());
    let (code, init) = post(&mut conn, &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}));
    assert_eq!(code, 200);
    assert_eq!(init.unwrap()["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(post(&mut conn, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).0, 202);
    let (_, list) = post(&mut conn, &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(list.unwrap()["result"]["tools"][0]["name"], "lookup");
    let (_, call) = post(&mut conn, &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "lookup", "arguments": {}, "_meta": {"callId": "call_7"}}}));
    assert_eq!(call.unwrap()["result"]["content"][0]["text"], "lookup \"call_7\"");
    drop(server);
}

#[test]
fn model_facing_keeps_assistant_and_unmarked_blocks_without_annotations() {
    let result = json!({"content": [
        {"type": "text", "text": "A", "annotations": {"audience": ["assistant", "user"], "priority": 0.5}},
        {"type": "text", "text": "U", "annotations": {"audience": ["user"]}},
        {"type": "text", "text": "P", "annotations": {"priority": 1}},
    ], "isError": true});
    let out = model_facing(&result);
    let texts: Vec<&str> = out["content"].as_array().unwrap().iter().map(|b| b["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["A", "P"]);
    assert!(out["content"].as_array().unwrap().iter().all(|b| b.get("annotations").is_none()));
    assert_eq!(out["isError"], true);
}
