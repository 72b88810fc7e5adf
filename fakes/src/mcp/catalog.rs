//! What a fake MCP server exposes: a server name and a list of tools, each
//! with optional annotations, a canned result and an artificial delay.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};

/// Between the tool's name and its arguments in a default result's text, so
/// a judge can tell a result from an error.
pub const RESULT_MARK: &str = " ok: ";

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    pub server: String,
    pub tools: Vec<Tool>,
    /// A gateway's token vault: a JSON object mapping OAuth targets to the
    /// user's consent token, read at every call (the harness writes it when
    /// the user consents).
    #[serde(default)]
    pub vault: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Sent verbatim in tools/list; `None` omits the key entirely, which is a
    /// different case from `{}` for clients that key policy off hints.
    #[serde(default)]
    pub annotations: Option<Map<String, Value>>,
    /// A CallToolResult returned verbatim; `None` means the default echo.
    #[serde(default)]
    pub result: Option<Value>,
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Gateway tools: calls are blocked until the catalog's vault holds a
    /// consent token for this OAuth target.
    #[serde(default)]
    pub oauth_target: Option<String>,
    /// Before answering a call, the server asks the client this question
    /// with `elicitation/create` (stdio) and answers once it has the reply.
    #[serde(default)]
    pub elicits: Option<String>,
    /// With `elicits`: a URL-mode elicitation asking the user to open this
    /// page (`elicitationId` `<tool>-consent`) instead of a form.
    #[serde(default)]
    pub elicit_url: Option<String>,
}

impl Catalog {
    /// Parses a catalog; errors carry "line L, column C" of the JSON problem.
    pub fn from_json_str(text: &str) -> Result<Catalog, String> {
        let catalog: Catalog = serde_json::from_str(text).map_err(|e| {
            let full = e.to_string();
            // serde_json appends " at line L column C"; we put the position first.
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let msg = full.strip_suffix(&suffix).unwrap_or(&full);
            format!("line {}, column {}: {}", e.line(), e.column(), msg)
        })?;
        catalog.validate()?;
        Ok(catalog)
    }

    /// Reads and parses a catalog file; every error message starts with the path.
    pub fn load(path: &Path) -> Result<Catalog, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("catalog {}: {}", path.display(), e))?;
        Catalog::from_json_str(&text).map_err(|e| format!("catalog {}: {}", path.display(), e))
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The `tools` array of a tools/list result.
    pub fn tools_json(&self) -> Value {
        Value::Array(self.tools.iter().map(Tool::list_entry).collect())
    }

    fn validate(&self) -> Result<(), String> {
        for (i, tool) in self.tools.iter().enumerate() {
            if tool.name.is_empty() {
                return Err(format!("tools[{i}]: empty tool name"));
            }
            // A duplicate would make tools/call ambiguous and tests misleading.
            if self.tools[..i].iter().any(|t| t.name == tool.name) {
                return Err(format!("tools[{i}]: duplicate tool name {:?}", tool.name));
            }
        }
        Ok(())
    }
}

impl Tool {
    fn list_entry(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("name".into(), json!(self.name));
        if let Some(d) = &self.description {
            entry.insert("description".into(), json!(d));
        }
        entry.insert(
            "inputSchema".into(),
            json!({"type": "object", "properties": {}, "additionalProperties": true}),
        );
        if let Some(a) = &self.annotations {
            entry.insert("annotations".into(), Value::Object(a.clone()));
        }
        Value::Object(entry)
    }

    /// The CallToolResult for one call: the canned result, or an echo that
    /// lets tests see exactly which arguments reached the server.
    pub fn result_for(&self, server: &str, arguments: &Value) -> Value {
        match &self.result {
            Some(r) => r.clone(),
            None => json!({
                "content": [{"type": "text", "text": format!("{server}/{}{RESULT_MARK}{arguments}", self.name)}],
                "isError": false,
            }),
        }
    }

