#!/usr/bin/env python3
"""A shim that claims a capability the harness does not know (`teleport`):
every trial must come out as not testable, naming it."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "hello":
        result = {"name": "boastful", "capabilities": ["codex", "per-tool-approval", "fingerprint", "teleport"]}
    elif method == "fingerprint":
        result = {"fingerprint": json.dumps(msg["params"], sort_keys=True)}
    elif method == "close":
        print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}), flush=True)
        break
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no {method}"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), flush=True)
