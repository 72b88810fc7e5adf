#!/usr/bin/env python3
"""A fail-closed Codex driver in the style of the Go driver agent-adaptor,
wrapped in the approval-conformance driver protocol (docs/driver-protocol.md).

What makes it fail-closed: it has no user to ask, so it answers every request
`codex app-server` sends it (tool-call approvals, elicitations, command, file
and permission requests, user input, anything else) with JSON-RPC error
-32601. Everything the host settles up front is projected into
CODEX_HOME/config.toml instead, where Codex applies it without asking:
- each declared tool policy as an exact `[mcp_servers.<s>.tools.<t>]
  approval_mode` table;
- global `auto-approve` as `default_tools_approval_mode = "approve"` on each
  server (a tool table still wins, so `prompt` tools stay gated and refused).
The thread runs with approvalPolicy `on-request`, never `never`: `never`
would let Codex run gated tools with nobody asked.

It does not claim `host-prompts`, so the harness judges it fail-closed.

    cargo run -p harness --bin conformance -- run --driver-cmd "python3 examples/go-style-shim/shim.py"
"""
import hashlib
import json
import os
import re
import subprocess
import sys

CAPABILITIES = ["codex", "per-tool-approval", "fingerprint", "resume", "http-servers", "secret-rotation"]
METHOD_NOT_FOUND = -32601
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
ENV_NAME = re.compile(r"^[A-Za-z0-9_]+$")
BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class AdaptorError(Exception):
    """A driver-level failure; `kind` is the protocol's data.kind."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


# ---- declarations ----------------------------------------------------------

def normalize_servers(specs):
    """Trimmed, checked servers by name; identical duplicates merge."""
    servers = {}
    for spec in specs:
        name = spec["name"].strip()
        if not SERVER_NAME.match(name):
            raise AdaptorError("invalid-name", f"server name {name!r} must be 1-64 of [A-Za-z0-9_-]")
        tools = {}
        for raw, mode in (spec.get("tools") or {}).items():
            # Closed and case-sensitive: "Approve" is a typo, not a policy.
            if mode not in ("approve", "prompt"):
                raise AdaptorError("invalid-policy", f"approval_mode {mode!r} for tool {raw!r} on {name}")
            tool = raw.strip()
            if not TOOL_NAME.match(tool):
                raise AdaptorError("invalid-name", f"tool name {tool!r} on {name} must be 1-128 of [A-Za-z0-9_.-]")
            if tools.setdefault(tool, mode) != mode:
                raise AdaptorError("duplicate-conflict", f"tool {tool!r} on {name} declared twice with different policies")
        server = {"name": name, "transport": normalize_transport(spec["transport"]), "tools": tools}
        if servers.setdefault(name, server) != server:
            raise AdaptorError("duplicate-conflict", f"server {name!r} declared twice with different settings")
    return servers


def normalize_transport(t):
    if t["type"] == "stdio":
        return {"type": "stdio", "command": t["command"], "args": list(t.get("args") or []), "env": dict(t.get("env") or {})}
    var = (t.get("bearer_token_env") or "").strip() or None
    if var is not None and not ENV_NAME.match(var):
        raise AdaptorError("invalid-name", f"bearer token env var {var!r} is not a variable name")
    return {"type": "http", "url": t["url"].strip(), "bearer_token_env": var}


def check_global(policy):
    if policy not in ("ask", "auto-approve"):
        raise AdaptorError("invalid-policy", f"global policy {policy!r}")
    return policy


def fingerprint(servers, global_policy):
    """Stable over declaration order and padding; changes with any policy."""
    canon = json.dumps({"global": global_policy, "servers": [servers[n] for n in sorted(servers)]}, sort_keys=True)
    return "go1-" + hashlib.sha256(canon.encode()).hexdigest()[:32]


# ---- projection into config.toml -------------------------------------------

def toml_string(s):
    return json.dumps(s)  # a JSON string is a valid TOML basic string


def toml_key(k):
    return k if BARE_KEY.match(k) else toml_string(k)  # dotted tool names get quoted


def render_config(servers, global_policy):
    lines = ["# Written by the go-style adaptor on every launch."]
    for name in sorted(servers):
        server, key = servers[name], toml_key(name)
        t = server["transport"]
        lines.append(f"\n[mcp_servers.{key}]")
        if t["type"] == "stdio":
            lines.append(f"command = {toml_string(t['command'])}")
            lines.append("args = [" + ", ".join(toml_string(a) for a in t["args"]) + "]")
            if t["env"]:
                lines.append("env = { " + ", ".join(f"{toml_key(k)} = {toml_string(v)}" for k, v in sorted(t["env"].items())) + " }")
        else:
            lines.append(f"url = {toml_string(t['url'])}")
            if t["bearer_token_env"]:
                lines.append(f"bearer_token_env_var = {toml_string(t['bearer_token_env'])}")  # the name, never the value
        if global_policy == "auto-approve":
            # Nobody can accept a prompt here, so the host's blanket approval
            # must reach Codex as config; tool tables below still override it.
            lines.append('default_tools_approval_mode = "approve"')
        for tool in sorted(server["tools"]):
            lines.append(f"\n[mcp_servers.{key}.tools.{toml_key(tool)}]")
            lines.append(f"approval_mode = {toml_string(server['tools'][tool])}")
    # Codex snapshots the shell environment, bearer secrets included, into
    # CODEX_HOME; secrets must stay in the process environment only.
    lines.append("\n[features]\nshell_snapshot = false")
    return "\n".join(lines) + "\n"


# ---- the app-server client -------------------------------------------------

class AppServer:
    """One `codex app-server` process over stdio JSON-RPC."""

    def __init__(self, binary, cwd, env):
        self.proc = subprocess.Popen([binary, "app-server", "--listen", "stdio://"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.next_id = 0

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def send(self, msg):
        try:
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise AdaptorError("provider-exited", f"app-server input closed: {e}")

    def start_request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method):
        self.send({"jsonrpc": "2.0", "method": method})

    def receive(self):
        """The next message that is not a server request; those are all
        rejected as they arrive, whatever they ask."""
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise AdaptorError("provider-exited", "app-server closed its output")
            msg = json.loads(line)
            if "method" in msg and "id" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"],
                           "error": {"code": METHOD_NOT_FOUND, "message": f"{msg['method']} is not handled by this client"}})
                continue
            return msg

    def call(self, method, params):
        rid = self.start_request(method, params)
        while True:
            msg = self.receive()
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise AdaptorError("provider-rejected", f"{method}: {msg['error'].get('message', '')}")
                return msg.get("result") or {}


# ---- the adaptor -----------------------------------------------------------

class Adaptor:
    def __init__(self):
        self.server = None
        self.launch = None
        self.servers = {}
        self.global_policy = "ask"
        self.thread_id = None
        self.has_turns = False  # Codex persists a thread at its first turn
        self.running = None  # (fingerprint, secrets) the process was started with

    def open(self, launch):
        self.configure(launch)
        self.thread_id, self.has_turns = None, False
        self.ensure_running()

    def resume(self, launch):
        self.configure(launch)
        self.ensure_running()

    def configure(self, launch):
        if launch["provider"] != "codex":
            raise AdaptorError("unsupported", f"provider {launch['provider']!r}: this adaptor drives codex only")
        if launch.get("bridge") or launch.get("gateway"):
            raise AdaptorError("unsupported", "bridged host tools and gateways are not implemented")
        self.servers = normalize_servers(launch["servers"])
        self.global_policy = check_global(launch["global"])
        self.launch = launch

    def secrets(self):
        env = {}
        for server in self.servers.values():
            var = server["transport"].get("bearer_token_env")
            if var:
                if var not in self.launch["secrets"]:
                    raise AdaptorError("missing-secret", f"no value for {var} (server {server['name']})")
                env[var] = self.launch["secrets"][var]
        return env

    def ensure_running(self):
        secrets = self.secrets()
        wanted = (fingerprint(self.servers, self.global_policy), json.dumps(secrets, sort_keys=True))
        if self.server and self.server.alive() and wanted == self.running:
            return  # same declarations and secrets: keep the process
        self.stop()
        home = self.launch["home"]
        os.makedirs(home, exist_ok=True)
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(render_config(self.servers, self.global_policy))
        env = dict(os.environ, CODEX_HOME=home, **secrets)
        self.server = AppServer(self.launch["binary"], self.launch["cwd"], env)
        self.server.call("initialize", {"clientInfo": {"name": "go-style-adaptor", "version": "0.1.0"}, "capabilities": {}})
        self.server.notify("initialized")
        params = {"cwd": self.launch["cwd"], "approvalPolicy": "on-request", "sandbox": "read-only"}
        if self.thread_id and self.has_turns:  # nothing to resume before a turn
            result = self.server.call("thread/resume", dict(params, threadId=self.thread_id))
        else:
            result = self.server.call("thread/start", params)
        self.thread_id = result["thread"]["id"]
        self.running = wanted  # only once a thread is open: a failed launch is retried

    def turn(self, prompt, scoped):
        if scoped:
            raise AdaptorError("unsupported", "call-scoped servers are not implemented")
        if self.launch is None:
            raise AdaptorError("not-open", "turn before open")
        self.ensure_running()
        rid = self.server.start_request("turn/start", {"threadId": self.thread_id,
                                                       "input": [{"type": "text", "text": prompt, "text_elements": []}]})
        self.has_turns = True
        calls = []
        while True:
            msg = self.server.receive()
            if msg.get("id") == rid and "error" in msg:
                raise AdaptorError("provider-rejected", f"turn/start: {msg['error'].get('message', '')}")
            method = msg.get("method")
            if method == "item/completed" and msg["params"]["item"].get("type") == "mcpToolCall":
                item = msg["params"]["item"]
                calls.append({"call_id": item["id"], "server": item["server"], "tool": item["tool"], "status": item["status"]})
            elif method == "turn/completed":
                return {"tool_calls": calls, "bridged": []}

    def stop(self):
        if self.server:
            self.server.kill()
            self.server = None


# ---- the protocol loop -----------------------------------------------------

def main():
    def write(msg):
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    adaptor = Adaptor()
    for line in sys.stdin:
        msg = json.loads(line)
        method, params, rid = msg.get("method"), msg.get("params") or {}, msg.get("id")
        try:
            if method == "hello":
                result = {"name": "go-style-adaptor", "capabilities": CAPABILITIES}
            elif method == "fingerprint":
                result = {"fingerprint": fingerprint(normalize_servers(params["servers"]), check_global(params["global"]))}
            elif method == "open":
                adaptor.open(params["launch"])
                result = {}
            elif method == "resume":
                adaptor.resume(params["launch"])
                result = {}
            elif method == "turn":
                result = adaptor.turn(params["prompt"], params.get("scoped"))
            elif method == "close":
                adaptor.stop()
                write({"jsonrpc": "2.0", "id": rid, "result": {}})
                return
            else:
                write({"jsonrpc": "2.0", "id": rid, "error": {"code": METHOD_NOT_FOUND, "message": f"unknown method {method}"}})
                continue
            write({"jsonrpc": "2.0", "id": rid, "result": result})
        except AdaptorError as e:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": str(e), "data": {"kind": e.kind}}})


if __name__ == "__main__":
    main()
