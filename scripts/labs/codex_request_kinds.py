#!/usr/bin/env python3
"""Which of Codex's other server requests the real `codex app-server` can be
made to send, and what it does where nobody may be asked. Loopback only: a
mock Responses API answers each turn's first request with one call, the
client answers each server request as told and the facts are kept.

Cases (each a fresh CODEX_HOME, sandbox read-only):
  tools            the tool names the model is offered (no apply_patch tool)
  user_input       the model calls request_user_input in Default mode
  user_input_feature
                   the same in Default mode with config.toml's
                   [features] default_mode_request_user_input = true,
                   answered; with the request's params
  permissions_feature
                   the model calls request_permissions (offered only with
                   [features] request_permissions_tool = true), answered
                   with no permissions for the turn; with the request's params
  user_input_error / user_input_malformed / user_input_extra
                   the same question answered with a JSON-RPC error, with a
                   result without answers, with answers and another field
  permissions_error / permissions_malformed
                   the permissions request answered with a JSON-RPC error,
                   with a result without permissions
  permissions_never / permissions_granular_off / permissions_granular_on
                   the same under approval policy never, and under granular
                   with request_permissions false / true, answered with
                   network granted
  user_input_plan  the same in a Plan-mode turn (turn/start's
                   collaborationMode), answered; with the request's params
                   (thread and turn ids left out)
  patch_error      exec_command `apply_patch <<'EOF' ...` (a file change),
                   answered with a JSON-RPC error
  patch_granular   the same under granular with sandbox_approval false
  command_granular exec_command with require_escalated under that granular
  command_error_resumed / command_decline_resumed / command_accept_resumed
                   the escalated command, its approval answered with an
                   error / declined / accepted, then thread/resume in the
                   same process: is the command's item history
  command_cancel   the escalated command, its approval cancelled, then a
                   second turn: what the model is shown of it then

Usage: codex_request_kinds.py CODEX_BINARY VERSION OUT.json
Regenerate recordings/labs/codex/<V>/request-kinds.json (binaries from
`conformance fetch codex V`) with
  for v in 0.146.1 0.147.0 0.149.1 0.150.0 0.171.0; do python3 scripts/labs/codex_request_kinds.py \
    ~/.cache/approval-conformance/codex/$v/package/vendor/x86_64-unknown-linux-musl/bin/codex \
    $v recordings/labs/codex/$v/request-kinds.json; done
"""
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from labfacts import write_facts

PATCH = "*** Begin Patch\n*** Add File: lab.txt\n+lab\n*** End Patch\n"
GRANULAR = {"granular": {"mcp_elicitations": True, "sandbox_approval": False, "rules": False,
                         "skill_approval": False, "request_permissions": False}}
CALLS = {
    "user_input": ("request_user_input", {"questions": [{"id": "branch", "header": "Branch", "question": "Which branch?",
                   "options": [{"label": "main (Recommended)", "description": "the default"}, {"label": "dev", "description": "the other"}]}]}),
    "patch": ("exec_command", {"cmd": "apply_patch <<'EOF'\n" + PATCH + "EOF\n"}),
    "command": ("exec_command", {"cmd": "echo lab", "sandbox_permissions": "require_escalated", "justification": "lab"}),
    "permissions": ("request_permissions", {"reason": "needs network", "permissions": {"network": {"enabled": True}}}),
}


