//! Embeds the scenario files so the CLI runs the default suite from anywhere,
//! and the vendored Codex app-server schemas (schemas/codex/VERSION/*.json)
//! so wire messages are checked from anywhere too.

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
    embed_codex_schemas();
}

/// `&[(version, &[(schema name, include_str!(file))])]`, versions in order.
fn embed_codex_schemas() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/codex");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut versions: Vec<_> = std::fs::read_dir(&root)
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    let key = |p: &std::path::PathBuf| -> Vec<u64> {
        let name = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
        name.split('.').map(|n| n.parse().unwrap_or(u64::MAX)).collect()
    };
    versions.sort_by_key(key);
    let mut out = String::from("&[\n");
    for dir in &versions {
        println!("cargo:rerun-if-changed={}", dir.display());
        let version = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect())
            .unwrap_or_default();
        files.sort();
        out.push_str(&format!("    ({version:?}, &[\n"));
        for f in &files {
            println!("cargo:rerun-if-changed={}", f.display());
            let name = f.file_stem().unwrap_or_default().to_string_lossy();
            out.push_str(&format!("        ({name:?}, include_str!({:?})),\n", f.canonicalize().unwrap_or(f.clone())));
        }
        out.push_str("    ]),\n");
    }
    out.push(']');
    let dest = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded_codex_schemas.rs");
    std::fs::write(dest, out).expect("write embedded schema list");
}
