#!/usr/bin/env node
// Driver shim around @openai/codex-sdk (the TypeScript Codex SDK), speaking
// docs/driver-protocol.md on stdin/stdout. The package drives
// `codex exec --experimental-json`, a process per turn, `exec resume <id>`
// for every later turn. exec has no client to ask and runs under approval
// policy `never`, so this driver is fail-closed by construction: what the
// host settled must be in the package's `config` option, which it flattens
// to `--config key=<TOML>` arguments:
//   per-tool policy  -> mcp_servers.S.tools.T.approval_mode
//   global auto-approve -> mcp_servers.S.default_tools_approval_mode = "approve"
//                       (per-tool `prompt` tables still win)
// Everything else is host code around the package, as in any driver built
// on it: validating declarations, the per-turn Codex instance for
// call-scoped servers, a new Codex (new config, new env) on resume.
//
// Run: examples/codex-sdk-ts/setup.sh   (prints the node to use)
//      target/debug/conformance run --driver-cmd "node examples/codex-sdk-ts/shim.mjs" \
//          --expected-failures examples/codex-sdk-ts/expected-failures.txt
// The CLI is the one the harness hands over in `open` (codexPathOverride),
// so the package's per-platform binary (an optional dependency) is not needed.

import { createInterface } from "node:readline";
import { Codex } from "@openai/codex-sdk";

// What this shim implements through the package. Not claimed: host-prompts
// (exec asks nobody), fingerprint (the package has none), bridge and
// gateway (exec has no client to carry them).
const CAPABILITIES = ["codex", "codex-exec", "per-tool-approval", "resume", "call-scoped-servers", "http-servers", "secret-rotation"];
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const ENV_NAME = /^[A-Za-z0-9_]+$/;

class DriverError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

// ---- declarations: the driver's job, not the package's ----------------------

/** Trimmed, checked servers by name; identical duplicates merge. */
function normalize(specs, into = new Map()) {
  const out = new Map(into);
  for (const spec of specs ?? []) {
    const name = String(spec.name).trim();
    if (!SERVER_NAME.test(name)) throw new DriverError("invalid-name", `server name ${JSON.stringify(name)}`);
    const tools = {};
    for (const [raw, mode] of Object.entries(spec.tools ?? {})) {
      // Closed and case-sensitive: anything else is refused, never passed on.
      if (mode !== "approve" && mode !== "prompt") throw new DriverError("invalid-policy", `approval_mode ${JSON.stringify(mode)} for ${JSON.stringify(raw)}`);
      const tool = raw.trim();
      if (!TOOL_NAME.test(tool)) throw new DriverError("invalid-name", `tool name ${JSON.stringify(tool)} on ${name}`);
      // The package flattens `config` to dotted keys without quoting, and
      // Codex splits `--config` keys on every dot: `tools."a.b"` would land
      // in table tools.a.b, its policy lost (under auto-approve a `prompt`
      // tool would run unasked). Refused, never silently dropped.
      if (tool.includes(".")) throw new DriverError("unsupported-policy", `tool ${JSON.stringify(tool)} on ${name}: @openai/codex-sdk cannot pass a policy for a tool name with a dot`);
      if (tools[tool] !== undefined && tools[tool] !== mode) throw new DriverError("duplicate-conflict", `tool ${JSON.stringify(tool)} on ${name} declared twice`);
      tools[tool] = mode;
    }
    const t = spec.transport ?? {};
    let transport;
    if (t.type === "stdio") {
      transport = { command: t.command, args: [...(t.args ?? [])], env: { ...(t.env ?? {}) } };
    } else if (t.type === "http") {
      const v = (t.bearer_token_env ?? "").trim() || null;
      if (v !== null && !ENV_NAME.test(v)) throw new DriverError("invalid-name", `bearer token env var ${JSON.stringify(v)}`);
      transport = { url: String(t.url).trim(), bearer_token_env_var: v };
    } else {
      throw new DriverError("unsupported", `transport ${JSON.stringify(t.type)}`);
    }
    const server = { transport, tools: sorted(tools) };
    if (out.has(name) && JSON.stringify(out.get(name)) !== JSON.stringify(server)) {
      throw new DriverError("duplicate-conflict", `server ${JSON.stringify(name)} declared twice, differently`);
    }
    out.set(name, server);
  }
  return out;
}

