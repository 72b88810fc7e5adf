//! The fake `codex exec --json` behaves like the measured real one
//! (../shared/SDK-FACTS.md part B and the measurements in the fake's
//! comments): the argv `@openai/codex-sdk` passes, the JSONL events, the
//! approval outcome per version, resume, and the errors for bad input.
//! Runs the fake as the SDK does: flags on argv, the prompt on stdin.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

mod codex_lab;

use codex_lab::FAKE_CODEX;

const VERSIONS: [&str; 5] = ["0.146.0", "0.147.0", "0.148.0", "0.153.4", "0.171.0"];
const NEVER: &str = "MCP tool call requires approval, but approval policy is never";
const CANCELLED: &str = "user cancelled MCP tool call";

/// A run directory: CODEX_HOME with one stdio MCP server `lab` (tools
/// `plain` and read-only `ro`), a script with one turn per entry of `turns`,
/// and a working directory `work`.
struct Run {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

struct Exit {
    code: i32,
    events: Vec<Value>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn new(version: &str, turns: &[&[&str]]) -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        std::fs::create_dir_all(dir.join("home")).unwrap();
        std::fs::create_dir_all(dir.join("work")).unwrap();
        std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
        codex_lab::write_run(&dir, version, codex_lab::plain(), codex_lab::calls_turns(turns, |_| json!({"message": "hi"})), "");
        Run { _tmp: tmp, dir }
    }

    /// `codex exec ARGS` with `prompt` on stdin.
    fn exec(&self, args: &[&str], prompt: &str) -> Exit {
        self.exec_under(&[], args, prompt)
    }

