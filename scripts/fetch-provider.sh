#!/usr/bin/env bash
# Fetches real provider binaries from the npm registry into the cache that
# `conformance run --real` and the recording scripts use:
#   ${XDG_CACHE_HOME:-~/.cache}/approval-conformance/{codex,claude}/VERSION/
# Usage: scripts/fetch-provider.sh codex 0.171.0 [VERSION...]
#        scripts/fetch-provider.sh claude 2.1.332 [VERSION...]
set -euo pipefail
provider=${1:?usage: fetch-provider.sh codex|claude VERSION...}
shift
cache="${XDG_CACHE_HOME:-$HOME/.cache}/approval-conformance/$provider"
mkdir -p "$cache"
for v in "$@"; do
  dest="$cache/$v"
  case "$provider" in
    codex)
      bin="$dest/package/vendor/x86_64-unknown-linux-musl/bin/codex"
      if [ ! -x "$bin" ]; then
        tmp=$(mktemp -d)
        (cd "$tmp" && npm pack --silent "@openai/codex@$v-linux-x64" >/dev/null)
        mkdir -p "$dest"
        tar xzf "$tmp"/openai-codex-*.tgz -C "$dest"
        rm -rf "$tmp"
      fi
      ;;
    claude)
      bin="$dest/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
      if [ ! -x "$bin" ]; then
        mkdir -p "$dest"
        (cd "$dest" && npm install --silent --no-audit --no-fund "@anthropic-ai/claude-code@$v" >/dev/null)
      fi
      ;;
    *) echo "unknown provider $provider (codex or claude)" >&2; exit 2 ;;
  esac
  echo "$provider $v: $("$bin" --version 2>/dev/null | head -1) at $bin"
done
