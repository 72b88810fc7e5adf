#!/usr/bin/env bash
# Runs the differential fidelity cases (300 per release, seed 21) on every
# release on either side of a threshold of the fakes' profiles that the
# agreement log does not yet have 300 cases for, logging each run in
# recordings/AGREEMENT.toml; then rewrites the README's table. Hours of
# work (4 to 9 min per release with JOBS=2, the default): stop it any time, a finished release
# stays logged. Each release's binary is fetched on demand and cached.
# Each case that disagrees is shrunk and its real recording written below
# target/divergences/: review it, then fix the fake and commit the
# recording under recordings/ as an offline fidelity trial.
# Usage: scripts/agreement-runs.sh [codex|claude]
set -euo pipefail
cd "$(dirname "$0")/.."
cases=300 seed=21 jobs=${JOBS:-2}
cargo build -q -p harness --bin conformance
conformance=target/debug/conformance
# Rows of the table still short of $cases: "| provider | release | driver | not run |" and the like.
"$conformance" agreement | awk -F'|' -v want="$cases" -v only="${1:-}" '
  NF > 8 && $4 ~ /reference/ && (only == "" || $2 ~ only) {
    gsub(/ /, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $4); split($5, c, " ");
    if ($5 ~ /not run/ || c[1] + 0 < want) print $2, $3, $4 }' |
while read -r provider version driver; do
  echo "== $provider $version ($driver)"
  "$conformance" fidelity --cases "$cases" --seed "$seed" --provider "$provider" --version "$version" --driver "$driver" \
    --tally recordings/AGREEMENT.toml --out target/divergences -j "$jobs" || true
done
"$conformance" agreement --write-readme README.md >/dev/null
