#!/usr/bin/env python3
"""Example driver shim: a small Codex driver in Python, wrapped in the
approval-conformance driver protocol (docs/driver-protocol.md).

Copy this file to test your own driver: keep the protocol loop at the bottom
and replace `CodexDriver` with calls into your real driver code.

Run it against the suite:
    cargo run -p harness --bin conformance -- run --driver-cmd "python3 examples/python-shim/shim.py"
"""
import hashlib
import json
import os
import re
import subprocess
import sys

CAPABILITIES = ["codex", "per-tool-approval", "host-prompts", "fingerprint", "resume", "http-servers", "secret-rotation"]
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOOL_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class DriverError(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


# ---- the driver: declarations -----------------------------------------------

def normalize(servers):
    """Trim and check names; merge identical duplicates; refuse conflicts."""
    out = {}
    for s in servers:
        name = s["name"].strip()
        if not NAME_RE.match(name):
            raise DriverError("invalid-name", f"server name {name!r}")
        tools = {}
        for tool, mode in s.get("tools", {}).items():
            if mode not in ("prompt", "approve"):  # closed and case-sensitive
                raise DriverError("invalid-policy", f"approval_mode {mode!r} for {tool!r}")
            t = tool.strip()
            if not TOOL_RE.match(t):
                raise DriverError("invalid-name", f"tool name {t!r}")
            if tools.get(t, mode) != mode:
                raise DriverError("duplicate-conflict", f"tool {t!r} declared twice")
            tools[t] = mode
        spec = {"name": name, "transport": s["transport"], "tools": tools}
        if name in out and out[name] != spec:
            raise DriverError("duplicate-conflict", f"server {name!r} declared twice")
        out[name] = spec
    return out


def fingerprint(servers, global_policy):
    canon = json.dumps({"global": global_policy, "servers": [servers[k] for k in sorted(servers)]}, sort_keys=True)
    return "py1-" + hashlib.sha256(canon.encode()).hexdigest()[:32]


def toml_str(s):
    return json.dumps(s)  # a JSON string is a valid TOML basic string


def key(k):
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else toml_str(k)


def config_toml(servers):
    lines = []
    for name in sorted(servers):
        s = servers[name]
        t = s["transport"]
        lines.append(f"[mcp_servers.{key(name)}]")
        if t["type"] == "stdio":
            lines.append(f"command = {toml_str(t['command'])}")
            lines.append("args = [" + ", ".join(toml_str(a) for a in t.get("args", [])) + "]")
        else:
            lines.append(f"url = {toml_str(t['url'])}")
            if t.get("bearer_token_env"):
                lines.append(f"bearer_token_env_var = {toml_str(t['bearer_token_env'])}")
        for tool in sorted(s["tools"]):
            lines.append(f"[mcp_servers.{key(name)}.tools.{key(tool)}]")
            lines.append(f"approval_mode = {toml_str(s['tools'][tool])}")
    return "\n".join(lines) + "\n"


# ---- the driver: talking to codex app-server ----------------------------------

class CodexDriver:
    def __init__(self, host):
        self.host = host  # asks the harness (the user) for decisions
        self.proc = None
        self.thread_id = None
        self.has_turns = False  # Codex persists a thread at its first turn
        self.running_key = None
        self.next_id = 0

    def open(self, launch):
        self.launch = launch
        self.servers = normalize(launch["servers"])
        self.thread_id = None
        self.has_turns = False
        self.ensure()

    def resume(self, launch):
        self.launch = launch
        self.servers = normalize(launch["servers"])
        self.ensure()

    def secrets(self):
        env = {}
        for s in self.servers.values():
            var = s["transport"].get("bearer_token_env")
            if var:
                if var not in self.launch["secrets"]:
                    raise DriverError("missing-secret", f"no value for {var}")
                env[var] = self.launch["secrets"][var]
        return env

    def ensure(self):
        secrets = self.secrets()
        running_key = (fingerprint(self.servers, self.launch["global"]), json.dumps(secrets, sort_keys=True))
        if self.proc and self.proc.poll() is None and running_key == self.running_key:
            return  # nothing changed: keep the running app-server
        self.stop()
        home = self.launch["home"]
        os.makedirs(home, exist_ok=True)
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(config_toml(self.servers))  # names the token's env var, never its value
        env = dict(os.environ, CODEX_HOME=home, **secrets)
        self.proc = subprocess.Popen([self.launch["binary"], "app-server", "--listen", "stdio://"], cwd=self.launch["cwd"],
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.running_key = running_key
        self.request("initialize", {"clientInfo": {"name": "python-example-driver", "version": "0.1"}, "capabilities": {}})
        self.send({"jsonrpc": "2.0", "method": "initialized"})
        params = {"cwd": self.launch["cwd"], "approvalPolicy": "on-request", "sandbox": "read-only"}  # never "never"
        resume = self.thread_id and self.has_turns  # nothing to resume before a turn
        if resume:
            params["threadId"] = self.thread_id
        result = self.request("thread/resume" if resume else "thread/start", params)
        self.thread_id = result["thread"]["id"]

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise DriverError("provider-exited", "app-server closed its output")
        return json.loads(line)

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self.read()
            if "method" in msg and "id" in msg:  # nothing may ask before a turn
                self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32600, "message": "unsolicited"}})
            elif msg.get("id") == rid:
                if "error" in msg:
                    raise DriverError("provider-rejected", msg["error"].get("message", ""))
                return msg["result"]

    def turn(self, prompt):
        self.ensure()
        rid = self.next_id = self.next_id + 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": "turn/start",
                   "params": {"threadId": self.thread_id, "input": [{"type": "text", "text": prompt, "text_elements": []}]}})
        self.has_turns = True
        calls = []
        while True:
            msg = self.read()
            if "method" in msg and "id" in msg:
                result, error = self.answer(msg["method"], msg.get("params") or {})
                reply = {"jsonrpc": "2.0", "id": msg["id"]}
                reply.update({"error": error} if error else {"result": result})
                self.send(reply)
            elif msg.get("method") == "item/completed" and msg["params"]["item"].get("type") == "mcpToolCall":
                item = msg["params"]["item"]
                calls.append({"call_id": item["id"], "server": item["server"], "tool": item["tool"], "status": item["status"]})
            elif msg.get("method") == "turn/completed":
                return {"tool_calls": calls, "bridged": []}

    def answer(self, method, params):
        """(result, error) for one server request."""
        if params.get("threadId") not in (None, self.thread_id):
            return None, {"code": -32600, "message": "not my thread"}
        if method == "mcpServer/elicitation/request":
            meta = params.get("_meta") or {}
            server = params.get("serverName", "")
            if meta.get("codex_approval_kind") == "mcp_tool_call":
                tool = meta.get("tool_name") or re.search(r'run tool "([^"]*)"', params.get("message", "")).group(1)
                if server not in self.servers:
                    return {"action": "decline"}, None
                policy = self.servers[server]["tools"].get(tool)
                if policy == "approve" or (policy is None and self.launch["global"] == "auto-approve"):
                    decision = "accept"
                else:
                    decision = self.host("host/decide", {"prompt": {"type": "tool_call", "server": server, "tool": tool}})["answer"]
            else:
                kind = "url_elicitation" if params.get("mode") == "url" else "form_elicitation"
                decision = self.host("host/decide", {"prompt": {"type": kind, "server": server}})["answer"]
            return ({"action": "accept", "content": {}} if decision == "accept" else {"action": decision}), None
        if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
            kind = "command" if "command" in method else "file_change"
            return {"decision": self.host("host/decide", {"prompt": {"type": kind}})["answer"]}, None
        if method == "item/permissions/requestApproval":
            ok = self.host("host/decide", {"prompt": {"type": "permissions"}})["answer"] == "accept"
            return {"permissions": params.get("permissions", {}) if ok else {}, "scope": "turn"}, None
        if method == "item/tool/requestUserInput":
            return {"answers": {}}, None
        return None, {"code": -32601, "message": f"unsupported server request {method}"}