def serve_model(call, bodies):
    class Model(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def do_GET(self):
            self.answer(b'{"models": []}', "application/json")

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            bodies.append(body)
            item = {"type": "message", "role": "assistant", "id": "m%d" % len(bodies), "content": [{"type": "output_text", "text": "done"}]}
            called = any(i.get("type") == "function_call" for i in body["input"])
            if call and body["input"][-1].get("role") == "user" and not called:
                item = {"type": "function_call", "call_id": "call_1", "name": call[0], "arguments": json.dumps(call[1])}
            usage = {"input_tokens": 0, "input_tokens_details": None, "output_tokens": 0, "output_tokens_details": None, "total_tokens": 0}
            events = [{"type": "response.created", "response": {"id": "r"}}, {"type": "response.output_item.done", "item": item},
                      {"type": "response.completed", "response": {"id": "r", "usage": usage}}]
            self.answer("".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events).encode(), "text/event-stream")

        def answer(self, body, kind):
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run(codex, call, policy, reply, turns=1, resume=False, mode=None, features=""):
    """`turns` turns, then (`resume`) thread/resume in the same process; returns
    (server requests' methods, the items' ends, what the model saw, turn status,
    the resumed history's tool items, offered tools); `mode` is the turns'
    collaboration mode (Codex's default when None); `features` lines go in
    config.toml's [features]."""
    bodies = []
    model = serve_model(call, bodies)
    with tempfile.TemporaryDirectory() as home:
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(f'model = "mock-model"\nmodel_provider = "mock"\n[model_providers.mock]\nname = "mock"\n'
                    f'base_url = "http://127.0.0.1:{model.server_address[1]}/v1"\nwire_api = "responses"\n'
                    f'env_key = "MOCK_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n')
            if features:
                f.write(f"[features]\n{features}\n")
        env = {"PATH": os.environ.get("PATH", ""), "CODEX_HOME": home, "HOME": home, "MOCK_API_KEY": "lab"}
        proc = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=home, env=env)
        inbox = queue.Queue()
        threading.Thread(target=lambda: [inbox.put(json.loads(l)) for l in proc.stdout if l.strip()] and None, daemon=True).start()
        asked, asked_params, items, ids = [], [], [], [0]

        def send(msg):
            proc.stdin.write((json.dumps(msg) + "\n").encode())
            proc.stdin.flush()

        def request(method, params):
            ids[0] += 1
            send({"jsonrpc": "2.0", "id": ids[0], "method": method, "params": params})
            return ids[0]

        def until(pred, timeout=60):
            end = time.time() + timeout
            while time.time() < end:
                try:
                    msg = inbox.get(timeout=max(0.01, end - time.time()))
                except queue.Empty:
                    return None
                if "id" in msg and "method" in msg:
                    asked.append(msg["method"])
                    # Ids, times and the temporary home vary run to run.
                    asked_params.append({k: ("<varies>" if k in ("startedAtMs", "cwd") else v)
                                         for k, v in msg.get("params", {}).items() if k not in ("threadId", "turnId")})
                    send(dict({"jsonrpc": "2.0", "id": msg["id"]}, **reply))
                elif msg.get("method") == "item/completed" and msg["params"]["item"]["type"] not in ("userMessage", "agentMessage"):
                    items.append({k: msg["params"]["item"].get(k) for k in ("type", "status")})
                if pred(msg):
                    return msg

        rid = request("initialize", {"clientInfo": {"name": "lab", "title": "lab", "version": "0"}, "capabilities": {"experimentalApi": True}})
        until(lambda m: m.get("id") == rid)
        send({"jsonrpc": "2.0", "method": "initialized"})
        rid = request("thread/start", {"cwd": home, "approvalPolicy": policy, "sandbox": "read-only"})
        thread = until(lambda m: m.get("id") == rid)["result"]["thread"]["id"]
        for _ in range(turns):
            turn = {"threadId": thread, "input": [{"type": "text", "text": "go"}]}
            if mode:
                turn["collaborationMode"] = {"mode": mode, "settings": {"model": "mock-model", "reasoning_effort": None, "developer_instructions": None}}
            request("turn/start", turn)
            done = until(lambda m: m.get("method") == "turn/completed")
        history = None
        if resume:
            rid = request("thread/resume", {"threadId": thread, "cwd": home, "approvalPolicy": policy, "sandbox": "read-only"})
            turns_seen = until(lambda m: m.get("id") == rid)["result"]["thread"].get("turns") or []
            history = [{k: i.get(k) for k in ("type", "status")} for t in turns_seen for i in t.get("items") or []
                       if i.get("type") not in ("userMessage", "agentMessage")]
        proc.kill()
        proc.wait()
    model.shutdown()
    saw = [i["output"] for b in bodies for i in b.get("input", []) if i.get("type") == "function_call_output"][:1]
    tools = [t.get("name") or t.get("type") for t in bodies[0].get("tools", [])] if bodies else []
    # Durations and output chunk ids vary run to run.
    saw = [re.sub(r"Chunk ID: [0-9a-f]+", "Chunk ID: <ID>", re.sub(r"[0-9]+\.[0-9]+(?= ?s)", "<T>", s)) for s in saw]
    facts = {"asked": asked, "items": items, "model_saw": saw[0] if saw else None,
             "turn": done and done["params"]["turn"]["status"]}
    if resume:
        facts["resumed_history"] = history
    if mode or features:
        facts["asked_params"] = asked_params
    return facts, tools


