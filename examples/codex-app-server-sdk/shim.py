#!/usr/bin/env python3
"""A driver shim over the PyPI package `codex-app-server-sdk` (0.4.1, see
requirements.txt): the package's own `CodexClient` launches and talks to
`codex app-server`; this file is the small driver around it and the
approval-conformance protocol on stdin/stdout (docs/driver-protocol.md).

It claims only what the package offers:
- per-tool approval: thread/start and thread/resume forward `config`, which
  carries the declared servers with each policy as
  `mcp_servers.<s>.tools.<t>.approval_mode` (and, for global `auto-approve`,
  `default_tools_approval_mode = "approve"` per server);
- resume and secret rotation: a new client (app-server) with the new
  environment, then the package's `resume_thread` with the new `config`;
  HTTP servers: the config names the bearer token's env var, and the
  package's `connect_stdio(env=...)` hands the value to the process only;
- fail-closed prompts: the client answers elicitations (tool-call approvals
  included) and permission requests with -32601 itself and declines command
  and file approvals; it has no way to bring them to a host.
Validating declarations and the fingerprint are this driver's own, as in any
driver built on the package.

Needs Python >= 3.12 and the package: `setup.sh DIR` makes a venv. Then
    conformance run --driver-cmd "DIR/bin/python examples/codex-app-server-sdk/shim.py" \
        --expected-failures examples/codex-app-server-sdk/expected-failures.txt
"""
import asyncio
import hashlib
import json
import os
import re
import sys

from codex_app_server_sdk import (CodexClient, CodexError, CodexTimeoutError,
                                  CodexTransportError, ThreadConfig)

CAPABILITIES = ["codex", "per-tool-approval", "fingerprint", "resume", "http-servers", "secret-rotation"]
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
ENV_NAME = re.compile(r"^[A-Za-z0-9_]+$")