    /// `codex ROOT exec ARGS`: `root` holds root-level flags such as `-c`.
    fn exec_under(&self, root: &[&str], args: &[&str], prompt: &str) -> Exit {
        let mut child = Command::new(FAKE_CODEX)
            .arg("--run")
            .arg(self.dir.join("script.json"))
            .args(root)
            .arg("exec")
            .args(args)
            .env("CODEX_HOME", self.dir.join("home"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(prompt.as_bytes());
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let events = stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
        Exit { code: out.status.code().unwrap_or(-1), events, stdout, stderr: String::from_utf8_lossy(&out.stderr).to_string() }
    }

    /// The SDK's argv (measured through a codexPathOverride wrapper), with
    /// `extra` flags before `--skip-git-repo-check`'s end of the list.
    fn sdk(&self, extra: &[&str]) -> Exit {
        self.sdk_in(&self.dir.join("work"), extra, &[])
    }

    fn sdk_in(&self, cwd: &Path, extra: &[&str], tail: &[&str]) -> Exit {
        let cwd = cwd.display().to_string();
        let mut args = vec!["--experimental-json", "--config", "show_raw_agent_reasoning=false", "--model", "mock-model"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--cd", &cwd, "--skip-git-repo-check"]);
        args.extend_from_slice(tail);
        self.exec(&args, "call the tool")
    }

    fn transcript(&self) -> Vec<Value> {
        fakes::wire::read_jsonl(&self.dir.join("codex.jsonl")).unwrap_or_default()
    }

    fn outcomes(&self) -> Vec<Value> {
        self.transcript().into_iter().filter(|e| e["event"] == "outcome").collect()
    }

    fn server_calls(&self) -> usize {
        fakes::wire::read_jsonl(&self.dir.join("lab.jsonl")).unwrap_or_default().iter().filter(|e| e["event"] == "tools/call").count()
    }
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn tool_items(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "mcp_tool_call").map(|e| &e["item"]).collect()
}

#[test]
fn events_as_measured() {
    let run = Run::new("0.171.0", &[&["plain"]]);
    let x = run.sdk(&["--sandbox", "read-only", "--config", "mcp_servers.lab.tools.plain.approval_mode=\"approve\""]);
    assert_eq!(x.code, 0, "{}", x.stderr);
    assert_eq!(
        types(&x.events),
        ["thread.started", "item.completed", "turn.started", "item.started", "item.completed", "item.completed", "turn.completed"]
    );
    let thread_id = x.events[0]["thread_id"].as_str().unwrap();
    assert_eq!(thread_id.len(), 36, "{thread_id}");
    assert_eq!(
        x.events[1]["item"],
        json!({"id": "item_0", "type": "error", "message": "Model metadata for `mock-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."})
    );
    assert_eq!(
        x.events[3]["item"],
        json!({"id": "item_1", "type": "mcp_tool_call", "server": "lab", "tool": "plain", "arguments": {"message": "hi"},
               "result": null, "error": null, "status": "in_progress"})
    );
    let done = &x.events[4]["item"];
    assert_eq!((&done["id"], &done["status"], &done["error"]), (&json!("item_1"), &json!("completed"), &Value::Null));
    assert_eq!(done["result"]["structured_content"], Value::Null);
    assert_eq!(done["result"]["content"][0]["type"], "text");
    assert_eq!(x.events[5]["item"], json!({"id": "item_2", "type": "agent_message", "text": "Done."}));
    assert_eq!(
        x.events[6],
        json!({"type": "turn.completed", "usage": {"input_tokens": 0, "cached_input_tokens": 0, "cache_write_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0}})
    );
    assert_eq!(x.stderr.trim(), "Reading prompt from stdin...");
    assert_eq!(run.server_calls(), 1);
    // Every stdout line is in the transcript, in order, and the step's outcome too.
    let recorded: Vec<Value> = run.transcript().into_iter().filter(|e| e["dir"] == "s2c").map(|e| e["msg"].clone()).collect();
    assert_eq!(recorded, x.events);
    let o = run.outcomes();
    assert_eq!(o.len(), 1);
    assert_eq!((&o[0]["step"], &o[0]["item_status"], &o[0]["prompted"]), (&json!(0), &json!("completed"), &json!(false)));
    assert_eq!(o[0]["mcp_result"]["content"], done["result"]["content"]);
}

#[test]
fn json_and_experimental_json_print_the_same() {
    let strip = |x: Exit| -> Vec<Value> { x.events.into_iter().map(|mut e| { e.as_object_mut().unwrap().remove("thread_id"); e }).collect() };
    let a = Run::new("0.146.0", &[&["plain"]]);
    let b = Run::new("0.146.0", &[&["plain"]]);
    let xa = a.exec(&["--json", "--skip-git-repo-check"], "p");
    let xb = b.exec(&["--experimental-json", "--skip-git-repo-check"], "p");
    assert_eq!(strip(xa), strip(xb));
    // Without either flag the real CLI prints for humans, which the fake does not simulate.
    assert_eq!(a.exec(&["--skip-git-repo-check"], "p").code, 2);
}

#[test]
fn prompt_from_stdin_or_argument() {
    let run = Run::new("0.171.0", &[&[], &[]]);
    let x = run.exec(&["--json", "--skip-git-repo-check"], "from stdin");
    assert_eq!((x.code, x.stderr.trim()), (0, "Reading prompt from stdin..."));
    let x = run.exec(&["--json", "--skip-git-repo-check", "positional"], "");
    assert_eq!((x.code, x.stderr.trim()), (0, "Reading additional input from stdin..."));
    let turns: Vec<Value> = run.transcript().into_iter().filter(|e| e["event"] == "turn").map(|e| e["input"].clone()).collect();
    assert_eq!(turns, [json!("from stdin"), json!("positional")]);
    // `--image <FILE>...` takes the would-be prompt too; stdin is empty.
    let x = run.exec(&["--json", "--skip-git-repo-check", "--image", "a.png", "hi"], "");
    assert_eq!((x.code, x.stdout.as_str()), (1, ""));
    assert_eq!(x.stderr, "Reading prompt from stdin...\nNo prompt provided via stdin.\n");
}

#[test]
fn git_repo_check() {
    let run = Run::new("0.171.0", &[&[], &[]]);
    let work = run.dir.join("work").display().to_string();
    let x = run.exec(&["--json", "--cd", &work], "hi");
    assert_eq!((x.code, x.stdout.as_str()), (1, ""));
    assert_eq!(x.stderr.lines().last(), Some("Not inside a trusted directory and --skip-git-repo-check was not specified."));
    // Inside a git work tree, any depth, the check passes.
    std::fs::create_dir_all(run.dir.join("work/.git")).unwrap();
    std::fs::create_dir_all(run.dir.join("work/sub")).unwrap();
    let sub = run.dir.join("work/sub").display().to_string();
    assert_eq!(run.exec(&["--json", "--cd", &sub], "hi").code, 0);
}

/// (case, extra flags, tool, outcome on 0.146/0.147, outcome from 0.148):
/// `None` completes, `Some(msg)` fails with msg and no tools/call.
type Row = (&'static str, &'static [&'static str], &'static str, Option<&'static str>, Option<&'static str>);

/// The first eight rows are SDK-FACTS part B's; the last four were measured
/// on 0.146.0 and 0.171.0 (2026-12-03).
const TABLE: [Row; 12] = [
    ("default", &[], "plain", Some(CANCELLED), Some(NEVER)),
    ("on-request", &["--config", "approval_policy=\"on-request\""], "plain", Some(CANCELLED), Some(NEVER)),
    ("never", &["--config", "approval_policy=\"never\""], "plain", Some(CANCELLED), Some(NEVER)),
    ("approve", &["--config", "mcp_servers.lab.tools.plain.approval_mode=\"approve\""], "plain", None, None),
    (
        "approve + on-request",
        &["--config", "approval_policy=\"on-request\"", "--config", "mcp_servers.lab.tools.plain.approval_mode=\"approve\""],
        "plain",
        None,
        None,
    ),
    ("readOnlyHint", &["--config", "approval_policy=\"on-request\""], "ro", None, None),
    ("danger-full-access", &["--sandbox", "danger-full-access"], "plain", None, None),
    ("prompt + danger-full-access", &["--sandbox", "danger-full-access", "--config", "mcp_servers.lab.tools.plain.approval_mode=\"prompt\""], "plain", None, None),
    ("workspace-write", &["--sandbox", "workspace-write"], "plain", Some(CANCELLED), Some(NEVER)),
    ("server default approve", &["--config", "mcp_servers.lab.default_tools_approval_mode=\"approve\""], "plain", None, None),
    ("writes, unannotated", &["--config", "mcp_servers.lab.tools.plain.approval_mode=\"writes\""], "plain", Some(CANCELLED), Some(NEVER)),
    ("prompt on readOnlyHint", &["--config", "mcp_servers.lab.tools.ro.approval_mode=\"prompt\""], "ro", Some(CANCELLED), Some(NEVER)),
];

#[test]
fn outcome_table_per_version() {
    for version in VERSIONS {
        let new_message = version != "0.146.0" && version != "0.147.0";
        for (case, extra, tool, old, new) in TABLE {
            let expected = if new_message { new } else { old };
            let run = Run::new(version, &[&[tool]]);
            let x = run.sdk(extra);
            assert_eq!(x.code, 0, "{version} {case}: {}", x.stderr);
            let items = tool_items(&x.events);
            assert_eq!(items.len(), 1, "{version} {case}");
            match expected {
                None => {
                    assert_eq!(items[0]["status"], "completed", "{version} {case}");
                    assert_eq!(run.server_calls(), 1, "{version} {case}");
                }
                Some(msg) => {
                    assert_eq!((&items[0]["status"], &items[0]["result"]), (&json!("failed"), &Value::Null), "{version} {case}");
                    assert_eq!(items[0]["error"], json!({"message": msg}), "{version} {case}");
                    assert_eq!(run.server_calls(), 0, "{version} {case}: no tools/call reaches the server");
                }
            }
            assert_eq!(run.outcomes()[0]["item_status"], items[0]["status"], "{version} {case}");
            // The turn goes on after a failed call.
            assert_eq!(types(&x.events).last(), Some(&"turn.completed"));
        }
    }
}

/// The measured versions on either side of 0.149.0, the first release that
/// refuses it (bisected on the real binaries).
#[test]
fn untrusted_exits_1_before_any_event_from_0_149_0() {
    for version in VERSIONS {
        let run = Run::new(version, &[&["plain"]]);
        let x = run.sdk(&["--config", "approval_policy=\"untrusted\""]);
        if version == "0.153.4" || version == "0.171.0" {
            assert_eq!(x.code, 1);
            assert_eq!(x.stdout, "");
            assert_eq!(x.stderr.trim(), "Error: approval_policy = \"untrusted\" is no longer supported; remove this setting");
        } else {
            assert_eq!(x.code, 0, "{version}");
            let msg = if version < "0.148.0" { CANCELLED } else { NEVER };
            assert_eq!(tool_items(&x.events)[0]["error"]["message"], msg, "{version}");
        }
    }
}

#[test]
fn resume_by_id_and_last() {
    let run = Run::new("0.153.4", &[&["ro"], &["ro"], &["ro"], &["ro"]]);
    let first = run.sdk(&[]);
    let id = first.events[0]["thread_id"].as_str().unwrap().to_string();
    // `resume <id>` keeps the thread and plays the script's next turn.
    let again = run.sdk_in(&run.dir.join("work"), &[], &["resume", &id]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.events[0]["thread_id"], json!(id));
    // Item ids start again in each process.
    assert_eq!(tool_items(&again.events)[0]["id"], "item_1");
    // `--last` from the same cwd continues it; from another cwd it starts a new thread.
    let last = run.sdk_in(&run.dir.join("work"), &[], &["resume", "--last"]);
    assert_eq!(last.events[0]["thread_id"], json!(id));
    let other = run.sdk_in(&run.dir.join("elsewhere"), &[], &["resume", "--last"]);
    assert_eq!(other.code, 0);
    assert_ne!(other.events[0]["thread_id"], json!(id));
    let steps: Vec<Value> = run.outcomes().iter().map(|o| o["step"].clone()).collect();
    assert_eq!(steps, [json!(0), json!(1), json!(2), json!(3)]);
}

#[test]
fn resume_of_an_unknown_session() {
    let run = Run::new("0.146.0", &[&["ro"], &["ro"]]);
    let work = run.dir.join("work");
    // A UUID with no rollout: exit 1, nothing on stdout.
    let id = "01a23d6b-0000-7000-8000-000000000000";
    let x = run.sdk_in(&work, &[], &["resume", id]);
    assert_eq!((x.code, x.stdout.as_str()), (1, ""));
    assert_eq!(x.stderr.lines().last(), Some(format!("Error: thread/resume: thread/resume failed: no rollout found for thread id {id} (code -32600)").as_str()));
    // Not a UUID: a new thread, exit 0.
    let x = run.sdk_in(&work, &[], &["resume", "notauuid"]);
    assert_eq!(x.code, 0, "{}", x.stderr);
    assert_ne!(x.events[0]["thread_id"], json!("notauuid"));
    assert_eq!(tool_items(&x.events)[0]["status"], "completed");
}

#[test]
fn bad_input_errors_as_the_real_cli() {
    let run = Run::new("0.148.0", &[&["plain"]]);
    let x = run.exec(&["--json", "--bogus"], "p");
    assert_eq!(x.code, 2);
    assert!(x.stderr.starts_with("error: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value, use '-- --bogus'\n\nUsage: codex exec [OPTIONS] [PROMPT]"), "{}", x.stderr);
    let x = run.exec(&["--json", "--sandbox", "bogus"], "p");
    assert_eq!(x.code, 2);
    assert!(x.stderr.starts_with("error: invalid value 'bogus' for '--sandbox <SANDBOX_MODE>'\n  [possible values: read-only, workspace-write, danger-full-access]"), "{}", x.stderr);
    let x = run.exec(&["--json", "-c", "mcp_servers.lab.tools.t.approval_mode=\"Approve\""], "p");
    assert_eq!((x.code, x.stdout.as_str()), (1, ""));
    assert_eq!(
        x.stderr.trim(),
        "Error loading config.toml: unknown variant `Approve`, expected one of `auto`, `prompt`, `writes`, `approve`\nin `mcp_servers.lab.tools.t.approval_mode`"
    );
    let x = run.exec(&["--json", "-c", "foo"], "p");
    assert_eq!((x.code, x.stderr.trim()), (1, "Error parsing -c overrides: Invalid override (missing '='): foo"));
    assert_eq!(run.server_calls(), 0);
}

/// `codex -c A exec -c B`: through 0.163.0 B replaces A, from 0.164.0
/// both apply (bisected on the real releases; the model name in the
/// metadata warning shows which config won).
#[test]
fn exec_level_overrides_replace_root_ones_through_0_163_0() {
    for (version, kept) in [("0.146.0", false), ("0.153.4", false), ("0.171.0", true)] {
        let run = Run::new(version, &[&["plain"]]);
        let root = ["-c", "model=\"root-model\""];
        let sdk = ["--json", "--skip-git-repo-check", "--cd"];
        let work = run.dir.join("work").display().to_string();
        let with = run.exec_under(&root, &[&sdk[..], &[work.as_str(), "-c", "show_raw_agent_reasoning=false"]].concat(), "p");
        let without = run.exec_under(&root, &[&sdk[..], &[work.as_str()]].concat(), "p");
        let model = |x: &Exit| x.events[1]["item"]["message"].as_str().unwrap_or("").contains("`root-model`");
        assert_eq!((model(&with), model(&without)), (kept, true), "{version}: {}", with.stdout);
    }
}

/// tools/call `_meta` keys and turn-metadata keys per version, as measured
/// on the real `codex exec` with a per-tool `approve`.
#[test]
fn call_meta_per_version() {
    let base = ["model", "sandbox", "session_id", "thread_id", "thread_source", "turn_id", "turn_started_at_unix_ms"];
    let review = ["auto_review_enabled", "node_repl_auto_review_required", "node_repl_disabled", "sandbox_mode"];
    for (version, meta_keys, extra) in [
        ("0.146.0", &["threadId", "x-codex-turn-metadata"][..], &[][..]),
        ("0.147.0", &["threadId", "x-codex-turn-metadata"][..], &[][..]),
        ("0.148.0", &["callId", "threadId", "x-codex-turn-metadata"][..], &review[..]),
        ("0.153.4", &["callId", "itemId", "threadId", "x-codex-turn-metadata"][..], &review[..]),
        ("0.171.0", &["callId", "itemId", "sessionId", "threadId", "windowId", "x-codex-turn-metadata"][..], &[&review[..], &["codex_version", "turn_trigger"]].concat()[..]),
    ] {
        let run = Run::new(version, &[&["plain"]]);
        let x = run.sdk(&["--config", "mcp_servers.lab.tools.plain.approval_mode=\"approve\""]);
        let thread_id = x.events[0]["thread_id"].clone();
        let calls: Vec<Value> = fakes::wire::read_jsonl(&run.dir.join("lab.jsonl")).unwrap().into_iter().filter(|e| e["event"] == "tools/call").collect();
        let meta = &calls[0]["meta"];
        let mut keys: Vec<&str> = meta.as_object().unwrap().keys().map(String::as_str).filter(|k| *k != "progressToken").collect();
        keys.sort();
        assert_eq!(keys, meta_keys, "{version}");
        let turn = &meta["x-codex-turn-metadata"];
        let mut want: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        want.sort();
        let mut got: Vec<&str> = turn.as_object().unwrap().keys().map(String::as_str).collect();
        got.sort();
        assert_eq!(got, want, "{version}");
        assert_eq!((&meta["threadId"], &turn["thread_source"]), (&thread_id, &json!("user")), "{version}");
    }
}

/// The real binary of `version` in the suite's cache, if it was fetched.
fn real_codex(version: &str) -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let bin = cache.join("approval-conformance/codex").join(version).join("package/vendor/x86_64-unknown-linux-musl/bin/codex");
    bin.exists().then_some(bin)
}

/// The fake and the real `codex exec` print the same events (all but the
/// thread id), exit code and last stderr line for the same argv (the
/// SDK's), one MCP call and the mock model, on every cached version.
#[test]
fn fake_and_real_print_the_same_events() {
    let cases: [(&str, &[&str], &str, &[&str]); 6] = [
        ("default", &[], "plain", &[]),
        ("approve", &["--config", "mcp_servers.lab.tools.plain.approval_mode=\"approve\""], "plain", &[]),
        ("readOnlyHint", &["--config", "approval_policy=\"on-request\""], "ro", &[]),
        ("danger-full-access", &["--sandbox", "danger-full-access"], "plain", &[]),
        ("untrusted", &["--config", "approval_policy=\"untrusted\""], "plain", &[]),
        ("resume unknown", &[], "plain", &["resume", "01a23d6b-0000-7000-8000-000000000000"]),
    ];
    let mut compared = 0;
    for version in VERSIONS {
        let Some(real) = real_codex(version) else {
            eprintln!("skipped {version}: the real binary is not cached (fetch it with the conformance CLI)");
            continue;
        };
        for (case, extra, tool, tail) in cases {
            let run = Run::new(version, &[&[tool]]);
            let script = fakes::script::Script::load(&run.dir.join("script.json")).unwrap();
            let model = fakes::model::start(script.turns.clone(), fakes::wire::Recorder::none()).unwrap();
            let provider = format!(
                "model_providers.mock={{name=\"mock\",base_url=\"{}\",wire_api=\"responses\",env_key=\"MOCK_API_KEY\",request_max_retries=0,stream_max_retries=0}}",
                model.openai_base()
            );
            let mut flags: Vec<&str> = vec!["--config", "model_provider=\"mock\"", "--config", &provider];
            flags.extend_from_slice(extra);
            let fake = run.sdk_in(&run.dir.join("work"), &flags, tail);
            let fake_calls = run.server_calls();
            // The real one, on the same CODEX_HOME (the fake wrote nothing there).
            let work = run.dir.join("work").display().to_string();
            let mut args = vec!["exec", "--experimental-json", "--config", "show_raw_agent_reasoning=false", "--model", "mock-model"];
            args.extend_from_slice(&flags);
            args.extend_from_slice(&["--cd", &work, "--skip-git-repo-check"]);
            args.extend_from_slice(tail);
            let mut child = Command::new(&real)
                .args(&args)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", run.dir.join("userhome"))
                .env("CODEX_HOME", run.dir.join("home"))
                .env("MOCK_API_KEY", "mock-key")
                .env("NO_COLOR", "1")
                .env("RUST_LOG", "warn")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let _ = child.stdin.take().unwrap().write_all(b"call the tool");
            let out = child.wait_with_output().unwrap();
            let what = format!("{version} {case}");
            assert_eq!(out.status.code(), Some(fake.code), "{what}");
            let real_events: Vec<Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            let strip = |events: &[Value]| -> Vec<Value> {
                events.iter().map(|e| { let mut e = e.clone(); e.as_object_mut().unwrap().remove("thread_id"); e }).collect()
            };
            assert_eq!(strip(&fake.events), strip(&real_events), "{what}");
            // The real one's tools/call went to the same recording server.
            assert_eq!(run.server_calls(), 2 * fake_calls, "{what}");
            // What the fake prints on stderr, the real one prints too, in
            // the same order (among its log lines).
            let real_err = String::from_utf8_lossy(&out.stderr).to_string();
            let mut real_lines = real_err.lines();
            for line in fake.stderr.lines().filter(|l| !l.is_empty()) {
                assert!(real_lines.any(|r| r == line), "{what}: {line:?} not in the real stderr:\n{real_err}");
            }
            if fake.code != 0 {
                assert_eq!(fake.stderr.trim().lines().last(), real_err.trim().lines().last(), "{what}");
            } else {
                assert_eq!(tool_items(&real_events).len(), 1, "{what}: {real_events:?}");
            }
            compared += 1;
        }
    }
    eprintln!("compared {compared} cases with the real binary");
}

/// Bad argv and `-c` values: the same exit code and stderr (but the real
/// one's log lines) as the real binary, on every cached version.
#[test]
fn bad_input_as_the_real_binary() {
    let cases: [&[&str]; 5] = [
        &["--json", "--bogus"],
        &["--json", "--sandbox", "bogus"],
        &["--json", "-c", "mcp_servers.lab.tools.t.approval_mode=\"Approve\"", "--skip-git-repo-check"],
        &["--json", "-c", "foo", "--skip-git-repo-check"],
        &["--json", "--skip-git-repo-check"],
    ];
    for version in VERSIONS {
        let Some(real) = real_codex(version) else {
            eprintln!("skipped {version}: the real binary is not cached");
            continue;
        };
        for args in cases {
            let run = Run::new(version, &[&[]]);
            let fake = run.exec(args, "");
            let out = Command::new(&real)
                .arg("exec")
                .args(args)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", run.dir.join("userhome"))
                .env("CODEX_HOME", run.dir.join("home"))
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let what = format!("{version} {args:?}");
            assert_eq!(out.status.code(), Some(fake.code), "{what}");
            let real_err: String = String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| !l.starts_with("WARNING: proceeding") && !l.contains(" WARN "))
                .map(|l| format!("{l}\n"))
                .collect();
            assert_eq!(fake.stderr.trim_end(), real_err.trim_end(), "{what}");
        }
    }
}
