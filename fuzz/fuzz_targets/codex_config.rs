//! config.toml and `-c key=value` overrides come from the driver under test:
//! loading them must fail cleanly, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (file, overrides) = text.split_once('\0').unwrap_or((text, ""));
    let dir = std::env::temp_dir().join(format!("fuzz-codex-config-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join("config.toml"), file);
    let overrides: Vec<String> = overrides.lines().map(String::from).collect();
    if let Ok(base) = fakes::codex::config::BaseConfig::load(&dir, &overrides) {
        let _ = base.for_thread(None);
    }
});
