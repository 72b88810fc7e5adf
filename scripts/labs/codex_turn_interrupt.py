#!/usr/bin/env python3
"""What real `codex app-server` does with a turn/interrupt while an MCP tool
call runs: does the MCP server hear of it (`notifications/cancelled`), and
how does the turn end. Loopback only: a mock Responses API asks for one call
of `lab.slow` (approved per tool, so no prompt), the stdio MCP server (this
same file with --mcp) holds the call for up to 10 s, and the client sends
turn/interrupt once the call's item has started.

Usage: codex_turn_interrupt.py CODEX_BINARY VERSION OUT.json
Writes the normalized facts (methods in order, no ids or times) to OUT.json.
Regenerate recordings/labs/codex/<V>/turn-interrupt.json (binaries from
`conformance fetch codex V`) with
  for v in 0.146.1 0.164.0 0.165.0 0.166.0 0.167.2 0.171.0; do python3 scripts/labs/codex_turn_interrupt.py \
    ~/.cache/approval-conformance/codex/$v/package/vendor/x86_64-unknown-linux-musl/bin/codex \
    $v recordings/labs/codex/$v/turn-interrupt.json; done
"""
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from labfacts import write_facts


def mcp_server(log_path):
    """Stdio MCP server: logs each message it reads; `slow` answers after 10 s
    or at once when its request is cancelled."""
    lock = threading.Lock()
    cancelled = threading.Event()

    def log(entry):
        with lock, open(log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(msg_id, result):
        with lock:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
            sys.stdout.flush()

    def slow(msg_id):
        answered_early = cancelled.wait(10)
        log({"answered": "after-cancel" if answered_early else "after-10s"})
        reply(msg_id, {"content": [{"type": "text", "text": "slow done"}]})

    for line in sys.stdin:
        msg = json.loads(line)
        log({"read": msg.get("method", "response"), "params": msg.get("params", {}) if msg.get("method") == "notifications/cancelled" else None})
        method = msg.get("method")
        if method == "initialize":
            reply(msg["id"], {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "lab", "version": "1"}})
        elif method == "tools/list":
            tool = {"name": "slow", "description": "waits", "inputSchema": {"type": "object", "properties": {}}}
            reply(msg["id"], {"tools": [tool]})
        elif method == "tools/call":
            threading.Thread(target=slow, args=(msg["id"],), daemon=True).start()
        elif method == "notifications/cancelled":
            cancelled.set()
        elif "id" in msg and method:
            reply(msg["id"], {})
    log({"read": "eof"})


class Model(BaseHTTPRequestHandler):
    """Responses API: the first request gets one call of mcp__lab__slow (named
    as the request's tools name it), later ones a final message."""
    protocol_version = "HTTP/1.1"
    requests = 0

    def log_message(self, *_):
        pass

    def do_GET(self):
        self.answer(200, b'{"models": []}', "application/json")

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        Model.requests += 1
        item = {"type": "message", "role": "assistant", "id": "msg_%d" % Model.requests, "content": [{"type": "output_text", "text": "done"}]}
        if Model.requests == 1:
            item = {"type": "function_call", "call_id": "call_1", "name": "mcp__lab__slow", "arguments": "{}"}
            for tool in body.get("tools", []):
                if tool.get("type") == "namespace" and any(t.get("name") == "slow" for t in tool.get("tools", [])):
                    item.update(name="slow", namespace=tool["name"])
        events = [{"type": "response.created", "response": {"id": "r"}}, {"type": "response.output_item.done", "item": item},
                  {"type": "response.completed", "response": {"id": "r", "usage": {"input_tokens": 0, "input_tokens_details": None, "output_tokens": 0, "output_tokens_details": None, "total_tokens": 0}}}]
        self.answer(200, "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events).encode(), "text/event-stream")

    def answer(self, code, body, kind):
        self.send_response(code)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)


def main(codex, version, out):
    model = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as run:
        mcp_log = os.path.join(run, "mcp.jsonl")
        with open(os.path.join(run, "config.toml"), "w") as f:
            f.write(f'''model = "mock-model"
model_provider = "mock"
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{model.server_address[1]}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
[mcp_servers.lab]
command = {json.dumps(sys.executable)}
args = [{json.dumps(os.path.abspath(__file__))}, "--mcp", {json.dumps(mcp_log)}]
[mcp_servers.lab.tools.slow]
approval_mode = "approve"
''')
        env = {"PATH": os.environ.get("PATH", ""), "CODEX_HOME": run, "MOCK_API_KEY": "lab", "HOME": run}
        proc = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=run, env=env)
        inbox = queue.Queue()
        threading.Thread(target=lambda: [inbox.put(json.loads(l)) for l in proc.stdout if l.strip()] and None, daemon=True).start()
        sent = [0]

        def request(method, params):
            sent[0] += 1
            proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": sent[0], "method": method, "params": params}) + "\n").encode())
            proc.stdin.flush()
            return sent[0]

        seen = []

        def until(pred, timeout=30):
            end = time.time() + timeout
            while time.time() < end:
                try:
                    msg = inbox.get(timeout=max(0.01, end - time.time()))
                except queue.Empty:
                    break
                if "method" in msg:
                    item = msg.get("params", {}).get("item", {})
                    seen.append(msg["method"] + (" " + item["type"] if item.get("type") == "mcpToolCall" else ""))
                if pred(msg):
                    return msg
            return None

        rid = request("initialize", {"clientInfo": {"name": "lab", "title": "lab", "version": "0"}, "capabilities": {}})
        until(lambda m: m.get("id") == rid)
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"initialized"}\n')
        rid = request("thread/start", {"cwd": run, "approvalPolicy": "on-request", "sandbox": "read-only"})
        thread = until(lambda m: m.get("id") == rid)["result"]["thread"]["id"]
        rid = request("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "call slow"}]})
        turn = until(lambda m: m.get("id") == rid)["result"]["turn"]["id"]
        started = until(lambda m: m.get("method") == "item/started" and m["params"]["item"].get("type") == "mcpToolCall")
        time.sleep(0.5)
        rid = request("turn/interrupt", {"threadId": thread, "turnId": turn})
        reply = until(lambda m: m.get("id") == rid)
        done = until(lambda m: m.get("method") == "turn/completed")
        item = until(lambda m: m.get("method") == "item/completed" and m["params"]["item"].get("type") == "mcpToolCall", timeout=12)
        time.sleep(1)
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        with open(mcp_log) as f:
            server = [json.loads(l) for l in f]
    facts = {
        "version": version,
        "call_started": started is not None,
        "interrupt_reply": reply and reply.get("result", reply.get("error")),
        "turn_status": done and done["params"]["turn"]["status"],
        "call_item_completed": item and {k: item["params"]["item"].get(k) for k in ("status", "error")},
        "mcp_server_read": [e.get("read") or "answered " + e["answered"] for e in server],
        "cancelled_params": [e["params"] for e in server if e.get("read") == "notifications/cancelled"],
        "client_notifications": [m for m in seen if not m.startswith(("codex/event", "account/", "mcpServer/startupStatus", "thread/tokenUsage"))],
    }
    write_facts(out, facts)


if __name__ == "__main__":
    if sys.argv[1] == "--mcp":
        mcp_server(sys.argv[2])
    else:
        main(*sys.argv[1:4])
