#!/usr/bin/env node
// Driver shim around @anthropic-ai/claude-agent-sdk (the TypeScript Agent
// SDK), speaking docs/driver-protocol.md on stdin/stdout. Per-tool `approve`
// becomes an exact `allowedTools` entry (the CLI then never asks about it);
// every other gated call reaches `canUseTool`, which asks the host through
// `host/decide` (or settles it alone where the host declared it settled).
// The host's own tools (bridge) are an in-process SDK MCP server
// (`createSdkMcpServer`), each tool allowed by name; its handlers run the
// tool through `host/call_tool`.
//
// Run: (cd examples/claude-agent-sdk-ts && npm install --omit=optional)
//      target/debug/conformance run --provider claude --driver-cmd "node examples/claude-agent-sdk-ts/shim.mjs"
// The CLI is the one the harness hands over in `open` (pathToClaudeCodeExecutable),
// so the SDK's bundled binary (an optional dependency) is not needed.

import { createInterface } from "node:readline";
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

// What this shim implements through the package. Not claimed: fingerprint
// (the package has none), resume, call-scoped and HTTP servers (not
// written here yet).
// sdk-host: the host's edited input goes back as `updatedInput`, a cancel
// denies with `interrupt: true`, a permission mode set between turns is the
// next query's `permissionMode`.
// bridge: the host's tools as an in-process SDK server (mcp_message).
const CAPABILITIES = ["claude", "per-tool-approval", "host-prompts", "sdk-host", "bridge"];
// The SDK's control protocol (initialize with mcpServers, can_use_tool) is
// simulated and measured from 2.1.332 on; 2.1.266 was never run this way.
const PROVIDER_VERSIONS = { claude: ">=2.1.332" };
const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

class DriverError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

// Claude Code's rename for the model and its rules: every UTF-16 unit
// outside [A-Za-z0-9_-] becomes `_` (docs/providers.md).
const claudePart = (s) => s.replace(/[^A-Za-z0-9_-]/gu, (c) => "_".repeat(c.length));
const toolName = (server, tool) => `mcp__${claudePart(server)}__${claudePart(tool)}`;

/** Trims and checks the declarations; merges identical duplicates. */
function normalize(servers) {
  const out = new Map();
  for (const s of servers) {
    const name = s.name.trim();
    if (!NAME_RE.test(name)) throw new DriverError("invalid-name", `server name ${JSON.stringify(name)}`);
    const tools = {};
    const renamed = new Map();
    for (const [raw, mode] of Object.entries(s.tools ?? {})) {
      if (mode !== "approve" && mode !== "prompt") throw new DriverError("invalid-policy", `approval_mode ${JSON.stringify(mode)} for ${JSON.stringify(raw)}`);
      const tool = raw.trim();
      if (!tool || tool.length > 128) throw new DriverError("invalid-name", `tool name ${JSON.stringify(tool)}`);
      if (tools[tool] !== undefined && tools[tool] !== mode) throw new DriverError("duplicate-conflict", `tool ${JSON.stringify(tool)} declared twice`);
      tools[tool] = mode;
      // Two tools Claude Code renames alike are one tool to it: different
      // policies for them cannot be expressed.
      const r = claudePart(tool);
      if (renamed.has(r) && tools[renamed.get(r)] !== mode) {
        throw new DriverError("unsupported-policy", `${renamed.get(r)} and ${tool} are both ${toolName(name, tool)} to Claude Code`);
      }
      renamed.set(r, tool);
    }
    const spec = { name, transport: s.transport, tools };
    if (out.has(name) && JSON.stringify(out.get(name)) !== JSON.stringify(spec)) {
      throw new DriverError("duplicate-conflict", `server ${JSON.stringify(name)} declared twice`);
    }
    out.set(name, spec);
  }
  return out;
}

class Driver {
  constructor(host) {
    this.host = host;
    this.launch = null;
    this.servers = new Map();
    this.sessionId = null;
    this.permissionMode = null;
    this.bridge = null;
  }

