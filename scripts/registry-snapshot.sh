#!/usr/bin/env bash
# Regenerates registry/<provider>.json, the npm registry's release list that
# `conformance versions` and the version bands read offline: every stable
# release (no pre-release tag) with its publish time; Codex's per-platform
# builds (`0.171.0-linux-x64`) are folded into their release, noting whether
# the linux-x64 build the cache fetches exists. Needs npm and node.
# Usage: scripts/registry-snapshot.sh [codex|claude]...
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
for provider in "${@:-codex claude}"; do
  for p in $provider; do
    case $p in
      codex) package=@openai/codex ;;
      claude) package=@anthropic-ai/claude-code ;;
      *) echo "unknown provider $p (codex, claude)" >&2; exit 2 ;;
    esac
    npm view "$package" time --json | node -e '
      const [pkg, day] = process.argv.slice(1);
      const time = JSON.parse(require("fs").readFileSync(0, "utf8"));
      const key = (v) => v.split(".").map(Number);
      const cmp = (a, b) => { const x = key(a), y = key(b); for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i]; return 0; };
      const stable = Object.keys(time).filter((v) => /^\d+\.\d+\.\d+$/.test(v)).sort(cmp);
      const releases = stable.map((v) => ({ version: v, published: time[v], linux_x64: pkg !== "@openai/codex" || `${v}-linux-x64` in time }));
      const out = { package: pkg, source: `npm view ${pkg} time --json`, fetched: day, releases };
      process.stdout.write(JSON.stringify(out, null, 1) + "\n");
    ' "$package" "$(date -u +%Y-%m-%d)" > "$here/registry/$p.json"
    echo "registry/$p.json: $(grep -c '"version"' "$here/registry/$p.json") releases" >&2
  done
done
