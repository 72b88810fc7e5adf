//! Notifications the app-server sends besides a turn's items: its startup
//! notices, and what follows each model response (token usage, rate limits).
//! Shapes as measured on each MEASURED version's recordings.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::codex::profile::{self, Profile};

/// A random-looking UUID (v4 layout), for ids the real CLI draws at random.
pub fn random_uuid() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let seed = nanos ^ (u64::from(std::process::id()) << 32) ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let (a, b) = (splitmix(seed), splitmix(seed ^ 0xdead_beef));
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    )
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The startup configWarning, sent when no `bwrap` is on the PATH the
/// app-server was started with (Codex then falls back to its bundled one).
pub fn config_warning(path_var: Option<&str>) -> Option<Value> {
    let found = path_var.is_some_and(|p| std::env::split_paths(p).any(|d| d.join("bwrap").is_file()));
    (!found).then(|| json!({"summary": profile::NO_BUBBLEWRAP, "details": null}))
}

/// remoteControl/status/changed at startup: remote control is off; the
/// installation id lives in CODEX_HOME/installation_id, made on first use.
pub fn remote_control(home: &Path) -> Value {
    let file = home.join("installation_id");
    let id = match std::fs::read_to_string(&file) {
        Ok(id) if !id.trim().is_empty() => id.trim().to_string(),
        _ => {
            let id = random_uuid();
            let _ = std::fs::create_dir_all(home);
            let _ = std::fs::write(&file, &id);
            id
        }
    };
    json!({"status": "disabled", "serverName": hostname(), "installationId": id, "environmentId": null})
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "localhost".into())
}

/// thread/tokenUsage/updated after a model response of turn `turn_id`. The
/// mock model reports no usage, so every count is 0.
pub fn token_usage(thread_id: &str, turn_id: &str) -> Value {
    let counts = json!({"totalTokens": 0, "inputTokens": 0, "cachedInputTokens": 0, "cacheWriteInputTokens": 0,
                        "outputTokens": 0, "reasoningOutputTokens": 0});
    json!({"threadId": thread_id, "turnId": turn_id,
           "tokenUsage": {"total": counts, "last": counts, "modelContextWindow": profile::FALLBACK_CONTEXT_WINDOW}})
}

/// account/rateLimits/updated after a model response: the mock model sends
/// no rate-limit headers, so only the limit's id is known.
pub fn rate_limits(profile: &Profile) -> Value {
    let mut limits = json!({"limitId": "codex", "limitName": null, "primary": null, "secondary": null, "credits": null,
                            "planType": null, "rateLimitReachedType": null, "individualLimit": null, "spendControlReached": null});
    if profile.rate_limits_name_normal_model() {
        limits["normalModelSlug"] = Value::Null;
    }
    json!({"rateLimits": limits})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_have_the_uuid_layout_and_differ() {
        let (a, b) = (random_uuid(), random_uuid());
        assert_ne!(a, b);
        let lens: Vec<usize> = a.split('-').map(str::len).collect();
        assert_eq!(lens, [8, 4, 4, 4, 12], "{a}");
        assert!(a.chars().all(|c| c == '-' || c.is_ascii_hexdigit()), "{a}");
    }

    #[test]
    fn the_bubblewrap_warning_follows_path() {
        let dir = std::env::temp_dir().join(format!("fake-bwrap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(config_warning(Some(dir.to_str().unwrap())).is_some());
        std::fs::write(dir.join("bwrap"), "").unwrap();
        assert!(config_warning(Some(dir.to_str().unwrap())).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_installation_id_is_kept() {
        let home = std::env::temp_dir().join(format!("fake-home-{}", std::process::id()));
        let a = remote_control(&home);
        assert_eq!(a["installationId"], remote_control(&home)["installationId"]);
        let _ = std::fs::remove_dir_all(&home);
    }
}