const sorted = (obj) => Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

function checkGlobal(policy) {
  if (policy !== "ask" && policy !== "auto-approve") throw new DriverError("invalid-policy", `global policy ${JSON.stringify(policy)}`);
  return policy;
}

/** The secret each HTTP server's token variable names, from the launch. */
function secretsFor(servers, secrets) {
  const env = {};
  for (const [name, s] of servers) {
    const v = s.transport.bearer_token_env_var;
    if (!v) continue;
    if (typeof secrets?.[v] !== "string") throw new DriverError("missing-secret", `no value for ${v} (server ${name})`);
    env[v] = secrets[v];
  }
  return env;
}

/** The package's `config` option: nested objects it flattens to dotted
 * `--config` keys. Secrets stay out; HTTP servers name their variable. */
function sdkConfig(servers, global) {
  const mcp = {};
  for (const [name, s] of servers) {
    const entry = {};
    const t = s.transport;
    if (t.command !== undefined) {
      entry.command = t.command;
      entry.args = t.args;
      if (Object.keys(t.env).length) entry.env = t.env;
    } else {
      entry.url = t.url;
      if (t.bearer_token_env_var) entry.bearer_token_env_var = t.bearer_token_env_var;
    }
    // exec asks nobody: the host's blanket approval must be config.
    if (global === "auto-approve") entry.default_tools_approval_mode = "approve";
    if (Object.keys(s.tools).length) {
      entry.tools = Object.fromEntries(Object.entries(s.tools).map(([tool, mode]) => [tool, { approval_mode: mode }]));
    }
    mcp[name] = entry;
  }
  // Codex snapshots the shell environment, bearer secrets included, into
  // CODEX_HOME; secrets must stay in the process environment only.
  return { mcp_servers: mcp, features: { shell_snapshot: false } };
}

// ---- the driver around the package ------------------------------------------

class Driver {
  constructor() {
    this.launch = null;
    this.servers = new Map();
    this.codex = null;
    this.thread = null;
  }

  configure(launch) {
    if (launch.provider !== "codex") throw new DriverError("unsupported", `provider ${launch.provider}`);
    if (launch.bridge || launch.gateway) throw new DriverError("unsupported", "codex exec has no client to bridge host tools or pause gateway calls");
    const servers = normalize(launch.servers);
    const global = checkGlobal(launch.global);
    secretsFor(servers, launch.secrets);
    this.launch = launch;
    this.servers = servers;
    this.global = global;
  }

  /** A Codex instance for `servers`: its config and environment are fixed
   * for every exec process it starts. */
  codexFor(servers) {
    const env = {
      CODEX_HOME: this.launch.home,
      // Stdio servers are started through PATH; nothing else of ours leaks in
      // (the package's `env` replaces process.env entirely).
      ...(process.env.PATH ? { PATH: process.env.PATH } : {}),
      ...secretsFor(servers, this.launch.secrets),
    };
    return new Codex({ codexPathOverride: this.launch.binary, env, config: sdkConfig(servers, this.global) });
  }

  threadOptions() {
    // Never danger-full-access (every tool would run unasked); no
    // approvalPolicy (exec ignores it, and refuses "untrusted").
    return { workingDirectory: this.launch.cwd, skipGitRepoCheck: true, sandboxMode: "read-only" };
  }

  /** The thread on `codex`: the one the earlier turns ran, or a new one. */
  threadOn(codex) {
    const id = this.thread?.id;
    return id ? codex.resumeThread(id, this.threadOptions()) : codex.startThread(this.threadOptions());
  }

  open(launch) {
    this.configure(launch);
    this.codex = this.codexFor(this.servers);
    this.thread = null;
    this.thread = this.threadOn(this.codex);
  }