class DriverError(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


# ---- declarations: the driver's job, not the package's -----------------------

def normalize(specs):
    """Trimmed, checked servers by name; identical duplicates merge."""
    servers = {}
    for spec in specs:
        name = spec["name"].strip()
        if not SERVER_NAME.match(name):
            raise DriverError("invalid-name", f"server name {name!r}")
        tools = {}
        for raw, mode in (spec.get("tools") or {}).items():
            if mode not in ("approve", "prompt"):  # closed and case-sensitive
                raise DriverError("invalid-policy", f"approval_mode {mode!r} for {raw!r}")
            tool = raw.strip()
            if not TOOL_NAME.match(tool):
                raise DriverError("invalid-name", f"tool name {tool!r}")
            if tools.setdefault(tool, mode) != mode:
                raise DriverError("duplicate-conflict", f"tool {tool!r} on {name} declared twice")
        t = spec["transport"]
        if t["type"] == "stdio":
            transport = {"command": t["command"], "args": list(t.get("args") or []), "env": dict(t.get("env") or {})}
        else:
            var = (t.get("bearer_token_env") or "").strip() or None
            if var is not None and not ENV_NAME.match(var):
                raise DriverError("invalid-name", f"bearer token env var {var!r}")
            transport = {"url": t["url"].strip(), "bearer_token_env_var": var}
        server = {"transport": transport, "tools": tools}
        if servers.setdefault(name, server) != server:
            raise DriverError("duplicate-conflict", f"server {name!r} declared twice")
    return servers


def check_global(policy):
    if policy not in ("ask", "auto-approve"):
        raise DriverError("invalid-policy", f"global policy {policy!r}")
    return policy


def fingerprint(servers, global_policy):
    canon = json.dumps({"global": global_policy, "servers": servers}, sort_keys=True)
    return "sdk1-" + hashlib.sha256(canon.encode()).hexdigest()[:32]


def thread_config(servers, global_policy):
    """The `config` thread/start forwards. Nested tables, not dotted keys:
    Codex splits a key on dots, and tool names may contain them."""
    mcp = {}
    for name, s in servers.items():
        entry = {k: v for k, v in s["transport"].items() if v not in (None, {})}
        if global_policy == "auto-approve":
            # Nobody accepts prompts here: the blanket approval must be config.
            entry["default_tools_approval_mode"] = "approve"
        if s["tools"]:
            entry["tools"] = {tool: {"approval_mode": mode} for tool, mode in s["tools"].items()}
        mcp[name] = entry
    # Codex snapshots the shell environment, bearer secrets included, into
    # CODEX_HOME; secrets must stay in the process environment only.
    return {"mcp_servers": mcp, "features": {"shell_snapshot": False}}


# ---- the driver around the package's client ----------------------------------

class SdkDriver:
    def __init__(self):
        self.client = None
        self.thread = None
        self.thread_id = None
        self.has_turns = False  # Codex persists a thread at its first turn
        self.running = None

    async def open(self, launch):
        self.configure(launch)
        self.thread_id, self.has_turns = None, False
        await self.ensure()

    async def resume(self, launch):
        self.configure(launch)
        await self.ensure()

    def configure(self, launch):
        if launch["provider"] != "codex":
            raise DriverError("unsupported", f"provider {launch['provider']!r}")
        if launch.get("bridge") or launch.get("gateway"):
            raise DriverError("unsupported", "the package has no bridge or gateway")
        self.servers = normalize(launch["servers"])
        self.global_policy = check_global(launch["global"])
        self.launch = launch

    def secrets(self):
        env = {}
        for name, s in self.servers.items():
            var = s["transport"].get("bearer_token_env_var")
            if var:
                if var not in self.launch["secrets"]:
                    raise DriverError("missing-secret", f"no value for {var} (server {name})")
                env[var] = self.launch["secrets"][var]
        return env

    async def ensure(self):
        secrets = self.secrets()
        wanted = (fingerprint(self.servers, self.global_policy), json.dumps(secrets, sort_keys=True))
        if self.client and wanted == self.running:
            return  # nothing changed: keep the running app-server
        await self.stop()
        home, cwd = self.launch["home"], self.launch["cwd"]
        os.makedirs(home, exist_ok=True)
        self.client = CodexClient.connect_stdio(
            command=[self.launch["binary"], "app-server"], cwd=cwd, env=dict(os.environ, CODEX_HOME=home, **secrets),
            # No user to answer: fail a user-input request at once instead
            # of after the package's default five minutes.
            user_input_response_timeout=0)
        await self.client.start()
        config = ThreadConfig(cwd=cwd, approval_policy="on-request", sandbox="read-only",
                              config=thread_config(self.servers, self.global_policy))
        if self.thread_id and self.has_turns:  # nothing to resume before a turn
            self.thread = await self.client.resume_thread(self.thread_id, overrides=config)
        else:
            self.thread = await self.client.start_thread(config)
        self.thread_id = self.thread.thread_id
        self.running = wanted  # only once a thread is open: a failed launch is retried

    async def turn(self, prompt):
        await self.ensure()
        self.has_turns = True
        calls = []
        async for step in self.thread.chat(prompt):
            if step.item_type == "mcpToolCall":
                item = step.data["item"]
                calls.append({"call_id": item["id"], "server": item["server"], "tool": item["tool"], "status": item["status"]})
        return {"tool_calls": calls, "bridged": []}

    async def stop(self):
        if self.client:
            await self.client.close()
            self.client = None


def failure(e):
    """The protocol's error kind for one of the package's exceptions."""
    if isinstance(e, DriverError):
        return e.kind, str(e)
    if isinstance(e, CodexTransportError):
        return "provider-exited", str(e)
    if isinstance(e, CodexTimeoutError):
        return "timeout", str(e)
    return "provider-rejected", str(e)


async def main():
    loop = asyncio.get_running_loop()

    def write(msg):
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    driver = SdkDriver()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        msg = json.loads(line)
        method, params, rid = msg.get("method"), msg.get("params") or {}, msg.get("id")
        try:
            if method == "hello":
                result = {"name": "codex-app-server-sdk-0.4.1", "capabilities": CAPABILITIES}
            elif method == "fingerprint":
                result = {"fingerprint": fingerprint(normalize(params["servers"]), check_global(params["global"]))}
            elif method in ("open", "resume"):
                await getattr(driver, method)(params["launch"])
                result = {}
            elif method == "turn":
                if params.get("scoped"):
                    raise DriverError("unsupported", "call-scoped servers are not implemented")
                result = await driver.turn(params["prompt"])
            elif method == "close":
                await driver.stop()
                write({"jsonrpc": "2.0", "id": rid, "result": {}})
                return
            else:
                write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"unknown method {method}"}})
                continue
            write({"jsonrpc": "2.0", "id": rid, "result": result})
        except (DriverError, CodexError) as e:
            kind, message = failure(e)
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": message, "data": {"kind": kind}}})


if __name__ == "__main__":
    asyncio.run(main())
