//! What the model gets from an MCP tool result, as measured: every block
//! reaches it (audience is not filtered), annotations are dropped, an
//! embedded text resource becomes "[Resource from S at URI] TEXT",
//! `structuredContent` replaces the blocks with its JSON, and an `isError`
//! result becomes an error tool_result holding the text.

use std::path::Path;

use serde_json::{json, Value};

/// The `content` of the tool_result block, whether it is an error, and the
/// `tool_use_result` of the stream-json user message.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub content: Value,
    pub is_error: bool,
    pub tool_use_result: Value,
}

impl Rendered {
    pub fn error(text: impl Into<String>) -> Rendered {
        let text = text.into();
        // Measured: a wrapped error shows as its inner text ("Error: No such
        // tool available: ..."), any other as "Error: TEXT".
        let shown = match text.strip_prefix("<tool_use_error>").and_then(|t| t.strip_suffix("</tool_use_error>")) {
            Some(inner) => inner.to_string(),
            None => format!("Error: {text}"),
        };
        Rendered { tool_use_result: json!(shown), content: json!(text), is_error: true }
    }
}

/// Where binary blocks are saved, as the real CLI does under its config dir.
pub struct BlobDir<'a> {
    pub dir: &'a Path,
}

/// `schema_hint`: 2.1.332 appends the input schema to the error text of a
/// deferred tool (the model called it without loading it).
pub fn render(server: &str, tool_name: &str, result: &Value, schema_hint: Option<&Value>, blobs: &BlobDir) -> Rendered {
    let blocks = result.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    if result.get("isError") == Some(&json!(true)) {
        let text = blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n");
        let mut shown = text.clone();
        if let Some(schema) = schema_hint {
            shown.push_str(&format!(
                "\n\nThis tool's input schema was not in your prompt when you called it. The input schema is: {schema}\nIf your input does not match this schema, correct it and call the tool again. If it matches, the error above has another cause. If the corrected call fails the same way, call ToolSearch with query \"select:{tool_name}\" to load the tool, then call it again."
            ));
        }
        return Rendered { content: json!(shown), is_error: true, tool_use_result: json!(format!("Error: {text}")) };
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let text = structured.to_string();
        return Rendered {
            content: json!(text),
            is_error: false,
            tool_use_result: json!({"content": text, "structuredContent": structured}),
        };
    }
    let mut out = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => out.push(json!({"type": "text", "text": b.get("text").and_then(Value::as_str).unwrap_or("")})),
            Some("image") => out.push(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": b.get("mimeType").cloned().unwrap_or(json!("image/png")), "data": b.get("data").cloned().unwrap_or(json!(""))},
            })),
            Some("resource") => {
                let r = b.get("resource").cloned().unwrap_or(Value::Null);
                let uri = r.get("uri").and_then(Value::as_str).unwrap_or("");
                let prefix = format!("[Resource from {server} at {uri}] ");
                if let Some(text) = r.get("text").and_then(Value::as_str) {
                    out.push(json!({"type": "text", "text": format!("{prefix}{text}")}));
                } else if let Some(blob) = r.get("blob").and_then(Value::as_str) {
                    let mime = r.get("mimeType").and_then(Value::as_str).unwrap_or("application/octet-stream");
                    out.push(json!({"type": "text", "text": format!("{prefix}{}", save_blob(blobs, server, i, mime, blob))}));
                }
            }
            Some("resource_link") => {
                let name = b.get("name").and_then(Value::as_str).unwrap_or("");
                let uri = b.get("uri").and_then(Value::as_str).unwrap_or("");
                let mut text = format!("[Resource link: {name}] {uri}");
                if let Some(d) = b.get("description").and_then(Value::as_str) {
                    text.push_str(&format!(" ({d})"));
                }
                out.push(json!({"type": "text", "text": text}));
            }
            _ => out.push(json!({"type": "text", "text": b.to_string()})),
        }
    }
    let content = Value::Array(out);
    Rendered { tool_use_result: content.clone(), content, is_error: false }
}

/// Saves a base64 blob and describes it as the real CLI does.
fn save_blob(blobs: &BlobDir, server: &str, index: usize, mime: &str, data: &str) -> String {
    let Some(bytes) = decode_base64(data) else {
        return "Binary content could not be saved to disk: invalid base64".to_string();
    };
    let ext = match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "application/pdf" => "pdf",
        "text/plain" => "txt",
        "application/json" => "json",
        _ => "bin",
    };
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let path = blobs.dir.join(format!("mcp-{server}-blob-{millis}-{index}.{ext}"));
    match std::fs::create_dir_all(blobs.dir).and_then(|_| std::fs::write(&path, &bytes)) {
        Ok(()) => format!("Binary content ({mime}, {} bytes) saved to {}", bytes.len(), path.display()),
        Err(e) => format!("Binary content could not be saved to disk: {e}"),
    }
}

fn decode_base64(data: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = 0u32;
    let mut bits = 0;
    for c in data.bytes().filter(|c| !c.is_ascii_whitespace()) {
        if c == b'=' {
            break;
        }
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        buf = (buf << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
            buf &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> BlobDir<'static> {
        BlobDir { dir: Path::new("/nonexistent-fake-claude") }
    }

    #[test]
    fn blocks_reach_the_model_without_annotations() {
        let r = json!({"content": [
            {"type": "text", "text": "A", "annotations": {"audience": ["assistant"]}},
            {"type": "text", "text": "U", "annotations": {"audience": ["user"], "priority": 0.0}},
            {"type": "resource", "resource": {"uri": "file:///x.txt", "text": "EMB"}},
            {"type": "resource_link", "uri": "file:///l.txt", "name": "l.txt", "description": "a link"},
        ]});
        let out = render("srv", "mcp__srv__t", &r, None, &none());
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            json!([
                {"type": "text", "text": "A"},
                {"type": "text", "text": "U"},
                {"type": "text", "text": "[Resource from srv at file:///x.txt] EMB"},
                {"type": "text", "text": "[Resource link: l.txt] file:///l.txt (a link)"},
            ])
        );
    }

    #[test]
    fn structured_and_error_results() {
        let s = render("srv", "mcp__srv__t", &json!({"content": [{"type": "text", "text": "X"}], "structuredContent": {"answer": 42}}), None, &none());
        assert_eq!(s.content, json!("{\"answer\":42}"));
        let e = render("srv", "mcp__srv__t", &json!({"content": [{"type": "text", "text": "FAILED"}], "isError": true}), None, &none());
        assert_eq!((e.content, e.is_error, e.tool_use_result), (json!("FAILED"), true, json!("Error: FAILED")));
        let h = render("srv", "mcp__srv__t", &json!({"content": [{"type": "text", "text": "F"}], "isError": true}), Some(&json!({"type": "object"})), &none());
        assert!(h.content.as_str().unwrap().starts_with("F\n\nThis tool's input schema was not in your prompt when you called it. The input schema is: {\"type\":\"object\"}\n"));
    }

    #[test]
    fn base64() {
        assert_eq!(decode_base64("AAECAw=="), Some(vec![0, 1, 2, 3]));
        assert_eq!(decode_base64("aGk="), Some(b"hi".to_vec()));
        assert_eq!(decode_base64("!!"), None);
    }
}
