#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 120). cargo-fuzz
# needs nightly flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain take them.
# A crash leaves its input in fuzz/artifacts/TARGET/: turn it into a
# regression test next to the parser it broke, then fix the parser.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-120}
shift || true
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(RUSTC_BOOTSTRAP=1 cargo fuzz list)
mkdir -p corpus/scenario_parse
cp ../scenarios/*.toml ../harness/tests/bad-scenarios/*.toml corpus/scenario_parse/ 2>/dev/null || true
for t in "${targets[@]}"; do
  echo "== $t (${seconds}s)"
  RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" -- -max_total_time="$seconds" -rss_limit_mb=2048 2>&1 | grep -E "^Done|ERROR|SUMMARY|panicked" || true
done