  open(launch) {
    if (launch.provider !== "claude") throw new DriverError("unsupported", `provider ${launch.provider}`);
    this.servers = normalize(launch.servers);
    for (const s of this.servers.values()) {
      if (s.transport.type !== "stdio") throw new DriverError("unsupported", `${s.transport.type} servers are not implemented`);
    }
    this.bridge = null;
    if (launch.bridge) {
      const name = launch.bridge.server.trim();
      if (!NAME_RE.test(name)) throw new DriverError("invalid-name", `bridge server name ${JSON.stringify(name)}`);
      if (this.servers.has(name)) throw new DriverError("duplicate-conflict", `bridge server ${JSON.stringify(name)} is also declared`);
      this.bridge = { server: name, tools: launch.bridge.tools.map((t) => ({ name: String(t).trim(), description: "" })) };
    }
    this.launch = launch;
    this.sessionId = null;
    this.permissionMode = null;
  }

  mcpServers() {
    const out = {};
    for (const s of this.servers.values()) {
      out[s.name] = { type: "stdio", command: s.transport.command, args: s.transport.args ?? [] };
    }
    return out;
  }

  /** The exact allow entries: one per `approve` tool, nothing server-wide. */
  allowedTools() {
    const out = [];
    for (const s of this.servers.values()) {
      for (const [tool, mode] of Object.entries(s.tools)) if (mode === "approve") out.push(toolName(s.name, tool));
    }
    // The host's own tools run without a prompt, each named exactly.
    for (const t of this.bridge?.tools ?? []) out.push(toolName(this.bridge.server, t.name));
    return out;
  }

  /** The host's tools as an in-process SDK server; each call goes to the
   * host and is reported under the CLI's tool_use id. */
  bridgeServer(bridged) {
    const tools = this.bridge.tools.map((t) =>
      // A loose object: the host's arguments reach it as the model gave them.
      tool(t.name, t.description, z.looseObject({}), async (args, extra) => {
        const answer = await this.host("host/call_tool", { tool: t.name, arguments: args });
        bridged.push({ call_id: extra?._meta?.["claudecode/toolUseId"] ?? "", tool: t.name });
        return modelFacing(answer.result ?? {});
      }),
    );
    return createSdkMcpServer({ name: this.bridge.server, tools });
  }

  /** The declared server and tool behind a renamed `mcp__S__T`. */
  locate(name, mcpServer) {
    if (this.bridge && (mcpServer?.name === this.bridge.server || name.startsWith(`mcp__${claudePart(this.bridge.server)}__`))) {
      const rest = name.slice(`mcp__${claudePart(this.bridge.server)}__`.length);
      const t = this.bridge.tools.find((t) => claudePart(t.name) === rest);
      return { server: this.bridge.server, tool: t?.name ?? rest, policy: "approve" };
    }
    const server = this.servers.get(mcpServer?.name) ?? [...this.servers.values()].find((s) => name.startsWith(`mcp__${claudePart(s.name)}__`));
    if (!server) return null;
    const rest = name.slice(`mcp__${claudePart(server.name)}__`.length);
    const tool = Object.keys(server.tools).find((t) => claudePart(t) === rest) ?? rest;
    return { server: server.name, tool, policy: server.tools[tool] };
  }

  async canUseTool(name, input, options) {
    const at = this.locate(name, options.mcpServer);
    if (!at) return { behavior: "deny", message: `${name} is not a tool the host declared` };
    const settled = at.policy === "approve" || (at.policy === undefined && this.launch.global === "auto-approve");
    const decision = settled ? { answer: "accept" } : await this.host("host/decide", { prompt: { type: "tool_call", server: at.server, tool: at.tool } });
    const answer = decision.answer;
    if (answer === "accept") return { behavior: "allow", updatedInput: decision.updated_input ?? input };
    if (answer === "cancel") return { behavior: "deny", message: "The host cancelled this tool call.", interrupt: true };
    return { behavior: "deny", message: "The host declined this tool call." };
  }

  // A server's own question (a form, or a page to open) is the user's to
  // answer: it goes to the host like a prompt, whatever the tool's policy.
  async elicit(request) {
    const type = request.mode === "url" ? "url_elicitation" : "form_elicitation";
    const decision = await this.host("host/decide", { prompt: { type, server: request.serverName } });
    if (decision.answer === "accept") return { action: "accept", content: {} };
    if (decision.answer === "cancel") return { action: "cancel" };
    return { action: "decline" };
  }