    /// The `elicitation/create` params this tool's calls send, if any: its
    /// question and a one-field form, or its page to open.
    pub fn elicitation(&self) -> Option<Value> {
        let message = self.elicits.as_ref()?;
        if let Some(url) = &self.elicit_url {
            return Some(json!({"mode": "url", "message": message, "url": url, "elicitationId": format!("{}-consent", self.name)}));
        }
        let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]});
        Some(json!({"message": message, "requestedSchema": schema}))
    }

    pub fn delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_elicits_a_form_or_a_page_to_open() {
        let c = Catalog::from_json_str(
            r#"{"server":"crm","tools":[{"name":"ask","elicits":"Which?"},
                {"name":"connect","elicits":"Sign in","elicit_url":"https://crm.example.invalid/"},{"name":"plain"}]}"#,
        )
        .unwrap();
        let form = c.tools[0].elicitation().unwrap();
        assert_eq!((form["message"].as_str(), form.get("mode")), (Some("Which?"), None));
        assert_eq!(form["requestedSchema"]["required"], json!(["answer"]));
        assert_eq!(c.tools[1].elicitation(), Some(json!({"mode": "url", "message": "Sign in", "url": "https://crm.example.invalid/", "elicitationId": "connect-consent"})));
        assert_eq!(c.tools[2].elicitation(), None);
    }

    #[test]
    fn parses_full_and_minimal_tools() {
        let c = Catalog::from_json_str(
            r#"{"server":"files","tools":[
                {"name":"read_file","description":"d","annotations":{"readOnlyHint":true},
                 "result":{"content":[],"isError":true},"delay_ms":5},
                {"name":"write_file"}]}"#,
        )
        .unwrap();
        assert_eq!(c.server, "files");
        assert_eq!(c.tools[0].delay(), Duration::from_millis(5));
        assert_eq!(c.tools[1].delay(), Duration::ZERO);
        assert!(c.tools[1].annotations.is_none());
        assert_eq!(c.tool("write_file").map(|t| t.name.as_str()), Some("write_file"));
        assert!(c.tool("nope").is_none());
    }

    #[test]
    fn error_names_line_and_column() {
        let err = Catalog::from_json_str("{\"server\":\"s\",\n \"tools\": [ }").unwrap_err();
        assert!(err.starts_with("line 2, column "), "{err}");
        assert!(!err.contains(" at line "), "position given twice: {err}");
    }

    #[test]
    fn rejects_unknown_fields_and_duplicates() {
        let err = Catalog::from_json_str(r#"{"server":"s","tools":[{"name":"a","delay":1}]}"#).unwrap_err();
        assert!(err.contains("unknown field `delay`"), "{err}");
        let err = Catalog::from_json_str(r#"{"server":"s","tools":[],"extra":1}"#).unwrap_err();
        assert!(err.contains("unknown field `extra`"), "{err}");
        let err =
            Catalog::from_json_str(r#"{"server":"s","tools":[{"name":"a"},{"name":"a"}]}"#).unwrap_err();
        assert!(err.contains("duplicate tool name \"a\""), "{err}");
        let err =
            Catalog::from_json_str(r#"{"server":"s","tools":[{"name":"a","annotations":[1]}]}"#).unwrap_err();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn load_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cat.json");
        std::fs::write(&path, "{\n\n  \"server\": 3}").unwrap();
        let err = Catalog::load(&path).unwrap_err();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("line 3, column "), "{err}");
        let missing = dir.path().join("missing.json");
        let err = Catalog::load(&missing).unwrap_err();
        assert!(err.contains("missing.json"), "{err}");
    }

    #[test]
    fn list_entry_omits_absent_annotations() {
        let c =
            Catalog::from_json_str(r#"{"server":"s","tools":[{"name":"a"},{"name":"b","annotations":{}}]}"#)
                .unwrap();
        let tools = c.tools_json();
        assert!(tools[0].get("annotations").is_none());
        assert!(tools[0].get("description").is_none());
        assert_eq!(tools[1]["annotations"], json!({}));
        assert_eq!(tools[0]["inputSchema"]["additionalProperties"], json!(true));
    }
}
