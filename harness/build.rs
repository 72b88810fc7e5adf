//! Embeds the scenario files so the CLI runs the default suite from anywhere.

use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("&[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        out.push_str(&format!("    ({name:?}, include_str!({:?})),\n", f.canonicalize().unwrap_or(f.clone())));
    }
    out.push(']');
    let dest = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded_scenarios.rs");
    std::fs::write(dest, out).expect("write embedded scenario list");
}
