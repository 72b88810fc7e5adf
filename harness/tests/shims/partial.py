#!/usr/bin/env python3
"""A shim that says hello and computes fingerprints, but implements nothing
else: every scenario that needs more must come out as not testable. Extra
arguments are claimed as capabilities too (`partial.py teleport`: one the
harness does not know)."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "hello":
        result = {"name": "partial", "capabilities": ["codex", "per-tool-approval", "fingerprint", *sys.argv[1:]]}
    elif method == "fingerprint":
        result = {"fingerprint": json.dumps(msg["params"], sort_keys=True)}
    elif method == "close":
        print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}), flush=True)
        break
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no {method}"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), flush=True)
