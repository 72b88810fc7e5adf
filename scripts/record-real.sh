#!/usr/bin/env bash
# Re-records the real-provider transcripts the fidelity test compares the
# fakes with: fetches each Codex version (cached), runs every scenario that a
# real CLI can play with the reference driver, and writes normalized
# recordings to recordings/. Usage: scripts/record-real.sh [VERSION...]
# (default: every measured version). Review `git diff recordings/` after.
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(0.146.0 0.147.0 0.148.0 0.153.4 0.171.0)
scripts/fetch-provider.sh codex "${versions[@]}"
cargo build -q -p harness --bin conformance
args=()
for v in "${versions[@]}"; do args+=(--version "$v"); done
target/debug/conformance record --provider codex --out recordings "${args[@]}"
