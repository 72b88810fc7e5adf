#!/usr/bin/env bash
# Adds a Codex version in one command: fetches the binary, vendors its
# app-server schema, records real runs of every scenario, then runs the
# fidelity tests against the fake. What fails there is the profile diff to
# make in fakes/src/codex/profile.rs (and the version goes into MEASURED).
# Usage: scripts/add-codex-version.sh X.Y.Z
set -euo pipefail
cd "$(dirname "$0")/.."
v=${1:?usage: add-codex-version.sh X.Y.Z}
scripts/fetch-provider.sh codex "$v"
scripts/vendor-codex-schema.sh "$v"
scripts/record-real.sh codex "$v"
if ! grep -q "Version::new($(echo "$v" | sed 's/\./, /g'))" fakes/src/codex/profile.rs; then
  echo "next: add Version::new($(echo "$v" | sed 's/\./, /g')) to MEASURED in fakes/src/codex/profile.rs"
fi
cargo test -q -p harness --test conformance -- "fidelity::codex-$v::" || {
  echo "the fake differs from real codex $v above: adjust the thresholds in fakes/src/codex/profile.rs"
  exit 1
}
