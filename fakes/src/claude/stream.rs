//! What stream-json messages carry besides the conversation itself: the
//! session facts in init, the timestamps and tool display names of assistant
//! and user messages, and the result's timings, usage and feature flags, per
//! version as measured. The fake calls no model API, so its timings are 0
//! and its token counts are those of its scripted replies.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::profile::{Profile, FAST_MODE_DISABLED_REASON};

/// The token usage of one scripted model reply, as a model API reports it.
pub fn message_usage() -> Value {
    json!({"input_tokens": REPLY_INPUT_TOKENS, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": REPLY_OUTPUT_TOKENS})
}

const REPLY_INPUT_TOKENS: u64 = 10;
const REPLY_OUTPUT_TOKENS: u64 = 5;
/// List prices per token (USD), for `costUSD`.
const INPUT_PRICE: f64 = 5e-6;
const OUTPUT_PRICE: f64 = 25e-6;
/// The context window and output limit init's model gets.
const CONTEXT_WINDOW: u64 = 1_000_000;
const SMALL_CONTEXT_WINDOW: u64 = 200_000;
const MAX_OUTPUT_TOKENS: u64 = 128_000;

/// The model id the API is asked for: a `[1m]` suffix only selects the
/// 1M-token context window, so assistant messages name the model without it.
pub fn api_model(model: &str) -> &str {
    model.strip_suffix("[1m]").unwrap_or(model)
}

/// Where the session runs, for init's paths.
pub struct Place<'a> {
    pub cwd: &'a Path,
    /// `<config dir>/projects/<cwd, each character but a letter or digit as ->`.
    pub project_dir: &'a Path,
}

/// The session facts init reports besides tools, servers and model.
pub fn init_fields(profile: &Profile, place: &Place) -> Map<String, Value> {
    let mut f = Map::new();
    f.insert("agents".into(), json!(super::profile::AGENTS));
    f.insert("skills".into(), json!(profile.skills()));
    f.insert("slash_commands".into(), json!(profile.slash_commands()));
    f.insert("terminal_slash_commands".into(), json!(profile.terminal_slash_commands()));
    f.insert("capabilities".into(), json!(profile.capabilities()));
    // The measured runs: no telemetry, no feedback surveys, fast mode off.
    f.insert("analytics_disabled".into(), json!(true));
    f.insert("product_feedback_disabled".into(), json!(true));
    f.insert("fast_mode_disabled_reason".into(), json!(FAST_MODE_DISABLED_REASON));
    f.insert("fast_mode_state".into(), json!("off"));
    let memory = format!("{}/memory/", place.project_dir.display());
    f.insert("memory_paths".into(), json!({"auto": memory}));
    f.insert("messaging_socket_path".into(), json!(format!("/tmp/cc-socks/{}.sock", std::process::id())));
    let plugins: Vec<Value> =
        profile.builtin_plugins().iter().map(|p| json!({"name": p, "path": "builtin", "source": format!("{p}@builtin")})).collect();
    f.insert("plugins".into(), json!(plugins));
    for field in profile.init_session_fields() {
        let value = match field {
            "additional_directories" => json!([]),
            "original_cwd" => json!(place.cwd.display().to_string()),
            "per_turn_effort_active" => json!(true),
            "view_mode" => json!("default"),
            // The model API is not Anthropic's own (a base URL is given);
            // sandbox_enabled and the ultrathink fields are off.
            _ => json!(false),
        };
        f.insert(field.into(), value);
    }
    if profile.stamps_written_at() {
        f.insert("written_at".into(), json!(timestamp()));
    }
    f
}

/// One `tool_use_meta` entry: how the UI names an MCP tool call. `tool` is
/// the server's tools/list entry, `server_info` its initialize serverInfo.
pub fn tool_use_meta(profile: &Profile, id: &str, tool_name: &str, tool: Option<&Value>, server_info: &Value) -> Value {
    let title = tool.and_then(|t| t.get("title").or_else(|| t.pointer("/annotations/title"))).and_then(Value::as_str);
    let display = title.map(String::from).unwrap_or_else(|| display_name(tool_name));
    let server = server_info.get("title").or_else(|| server_info.get("name")).and_then(Value::as_str).unwrap_or("");
    let mut meta = json!({"id": id, "display_name": display, "server_display_name": server});
    if profile.tool_use_meta_names_tool() {
        meta["tool_name"] = json!(tool_name);
    }
    meta
}

/// `read_file` -> `Read File`; `notes.append` -> `Notes Append` (measured
/// on 2.1.332).
pub(super) fn display_name(tool: &str) -> String {
    let words = tool.split(['_', '-', ' ', '.']).filter(|w| !w.is_empty());
    let capitalized = words.map(|w| {
        let mut c = w.chars();
        c.next().map(|f| f.to_uppercase().chain(c).collect::<String>()).unwrap_or_default()
    });
    capitalized.collect::<Vec<_>>().join(" ")
}

/// The result's fields after `api_calls` scripted model replies with
/// `model` (as init names it).
pub fn result_fields(profile: &Profile, model: &str, api_calls: usize) -> Map<String, Value> {
    let input = REPLY_INPUT_TOKENS * api_calls as u64;
    let output = REPLY_OUTPUT_TOKENS * api_calls as u64;
    let cost = input as f64 * INPUT_PRICE + output as f64 * OUTPUT_PRICE;
    let mut f = Map::new();
    f.insert("api_error_status".into(), Value::Null);
    f.insert("fast_mode_disabled_reason".into(), json!(FAST_MODE_DISABLED_REASON));
    f.insert("fast_mode_state".into(), json!("off"));
    f.insert("queued_turn_count".into(), json!(0));
    // No model API is called: every model latency is 0.
    for t in ["duration_api_ms", "first_content_frame_ms", "time_to_request_ms", "ttft_ms", "ttft_stream_ms"] {
        f.insert(t.into(), json!(0));
    }
    f.insert("total_cost_usd".into(), json!(cost));
    f.insert("usage".into(), result_usage(profile, input, output));
    f.insert("subagent_stats".into(), subagent_stats());
    let by_model = json!({ model: model_usage(profile, model, input, output, cost) });
    f.insert("modelUsage".into(), by_model.clone());
    if profile.result_has_since_last() {
        // One result per process: everything so far is since the last one.
        f.insert("model_usage_since_last_result".into(), by_model);
    }
    if profile.result_has_index() {
        f.insert("result_index".into(), json!(0));
    }
    if profile.result_counts_safety_stops() {
        f.insert("safety_stops".into(), json!(0));
    }
    if profile.stamps_written_at() {
        f.insert("written_at".into(), json!(timestamp()));
    }
    f
}

/// The session's token usage, as the result sums it up.
pub fn result_usage(profile: &Profile, input: u64, output: u64) -> Value {
    let mut usage = json!({
        "input_tokens": input, "output_tokens": output, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "output_tokens_details": {"thinking_tokens": 0}, "inference_geo": "", "iterations": [],
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard", "speed": "standard",
    });
    if profile.usage_has_fallback_credit() {
        usage["fallback_credit"] = Value::Null;
    }
    usage
}

fn model_usage(profile: &Profile, model: &str, input: u64, output: u64, cost: f64) -> Value {
    // Before 2.1.285 (whose default model has no `[1m]` suffix) only the
    // `[1m]` model name gets the 1M window (a resumed session's plain name
    // has 200k, measured on 2.1.266..2.1.269).
    let window = if !profile.version.at_least(2, 1, 285) && !model.ends_with("[1m]") { SMALL_CONTEXT_WINDOW } else { CONTEXT_WINDOW };
    let mut usage = json!({
        "inputTokens": input, "outputTokens": output, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0,
        "thinkingTokens": 0, "webSearchRequests": 0, "costUSD": cost, "contextWindow": window,
        "maxOutputTokens": MAX_OUTPUT_TOKENS, "canonicalModel": api_model(model), "costBasis": "list", "provider": "firstParty",
    });
    if profile.splits_cache_creation() {
        usage["cacheCreationEphemeral1hInputTokens"] = json!(0);
        usage["cacheCreationEphemeral5mInputTokens"] = json!(0);
    }
    usage
}

/// No subagents run in a scripted turn.
fn subagent_stats() -> Value {
    json!({
        "by_type": {}, "completed": 0, "failed": 0, "killed": {"parent": 0, "system": 0, "user": 0}, "max_depth": 0,
        "refused": {"budget": 0, "concurrency_limit": 0, "depth_limit": 0}, "requested": {"background": 0, "foreground": 0, "unset": 0},
        "spawned": 0, "spawned_by_subagents": 0, "started_in_background": 0,
    })
}

/// Now as `2026-12-03T12:55:09.190Z`, the form of a message's `timestamp`.
pub fn timestamp() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format_timestamp(now.as_millis() as u64)
}

