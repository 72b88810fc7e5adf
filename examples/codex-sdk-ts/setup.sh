#!/usr/bin/env bash
# Installs @openai/codex-sdk (pinned in package.json, locked in
# package-lock.json) into node_modules/ beside this file (ignored by git),
# without the optional per-platform Codex binary packages: the harness hands
# the shim the CLI to run (codexPathOverride), so the package never looks
# for its own binary.
# Prints the node to run shim.mjs with on stdout; progress goes to stderr.
# Exit 3 without node and npm (Node >= 18). A no-op once installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=$(command -v node) || { echo "no node on PATH" >&2; exit 3; }
command -v npm >/dev/null || { echo "no npm on PATH" >&2; exit 3; }
"$node" -e 'process.exit(Number(process.versions.node.split(".")[0]) < 18 ? 1 : 0)' || { echo "node >= 18 needed" >&2; exit 3; }
stamp=$here/node_modules/.package-lock.json
if [ -f "$stamp" ] && [ -d "$here/node_modules/@openai/codex-sdk" ] && ! [ "$here/package-lock.json" -nt "$stamp" ]; then
  echo "$node"
  exit 0
fi
echo "installing @openai/codex-sdk into $here/node_modules" >&2
(cd "$here" && npm ci --omit=optional --no-audit --no-fund --loglevel=error >&2)
echo "$node"
