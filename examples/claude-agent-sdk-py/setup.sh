#!/usr/bin/env bash
# Makes a venv with requirements.txt (claude-agent-sdk 0.2.189 needs Python
# >= 3.10) in DIR, by default target/claude-agent-sdk-py-venv (ignored by git),
# and prints the venv's python on stdout; progress goes to stderr.
# The wheel bundles a Claude Code binary (~200 MB) that the shim never runs:
# the harness hands it the CLI in `open`.
# The Python: python3.13 .. python3.10 / python3 on PATH, else one under pyenv,
# else `pyenv install 3.12` if pyenv is there. Exit 3 if none can be had.
# Does nothing but print when the venv already holds requirements.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../../target/claude-agent-sdk-py-venv}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
reqs=$here/requirements.txt

new_enough() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1; }

find_python() {
  local c p root
  for c in python3.13 python3.12 python3.11 python3.10 python3; do
    if p=$(command -v "$c") && new_enough "$p"; then echo "$p"; return; fi
  done
  root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
  for p in "$root"/versions/3.1[0-9]*/bin/python3; do
    if new_enough "$p"; then echo "$p"; return; fi
  done
  return 1
}

pyenv_bin() { command -v pyenv || ls "${PYENV_ROOT:-$HOME/.pyenv}/bin/pyenv" 2>/dev/null; }

if [ -x "$dir/bin/python" ] && cmp -s "$reqs" "$dir/.requirements.txt"; then
  echo "$dir/bin/python"
  exit 0
fi
if ! python=$(find_python); then
  if pyenv=$(pyenv_bin); then
    echo "no Python >= 3.10 found; installing 3.12 with pyenv" >&2
    "$pyenv" install --skip-existing 3.12 >&2 || true
  fi
  python=$(find_python) || { echo "no Python >= 3.10 (PATH or pyenv)" >&2; exit 3; }
fi
echo "making $dir with $python" >&2
"$python" -m venv --clear "$dir" >&2
"$dir/bin/python" -m pip install --quiet --disable-pip-version-check -r "$reqs" >&2
cp "$reqs" "$dir/.requirements.txt"  # the stamp that makes the next run a no-op
echo "$dir/bin/python"
