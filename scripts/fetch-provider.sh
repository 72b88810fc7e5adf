#!/usr/bin/env bash
# Fetches real provider binaries from the npm registry into the cache that
# `conformance run --real` and the recording scripts use:
#   ${XDG_CACHE_HOME:-~/.cache}/approval-conformance/{codex,claude}/VERSION/
# (`conformance run --real` also fetches what it needs on demand.)
# Usage: scripts/fetch-provider.sh codex 0.171.0 [VERSION...]
#        scripts/fetch-provider.sh claude 2.1.332 [VERSION...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q -p harness --bin conformance -- fetch "$@"
