#!/usr/bin/env python3
"""A shim that answers hello properly, then writes a line that is not JSON."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "hello":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"name": "garbage", "capabilities": ["codex", "per-tool-approval"]}}), flush=True)
    else:
        print("this is not json {", flush=True)
