#!/usr/bin/env bash
# Re-records the real-provider runs the fidelity test compares the fakes
# with: fetches each version (cached), runs every scenario a real CLI can
# play with the reference driver, and writes normalized recordings to
# recordings/; on Claude Code's SDK versions also with the two Agent SDK
# example shims (installed by their setup.sh) into recordings/drivers/.
# Review `git diff recordings/` afterwards.
# Usage: scripts/record-real.sh                 every measured version
#        scripts/record-real.sh codex 0.171.0    one provider version
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ge 2 ]; then
  declare -A versions=(["$1"]="${*:2}")
else
  declare -A versions=([codex]="0.146.0 0.147.0 0.148.0 0.153.4 0.171.0" [claude]="2.1.266 2.1.332 2.1.334")
fi
cargo build -q -p harness --bin conformance
for provider in "${!versions[@]}"; do
  read -ra vs <<<"${versions[$provider]}"
  scripts/fetch-provider.sh "$provider" "${vs[@]}"
  args=()
  for v in "${vs[@]}"; do args+=(--version "$v"); done
  target/debug/conformance record --provider "$provider" --out recordings "${args[@]}"
done
# The Agent SDK shims, on the Claude Code versions they support.
if [ -n "${versions[claude]:-}" ]; then
  args=()
  for v in ${versions[claude]}; do [ "$v" != 2.1.266 ] && args+=(--version "$v"); done
  if [ ${#args[@]} -gt 0 ]; then
    examples/claude-agent-sdk-ts/setup.sh >/dev/null
    examples/claude-agent-sdk-py/setup.sh >/dev/null
    target/debug/conformance record --provider claude --out recordings "${args[@]}" \
      --driver-cmd "node examples/claude-agent-sdk-ts/shim.mjs" \
      --driver-cmd "target/claude-agent-sdk-py-venv/bin/python examples/claude-agent-sdk-py/shim.py"
  fi
fi