fn format_timestamp(millis: u64) -> String {
    let (days, ms) = (millis / 86_400_000, millis % 86_400_000);
    let (y, m, d) = civil_from_days(days as i64);
    let s = ms / 1000;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z", s / 3600, s / 60 % 60, s % 60, ms % 1000)
}

/// Days since 1970-01-01 -> (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::profile::MEASURED;

    #[test]
    fn timestamps_are_iso_utc() {
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_timestamp(1_796_302_509_190), "2026-12-03T12:55:09.190Z");
        assert_eq!(format_timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn display_names_and_models() {
        assert_eq!(display_name("read_file"), "Read File");
        assert_eq!(display_name("ship"), "Ship");
        assert_eq!(display_name("notes.append"), "Notes Append");
        assert_eq!(api_model("claude-opus-5[1m]"), "claude-opus-5");
        assert_eq!(api_model("claude-opus-5-5"), "claude-opus-5-5");
        let new = Profile { version: MEASURED[2] };
        let titled = tool_use_meta(&new, "t1", "ship", Some(&json!({"name": "ship", "title": "Deploy it"})), &json!({"name": "srv"}));
        assert_eq!(titled, json!({"id": "t1", "display_name": "Deploy it", "server_display_name": "srv", "tool_name": "ship"}));
    }

    #[test]
    fn per_version_fields() {
        let (old, new) = (Profile { version: MEASURED[0] }, Profile { version: MEASURED[2] });
        let place = Place { cwd: Path::new("/w"), project_dir: Path::new("/h/projects/-w") };
        assert_eq!(init_fields(&old, &place)["memory_paths"], json!({"auto": "/h/projects/-w/memory/"}));
        assert!(!init_fields(&old, &place).contains_key("original_cwd"));
        assert_eq!(init_fields(&new, &place)["original_cwd"], json!("/w"));
        let (r_old, r_new) = (result_fields(&old, "claude-opus-5[1m]", 3), result_fields(&new, "claude-opus-5-5", 3));
        assert_eq!(r_old["modelUsage"]["claude-opus-5[1m]"]["canonicalModel"], json!("claude-opus-5"));
        assert_eq!(r_old["usage"]["input_tokens"], json!(30));
        assert!(!r_old.contains_key("result_index") && r_new.contains_key("model_usage_since_last_result"));
        assert!(r_new["modelUsage"]["claude-opus-5-5"].get("cacheCreationEphemeral1hInputTokens").is_some());
    }
}
