"""Driver shim around the Python Agent SDK, `claude-agent-sdk` 0.2.189,
speaking docs/driver-protocol.md on stdin/stdout. Per-tool `approve` becomes
an exact `allowed_tools` entry (the CLI then never asks about it); every
other gated call reaches the `can_use_tool` callback, which asks the host
through `host/decide` (or settles it alone where the host declared it settled).
The host's own tools (bridge) are an in-process SDK MCP server
(`create_sdk_mcp_server`), each tool allowed by name; its handlers run the
tool through `host/call_tool`.

Run: PY=$(bash examples/claude-agent-sdk-py/setup.sh)
     target/debug/conformance run --provider claude --driver-cmd "$PY examples/claude-agent-sdk-py/shim.py"
The CLI is the one the harness hands over in `open` (`cli_path`), never the
binary bundled in the wheel.
"""

import asyncio
import json
import re
import sys
import warnings

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKError,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from claude_agent_sdk.types import CanUseToolShadowedWarning

# The package warns that can_use_tool is skipped for allowed_tools entries:
# that is the design here (exact entries for `approve` tools only).
warnings.simplefilter("ignore", CanUseToolShadowedWarning)

# What this shim implements through the package. Not claimed: fingerprint
# (the package has none), resume, call-scoped and HTTP servers (not written
# here). bridge: the host's tools as an in-process SDK server (mcp_message).
# sdk-host: the host's edited input goes back as `updated_input`, a cancel
# denies with `interrupt=True`, a permission mode set between turns is the
# next query's `permission_mode`.
CAPABILITIES = ["claude", "per-tool-approval", "host-prompts", "sdk-host", "bridge"]
# The package's control protocol (initialize, can_use_tool) is simulated and
# measured from 2.1.332 on, the version bundled in its wheel.
PROVIDER_VERSIONS = {"claude": ">=2.1.332"}
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class DriverError(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def claude_part(s):
    """Claude Code's rename for the model and its rules: every UTF-16 unit
    outside [A-Za-z0-9_-] becomes `_` (docs/providers.md), so a character
    outside the BMP becomes two."""
    return "".join(c if re.match(r"[A-Za-z0-9_-]", c) else "_" * (2 if ord(c) > 0xFFFF else 1) for c in s)


def tool_name(server, tool):
    return f"mcp__{claude_part(server)}__{claude_part(tool)}"


def normalize(specs):
    """Trims and checks the declarations; merges identical duplicates."""
    out = {}
    for s in specs:
        name = s["name"].strip()
        if not NAME_RE.match(name):
            raise DriverError("invalid-name", f"server name {json.dumps(name)}")
        tools, renamed = {}, {}
        for raw, mode in (s.get("tools") or {}).items():
            if mode not in ("approve", "prompt"):
                raise DriverError("invalid-policy", f"approval_mode {json.dumps(mode)} for {json.dumps(raw)}")
            tool = raw.strip()
            if not tool or len(tool) > 128:
                raise DriverError("invalid-name", f"tool name {json.dumps(tool)}")
            if tools.get(tool, mode) != mode:
                raise DriverError("duplicate-conflict", f"tool {json.dumps(tool)} declared twice")
            tools[tool] = mode
            # Two tools Claude Code renames alike are one tool to it: different
            # policies for them cannot be expressed.
            r = claude_part(tool)
            if r in renamed and tools[renamed[r]] != mode:
                raise DriverError("unsupported-policy", f"{renamed[r]} and {tool} are both {tool_name(name, tool)} to Claude Code")
            renamed[r] = tool
        spec = {"name": name, "transport": s["transport"], "tools": tools}
        if name in out and out[name] != spec:
            raise DriverError("duplicate-conflict", f"server {json.dumps(name)} declared twice")
        out[name] = spec
    return out


class Driver:
    def __init__(self, ask):
        self.ask = ask  # sends a shim -> host request and awaits its result
        self.launch = None
        self.servers = {}
        self.session_id = None
        self.permission_mode = None
        self.bridge = None

    def open(self, launch):
        if launch["provider"] != "claude":
            raise DriverError("unsupported", f"provider {launch['provider']}")
        self.servers = normalize(launch["servers"])
        for s in self.servers.values():
            if s["transport"]["type"] != "stdio":
                raise DriverError("unsupported", f"{s['transport']['type']} servers are not implemented")
        self.bridge = None
        if launch.get("bridge"):
            name = launch["bridge"]["server"].strip()
            if not NAME_RE.match(name):
                raise DriverError("invalid-name", f"bridge server name {json.dumps(name)}")
            if name in self.servers:
                raise DriverError("duplicate-conflict", f"bridge server {json.dumps(name)} is also declared")
            self.bridge = {"server": name, "tools": [str(t).strip() for t in launch["bridge"]["tools"]]}
        self.launch = launch
        self.session_id = None
        self.permission_mode = None

    def mcp_servers(self):
        return {
            s["name"]: {"type": "stdio", "command": s["transport"]["command"], "args": s["transport"].get("args") or []}
            for s in self.servers.values()
        }

    def allowed_tools(self):
        """The exact allow entries: one per `approve` tool, nothing server-wide;
        the host's own tools run without a prompt, each named exactly."""
        out = [tool_name(s["name"], t) for s in self.servers.values() for t, mode in s["tools"].items() if mode == "approve"]
        return out + [tool_name(self.bridge["server"], t) for t in (self.bridge or {}).get("tools", [])]

    def bridge_server(self, ran):
        """The host's tools as an in-process SDK server. The package hands a
        handler only the arguments, so each run is kept in `ran` as (tool,
        arguments) and matched to the CLI's tool_use id after the turn."""
        def make(name):
            # Any object: the arguments reach the host as the model gave them.
            @tool(name, "", {"type": "object", "properties": {}, "additionalProperties": True})
            async def run(args):
                answer = await self.ask("host/call_tool", {"tool": name, "arguments": args})
                ran.append((name, args))
                return model_facing(answer.get("result") or {})
            return run
        return create_sdk_mcp_server(self.bridge["server"], tools=[make(t) for t in self.bridge["tools"]])

    def locate(self, name):
        """The declared server and tool behind a renamed `mcp__S__T`. The
        package hands the callback no `mcp_server` (the CLI sends one), so
        the name alone decides: a server that declares the rest as a tool
        first, else the longest server name that prefixes it."""
        if self.bridge:
            prefix = f"mcp__{claude_part(self.bridge['server'])}__"
            if name.startswith(prefix):
                rest = name[len(prefix):]
                t = next((t for t in self.bridge["tools"] if claude_part(t) == rest), rest)
                return {"server": self.bridge["server"], "tool": t, "policy": "approve"}
        found = []
        for s in self.servers.values():
            prefix = f"mcp__{claude_part(s['name'])}__"
            if name.startswith(prefix):
                rest = name[len(prefix):]
                tool = next((t for t in s["tools"] if claude_part(t) == rest), None)
                found.append((tool is not None, len(prefix), s["name"], tool or rest, s["tools"].get(tool)))
        if not found:
            return None
        _, _, server, tool, policy = max(found)
        return {"server": server, "tool": tool, "policy": policy}

    async def can_use_tool(self, name, tool_input, _context):
        at = self.locate(name)
        if at is None:
            return PermissionResultDeny(message=f"{name} is not a tool the host declared")
        settled = at["policy"] == "approve" or (at["policy"] is None and self.launch["global"] == "auto-approve")
        if settled:
            decision = {"answer": "accept"}
        else:
            prompt = {"type": "tool_call", "server": at["server"], "tool": at["tool"]}
            decision = await self.ask("host/decide", {"prompt": prompt})
        answer = decision.get("answer")
        if answer == "accept":
            return PermissionResultAllow(updated_input=decision.get("updated_input", tool_input))
        if answer == "cancel":
            self.stopped = True
            return PermissionResultDeny(message="The host cancelled this tool call.", interrupt=True)
        return PermissionResultDeny(message="The host declined this tool call.")

    async def turn(self, prompt):
        if self.launch is None:
            raise DriverError("not-open", "open() first")
        # The package merges `env` over its own environment; the secrets go
        # to the CLI (and through it to the servers) and nowhere else.
        env = {**(self.launch.get("secrets") or {}), "CLAUDE_CONFIG_DIR": self.launch["home"]}
        servers, ran, uses = self.mcp_servers(), [], []
        if self.bridge:
            servers[self.bridge["server"]] = self.bridge_server(ran)
        options = ClaudeAgentOptions(
            cli_path=self.launch["binary"],
            cwd=self.launch["cwd"],
            env=env,
            mcp_servers=servers,
            allowed_tools=self.allowed_tools(),
            can_use_tool=self.can_use_tool,
            resume=self.session_id,
            permission_mode=self.permission_mode,
            stderr=lambda text: print(text, file=sys.stderr, flush=True),
        )
        calls, pending, result = [], {}, None
        self.stopped = False
        try:
            async for msg in query(prompt=prompt, options=options):
                if isinstance(msg, SystemMessage) and msg.subtype == "init":
                    self.session_id = msg.data.get("session_id", self.session_id)
                elif isinstance(msg, AssistantMessage):
                    for block in msg.content:
                        if isinstance(block, ToolUseBlock):
                            pending[block.id] = self.locate(block.name) or {"server": "", "tool": block.name}
                            uses.append(block)
                elif isinstance(msg, UserMessage) and isinstance(msg.content, list):
                    for block in msg.content:
                        if isinstance(block, ToolResultBlock):
                            at = pending.pop(block.tool_use_id, {"server": "", "tool": ""})
                            status = "failed" if block.is_error else "completed"
                            calls.append({"call_id": block.tool_use_id, "server": at["server"], "tool": at["tool"], "status": status})
                elif isinstance(msg, ResultMessage):
                    result = msg
                    self.session_id = msg.session_id or self.session_id
        except (ClaudeSDKError, OSError) as e:
            # The package raises once the CLI exits 1 after an error result;
            # a turn the host stopped (deny with interrupt) ends that way.
            if not (self.stopped and result is not None and result.subtype == "error_during_execution"):
                kind = "provider-exited" if result else "provider-rejected"
                raise DriverError(kind, str(e).split("\n")[0]) from e
        if result is None:
            raise DriverError("provider-exited", "claude ended without a result")
        return {"tool_calls": calls, "bridged": self.bridged(ran, uses)}

    def bridged(self, ran, uses):
        """Each host tool run, under the id of the first tool_use not yet
        claimed that called it with the same arguments."""
        out, claimed = [], set()
        for name, args in ran:
            full = tool_name(self.bridge["server"], name)
            use = next((u for u in uses if u.id not in claimed and u.name == full and u.input == args), None)
            if use is not None:
                claimed.add(use.id)
            out.append({"call_id": use.id if use else "", "tool": name})
        return out


def model_facing(result):
    """What the model may see of a host tool's result: only blocks meant for
    it (no audience, or one including "assistant"), without annotations."""
    blocks = [
        {k: v for k, v in b.items() if k != "annotations"}
        for b in result.get("content") or []
        if not isinstance((b.get("annotations") or {}).get("audience"), list) or "assistant" in b["annotations"]["audience"]
    ]
    return {"content": blocks, "is_error": result.get("isError") is True}


# ---- the protocol loop -------------------------------------------------------

def write(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


async def main():
    loop = asyncio.get_running_loop()
    waiting = {}  # our host/* request ids -> futures
    ids = iter(range(1, 1 << 62))

    async def ask(method, params):
        rid = f"h{next(ids)}"
        fut = waiting[rid] = loop.create_future()
        write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            return await fut
        finally:
            waiting.pop(rid, None)

    driver = Driver(ask)
    requests = asyncio.Queue()

    async def read():
        # Answers to our host/* requests are delivered at once, since a turn
        # is waiting for them; requests are queued and handled one at a time.
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            if not line.strip():
                continue
            msg = json.loads(line)
            if "method" not in msg:
                fut = waiting.get(msg.get("id"))
                if fut and not fut.done():
                    fut.set_result(msg.get("result") or {})
            else:
                await requests.put(msg)
        await requests.put(None)

    reader = asyncio.create_task(read())
    while (msg := await requests.get()) is not None:
        method, params, rid = msg["method"], msg.get("params") or {}, msg.get("id")
        try:
            if method == "hello":
                result = {"name": "claude-agent-sdk-py", "capabilities": CAPABILITIES, "provider_versions": PROVIDER_VERSIONS}
            elif method == "open":
                driver.open(params["launch"])
                result = {}
            elif method == "permission_mode":
                driver.permission_mode = params["mode"]
                result = {}
            elif method == "turn":
                if params.get("scoped"):
                    raise DriverError("unsupported", "call-scoped servers are not implemented")
                result = await driver.turn(params["prompt"])
            elif method == "close":
                write({"jsonrpc": "2.0", "id": rid, "result": {}})
                break
            else:
                write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"unknown method {method}"}})
                continue
            write({"jsonrpc": "2.0", "id": rid, "result": result})
        except Exception as e:  # every failure is an answer, never a dead shim
            kind = e.kind if isinstance(e, DriverError) else "protocol-error"
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": str(e), "data": {"kind": kind}}})
    reader.cancel()


if __name__ == "__main__":
    asyncio.run(main())