# ---- the protocol loop: keep this part when adapting the shim ----------------

def main():
    out = sys.stdout
    host_ids = iter(range(1, 1 << 62))

    def write(msg):
        out.write(json.dumps(msg) + "\n")
        out.flush()

    def host(method, params):
        """Asks the harness something during a turn and waits for its answer."""
        hid = f"h{next(host_ids)}"
        write({"jsonrpc": "2.0", "id": hid, "method": method, "params": params})
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("id") == hid:
                return msg.get("result") or {}
        raise SystemExit(0)

    driver = CodexDriver(host)
    for line in sys.stdin:
        msg = json.loads(line)
        method, params, rid = msg.get("method"), msg.get("params") or {}, msg.get("id")
        try:
            if method == "hello":
                result = {"name": "python-example", "capabilities": CAPABILITIES}
            elif method == "fingerprint":
                result = {"fingerprint": fingerprint(normalize(params["servers"]), params["global"])}
            elif method == "open":
                driver.open(params["launch"])
                result = {}
            elif method == "resume":
                driver.resume(params["launch"])
                result = {}
            elif method == "turn":
                if params.get("scoped"):
                    raise DriverError("unsupported", "call-scoped servers are not implemented")
                result = driver.turn(params["prompt"])
            elif method == "close":
                driver.stop()
                write({"jsonrpc": "2.0", "id": rid, "result": {}})
                return
            else:
                write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"unknown method {method}"}})
                continue
            write({"jsonrpc": "2.0", "id": rid, "result": result})
        except DriverError as e:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": str(e), "data": {"kind": e.kind}}})


if __name__ == "__main__":
    main()