  async turn(prompt) {
    if (!this.launch) throw new DriverError("not-open", "open() first");
    const env = { ...process.env, CLAUDE_CONFIG_DIR: this.launch.home };
    const bridged = [];
    const mcpServers = this.mcpServers();
    if (this.bridge) mcpServers[this.bridge.server] = this.bridgeServer(bridged);
    const options = {
      pathToClaudeCodeExecutable: this.launch.binary,
      cwd: this.launch.cwd,
      env,
      mcpServers,
      allowedTools: this.allowedTools(),
      canUseTool: (name, input, opts) => this.canUseTool(name, input, opts),
      onElicitation: (request) => this.elicit(request),
      stderr: (text) => process.stderr.write(text),
    };
    if (this.sessionId) options.resume = this.sessionId;
    if (this.permissionMode) options.permissionMode = this.permissionMode;
    const calls = [];
    const pending = new Map();
    let result = null;
    try {
      for await (const msg of query({ prompt, options })) {
        if (msg.type === "system" && msg.subtype === "init") this.sessionId = msg.session_id;
        for (const block of Array.isArray(msg.message?.content) ? msg.message.content : []) {
          if (msg.type === "assistant" && block.type === "tool_use") pending.set(block.id, this.locate(block.name, null) ?? { server: "", tool: block.name });
          if (msg.type === "user" && block.type === "tool_result") {
            const at = pending.get(block.tool_use_id) ?? { server: "", tool: "" };
            pending.delete(block.tool_use_id);
            calls.push({ call_id: block.tool_use_id, server: at.server, tool: at.tool, status: block.is_error ? "failed" : "completed" });
          }
        }
        if (msg.type === "result") result = msg;
      }
    } catch (e) {
      // The package throws after yielding an error result; a turn the host
      // stopped (deny with interrupt) ends that way on purpose.
      if (result?.terminal_reason !== "aborted_tools") {
        throw new DriverError(result ? "provider-exited" : "provider-rejected", String(e?.message ?? e).split("\n")[0]);
      }
    }
    if (!result) throw new DriverError("provider-exited", "claude ended without a result");
    return { tool_calls: calls, bridged };
  }
}

/** What the model may see of a host tool's result: only blocks meant for
 * it (no audience, or one including "assistant"), without annotations. */
function modelFacing(result) {
  const content = (Array.isArray(result.content) ? result.content : [])
    .filter((b) => !Array.isArray(b?.annotations?.audience) || b.annotations.audience.includes("assistant"))
    .map(({ annotations, ...rest }) => rest);
  return result.isError === true ? { content, isError: true } : { content };
}

// ---- the protocol loop ------------------------------------------------------

const write = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const waiting = new Map();
let nextHostId = 1;
function host(method, params) {
  const id = `h${nextHostId++}`;
  write({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}

const driver = new Driver(host);

async function handle(msg) {
  const { id, method } = msg;
  const params = msg.params ?? {};
  switch (method) {
    case "hello":
      return { name: "claude-agent-sdk-ts", capabilities: CAPABILITIES, provider_versions: PROVIDER_VERSIONS };
    case "open":
      driver.open(params.launch);
      return {};
    case "permission_mode":
      driver.permissionMode = params.mode;
      return {};
    case "turn":
      if (params.scoped?.length) throw new DriverError("unsupported", "call-scoped servers are not implemented");
      return await driver.turn(params.prompt);
    case "close":
      write({ jsonrpc: "2.0", id, result: {} });
      process.exit(0);
    default:
      return undefined;
  }
}

// Requests are handled one at a time; answers to our host/* requests are
// delivered at once, since a turn is waiting for them.
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.method === undefined) {
    waiting.get(msg.id)?.(msg.result ?? {});
    waiting.delete(msg.id);
    return;
  }
  queue = queue.then(async () => {
    try {
      const result = await handle(msg);
      if (result === undefined) write({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `unknown method ${msg.method}` } });
      else write({ jsonrpc: "2.0", id: msg.id, result });
    } catch (e) {
      const kind = e instanceof DriverError ? e.kind : "protocol-error";
      write({ jsonrpc: "2.0", id: msg.id, error: { code: 1, message: String(e?.message ?? e), data: { kind } } });
    }
  });
}).on("close", () => process.exit(0));