  /** Changed declarations or secrets: a new Codex carries them, and the
   * next turn resumes the same thread with them. */
  resume(launch) {
    if (!this.launch) throw new DriverError("not-open", "open() first");
    this.configure(launch);
    this.codex = this.codexFor(this.servers);
    this.thread = this.threadOn(this.codex);
  }

  async turn(prompt, scoped) {
    if (!this.thread) throw new DriverError("not-open", "open() first");
    let thread = this.thread;
    if (scoped?.length) {
      // Call-scoped servers live in a Codex made for this turn only.
      const servers = normalize(scoped, this.servers);
      thread = this.threadOn(this.codexFor(servers));
    }
    const calls = [];
    let failure = null;
    let completed = false;
    try {
      const { events } = await thread.runStreamed(prompt);
      for await (const event of events) {
        if (event.type === "item.completed" && event.item.type === "mcp_tool_call") {
          const it = event.item;
          calls.push({ call_id: it.id, server: it.server, tool: it.tool, status: it.status });
        }
        if (event.type === "turn.failed") failure = event.error?.message ?? "turn failed";
        if (event.type === "turn.completed") completed = true;
      }
    } catch (e) {
      throw new DriverError("provider-exited", this.scrub(String(e?.message ?? e)));
    } finally {
      // A first turn on a scoped thread started the thread later turns resume.
      if (thread !== this.thread && !this.thread.id && thread.id) this.thread = this.codex.resumeThread(thread.id, this.threadOptions());
    }
    if (failure) throw new DriverError("provider-rejected", this.scrub(failure));
    // The package returns an empty turn from a CLI that said nothing.
    if (!completed) throw new DriverError("provider-exited", "codex exec ended without completing the turn");
    return { tool_calls: calls, bridged: [] };
  }

  /** The package quotes all of exec's stderr: no secret value leaves here. */
  scrub(text) {
    for (const v of Object.values(this.launch?.secrets ?? {})) if (v) text = text.split(v).join("[secret]");
    // Its head says the exit code, its tail why.
    return text.length > 4000 ? `${text.slice(0, 200)} ... ${text.slice(-3000)}` : text;
  }
}

// ---- the protocol loop ------------------------------------------------------

const write = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
// The harness gone: nothing left to answer.
process.stdout.on("error", () => process.exit(0));
// The package writes the prompt to exec's stdin with no 'error' listener: a
// CLI that exits before reading it (EPIPE) would kill this process. The turn
// still fails properly, with the exit code, from the package's own check.
process.on("uncaughtException", (e) => {
  if (e?.code === "EPIPE") return void process.stderr.write(`codex exec did not read its prompt: ${e.message}\n`);
  process.stderr.write(`${e?.stack ?? e}\n`);
  process.exit(1);
});
const driver = new Driver();

async function handle(msg) {
  const params = msg.params ?? {};
  switch (msg.method) {
    case "hello":
      return { name: "codex-sdk-ts", capabilities: CAPABILITIES };
    case "open":
      driver.open(params.launch);
      return {};
    case "resume":
      driver.resume(params.launch);
      return {};
    case "turn":
      return await driver.turn(params.prompt, params.scoped);
    case "close":
      write({ jsonrpc: "2.0", id: msg.id, result: {} });
      process.exit(0);
    default:
      return undefined;
  }
}

// Requests are handled one at a time, in order; nothing here asks the host.
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.method === undefined) return;
  queue = queue.then(async () => {
    try {
      const result = await handle(msg);
      if (result === undefined) write({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `unknown method ${msg.method}` } });
      else write({ jsonrpc: "2.0", id: msg.id, result });
    } catch (e) {
      const kind = e instanceof DriverError ? e.kind : "protocol-error";
      write({ jsonrpc: "2.0", id: msg.id, error: { code: 1, message: driver.scrub(String(e?.message ?? e)), data: { kind } } });
    }
  });
}).on("close", () => queue.then(() => process.exit(0)));