def main(codex, version, out):
    decline = {"result": {"decision": "decline"}}
    error = {"error": {"code": -32000, "message": "lab"}}
    _, tools = run(codex, None, "on-request", decline)
    facts = {"version": version, "tools": tools}
    facts["user_input"], _ = run(codex, CALLS["user_input"], "on-request", {"result": {"answers": {}}})
    facts["user_input_feature"], _ = run(codex, CALLS["user_input"], "on-request", {"result": {"answers": {"branch": {"answers": ["dev"]}}}},
                                         features="default_mode_request_user_input = true")
    facts["permissions_feature"], _ = run(codex, CALLS["permissions"], "on-request", {"result": {"permissions": {}, "scope": "turn"}},
                                          features="request_permissions_tool = true")
    ui = "default_mode_request_user_input = true"
    facts["user_input_error"], _ = run(codex, CALLS["user_input"], "on-request", error, features=ui)
    facts["user_input_malformed"], _ = run(codex, CALLS["user_input"], "on-request", {"result": {"bogus": 1}}, features=ui)
    facts["user_input_extra"], _ = run(codex, CALLS["user_input"], "on-request", {"result": {"answers": {"branch": {"answers": ["dev"]}}, "extra": 1}},
                                       features=ui)
    facts["permissions_error"], _ = run(codex, CALLS["permissions"], "on-request", error, features="request_permissions_tool = true")
    facts["permissions_malformed"], _ = run(codex, CALLS["permissions"], "on-request", {"result": {"bogus": 1}}, features="request_permissions_tool = true")
    grant = {"result": {"permissions": {"network": {"enabled": True}}, "scope": "turn"}}
    for name, policy in [("never", "never"), ("granular_off", GRANULAR), ("granular_on", {"granular": dict(GRANULAR["granular"], request_permissions=True)})]:
        facts["permissions_" + name], _ = run(codex, CALLS["permissions"], policy, grant, features="request_permissions_tool = true")
    facts["user_input_plan"], _ = run(codex, CALLS["user_input"], "on-request", {"result": {"answers": {"branch": {"answers": ["dev"]}}}}, mode="plan")
    facts["patch_error"], _ = run(codex, CALLS["patch"], "on-request", error)
    facts["patch_granular"], _ = run(codex, CALLS["patch"], GRANULAR, decline)
    facts["command_granular"], _ = run(codex, CALLS["command"], GRANULAR, decline)
    facts["command_error_resumed"], _ = run(codex, CALLS["command"], "on-request", error, resume=True)
    facts["command_decline_resumed"], _ = run(codex, CALLS["command"], "on-request", decline, resume=True)
    facts["command_accept_resumed"], _ = run(codex, CALLS["command"], "on-request", {"result": {"decision": "accept"}}, resume=True)
    facts["command_cancel"], _ = run(codex, CALLS["command"], "on-request", {"result": {"decision": "cancel"}}, turns=2)
    write_facts(out, facts)


if __name__ == "__main__":
    main(*sys.argv[1:4])
