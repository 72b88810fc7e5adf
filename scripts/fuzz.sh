#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 120). cargo-fuzz
# needs nightly flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain take them.
# Needs: cargo-fuzz on PATH, else it is built once into fuzz/target/tools
# (never into your cargo home), and a C++ compiler for libFuzzer.
# A crash leaves its input in fuzz/artifacts/TARGET/: turn it into a
# regression test next to the parser it broke, then fix the parser.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-120}
shift || true
tools=$PWD/target/tools
export PATH=$tools/bin:$PATH
if ! command -v cargo-fuzz >/dev/null; then
  echo "cargo-fuzz not found: building it into $tools (once)"
  cargo install --locked --root "$tools" cargo-fuzz
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(RUSTC_BOOTSTRAP=1 cargo fuzz list)
mkdir -p corpus/scenario_parse
cp ../scenarios/*.toml ../harness/tests/bad-scenarios/*.toml corpus/scenario_parse/ 2>/dev/null || true
failed=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
  echo "== $t (${seconds}s)"
  if RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" -- -max_total_time="$seconds" -rss_limit_mb=2048 >"$log" 2>&1; then
    grep -E "^Done" "$log" || true
  else
    # A crash (its input is in artifacts/) or a target that does not build.
    grep -E "ERROR|SUMMARY|panicked|^error" "$log" || tail -20 "$log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
