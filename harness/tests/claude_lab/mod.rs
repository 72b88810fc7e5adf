//! A run directory for driving the fake `claude -p` directly, without any
//! driver: script, config dir, working directory, MCP catalogs and
//! recordings. Shared by the fake Claude Code test files.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

pub const FAKE_CLAUDE: &str = env!("CARGO_BIN_EXE_fake-claude");
pub const FAKE_MCP: &str = env!("CARGO_BIN_EXE_fake-mcp");
pub const OLD: &str = "2.1.266";
pub const NEW: &str = "2.1.332";

/// One run directory: script, config dir, working directory, MCP catalogs
/// and recordings.
pub struct Lab {
    pub _tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub version: String,
}

pub struct Ran {
    pub code: i32,
    pub events: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    pub fn of_type<'a>(&'a self, ty: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.events.iter().filter(move |e| e["type"] == ty)
    }

    pub fn result(&self) -> &Value {
        self.events.last().filter(|e| e["type"] == "result").unwrap_or_else(|| panic!("no result last: {}\n{}", self.stdout, self.stderr))
    }

    pub fn init(&self) -> &Value {
        let first = &self.events[0];
        assert_eq!((first["type"].as_str(), first["subtype"].as_str()), (Some("system"), Some("init")), "{first}");
        first
    }

    pub fn denied_events(&self) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == "system" && e["subtype"] == "permission_denied").collect()
    }
}

pub fn call(step: usize, server: &str, tool: &str, arguments: Value) -> Value {
    json!({"kind": "tool_call", "step": step, "server": server, "tool": tool, "arguments": arguments})
}

/// The usual pair: `lab.echo` then the same tool name on `other`.
pub fn pair() -> Vec<Value> {
    vec![call(0, "lab", "echo", json!({"n": 0})), call(1, "other", "echo", json!({"n": 1}))]
}

impl Lab {
    pub fn new(version: &str, turns: Vec<Vec<Value>>) -> Lab {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        for d in ["cfg", "home", "work"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let turns: Vec<Value> = turns.into_iter().map(|a| json!({"actions": a})).collect();
        let script = json!({"version": version, "transcript": dir.join("claude.jsonl"), "state": dir.join("state.json"), "turns": turns});
        std::fs::write(dir.join("script.json"), script.to_string()).unwrap();
        Lab { _tmp: tmp, dir, version: version.to_string() }
    }

    /// A stdio server entry for --mcp-config, backed by a recording fake-mcp.
    pub fn stdio(&self, server: &str, tools: Value) -> Value {
        let catalog = self.dir.join(format!("{server}.catalog.json"));
        std::fs::write(&catalog, json!({"server": server, "tools": tools}).to_string()).unwrap();
        json!({"type": "stdio", "command": FAKE_MCP, "args": [
            "stdio", "--catalog", catalog.display().to_string(), "--record", self.recording_path(server).display().to_string()
        ]})
    }

    pub fn recording_path(&self, server: &str) -> PathBuf {
        self.dir.join(format!("{server}.jsonl"))
    }

    /// `lab` and `other`, both with `echo` and `write`.
    pub fn two_servers(&self) -> String {
        let tools = json!([{"name": "echo"}, {"name": "write"}]);
        json!({"mcpServers": {"lab": self.stdio("lab", tools.clone()), "other": self.stdio("other", tools)}}).to_string()
    }

    /// The fake with this lab's script, working directory and isolated
    /// environment (MCP tools inlined: ENABLE_TOOL_SEARCH=false), and `args`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(FAKE_CLAUDE);
        cmd.arg("--run")
            .arg(self.dir.join("script.json"))
            .args(args)
            .current_dir(self.dir.join("work"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.join("home"))
            .env("CLAUDE_CONFIG_DIR", self.dir.join("cfg"))
            .env("ENABLE_TOOL_SEARCH", "false");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Ran {
        self.run_env(args, &[])
    }

    /// Runs with MCP tools inlined (ENABLE_TOOL_SEARCH=false) unless `env`
    /// says otherwise: the permission tests here look at the tool calls
    /// themselves, not at ToolSearch loading them first.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::null()).envs(env.iter().copied());
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let events = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        Ran { code: out.status.code().unwrap_or(-1), events, stdout, stderr: String::from_utf8_lossy(&out.stderr).to_string() }
    }

    /// `-p` in stream-json with the two servers and `extra` flags.
    pub fn play(&self, extra: &[&str]) -> Ran {
        self.play_env(extra, &[])
    }

    pub fn play_env(&self, extra: &[&str], env: &[(&str, &str)]) -> Ran {
        let config = self.two_servers();
        let mut args = vec!["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config];
        args.extend_from_slice(extra);
        let ran = self.run_env(&args, env);
        assert_eq!(ran.code, 0, "{} {extra:?}\nstdout: {}\nstderr: {}", self.version, ran.stdout, ran.stderr);
        ran
    }

    pub fn transcript(&self) -> Vec<Value> {
        fakes::wire::read_jsonl(&self.dir.join("claude.jsonl")).unwrap_or_default()
    }

    pub fn outcomes(&self) -> Vec<Value> {
        self.transcript().into_iter().filter(|e| e["event"] == "outcome").collect()
    }

    pub fn recording(&self, server: &str) -> Vec<Value> {
        fakes::wire::read_jsonl(&self.recording_path(server)).unwrap_or_default()
    }

    pub fn calls(&self, server: &str) -> Vec<Value> {
        self.recording(server).into_iter().filter(|e| e["event"] == "tools/call").collect()
    }

    pub fn received(&self, server: &str, method: &str) -> Vec<Value> {
        self.recording(server).into_iter().filter(|e| e["dir"] == "in" && e["msg"]["method"] == method).map(|e| e["msg"].clone()).collect()
    }
}

pub fn not_granted(name: &str) -> Value {
    json!(format!("Claude requested permissions to use {name}, but you haven't granted it yet."))
}

pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}


/// A run whose `perm` server's `approve` tool answers `answer` as its one
/// text block.
pub fn with_prompt_tool(version: &str, answer: &str, extra: &[&str]) -> (Lab, Ran) {
    let lab = Lab::new(version, vec![pair()]);
    let tools = json!([{"name": "echo"}, {"name": "write"}]);
    let perm = lab.stdio("perm", json!([{"name": "approve", "result": {"content": [{"type": "text", "text": answer}]}}]));
    let config = json!({"mcpServers": {"lab": lab.stdio("lab", tools.clone()), "other": lab.stdio("other", tools), "perm": perm}}).to_string();
    let mut args = vec!["-p", "go", "--output-format", "stream-json", "--verbose", "--mcp-config", &config, "--permission-prompt-tool", "mcp__perm__approve"];
    args.extend_from_slice(extra);
    let ran = lab.run(&args);
    (lab, ran)
}
