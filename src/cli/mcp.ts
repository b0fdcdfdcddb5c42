/**
 * `forge-ts mcp`: serve workflows as MCP tools, over stdio (an IDE assistant starts the command)
 * or Streamable HTTP (`--http`), so a bigger agent can hand a sub-task to a local model inside
 * forge's guardrails. Each call is a durable run in the store (src/mcp-server/).
 */
import { redactionMapOf } from "../telemetry/redact-run.js";
import type { Server } from "node:http";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ContextManager } from "../context/context-manager.js";
import { InvalidArgumentError } from "../core/errors.js";
import type { Workflow } from "../core/workflow.js";
import type { WorkflowMcpServerOptions } from "../mcp-server/workflow-mcp-server.js";
import { listenOn } from "../server/listen.js";
import { BACKENDS, runClients } from "../cli-kit/backends.js";
import { positiveInt } from "../cli-kit/run-cli.js";
import { waitingLines } from "./runs-decide.js";
import { loadWorkflowModule } from "./workflow-module.js";
import { parseCliArgs } from "./parse-cli-args.js";
import { openStore, storeSpec } from "./store.js";

export const MCP_HELP = `Usage: forge-ts mcp --workflow <module> [--workflow <module>]... --backend <name> [options]

Serves each workflow as one MCP tool (named after the workflow) taking { task, sessionId?,
promptVars? }: a call runs the workflow on the task, checkpointed in the store, and returns the
terminal tool's result (a failed run is an error result; a run that needs a person returns its
pending requests). The run id is in the result's _meta ("forge-ts/runId") and text: follow it
with "forge-ts runs show <id>". A client's cancel cancels the run; progress is sent on every
state change when the client asks for it.

  --workflow <module>       a module exporting a Workflow (repeatable; see forge-ts run --help)
  --store <dir|url>         run store: a directory (default ./.forge), a libSQL URL or postgres://…  [FORGE_STORE]

Transport (default: stdio, for clients that start the command; logs go to stderr):
  --http                    serve Streamable HTTP at http://<host>:<port>/mcp instead
  --port <n>                default 8765                                               [FORGE_MCP_PORT]
  --host <addr>             default 127.0.0.1 (loopback only)                          [FORGE_MCP_HOST]
  --api-key <key>           require this key from callers (Authorization: Bearer, or x-api-key);
                            required when --host is not a loopback address          [FORGE_MCP_API_KEY]

Backend:
  --backend <name>          sim | ollama | llamaserver | llamafile | openai | anthropic [FORGE_BACKEND]
                            (sim plays the Oracle each module exports as "oracle",
                            else a schema-driven one from the workflow's tools)
  --model <name>            backend model; for sim: clean (default) | small-model | chaotic [FORGE_MODEL]
  --base-url <url>          backend URL (default per backend)                       [FORGE_BASE_URL]
  --mode <mode>             llamaserver/llamafile: native | prompt | auto           [FORGE_MODE]
  --think <bool>            thinking on/off for models that support it             [FORGE_THINK]
  --backend-api-key <key>   the backend's key, on every request (else OPENAI_API_KEY for openai,
                            ANTHROPIC_API_KEY for anthropic; none for local servers) [FORGE_BACKEND_API_KEY]
  --timeout <ms>            per backend request, default 300000                    [FORGE_TIMEOUT]
  --budget <tokens>         context budget in tokens, default 8192                  [FORGE_BUDGET]
  --max-iterations <n>      model calls per run, default 10
  --recommended-sampling    the model card's sampling values (ollama, llamaserver, llamafile;
                            an unknown model is refused)
  -h, --help

A backend that does not answer at start is a warning (calls fail until it does). Exit codes: 0
after the client disconnects (stdio) or Ctrl-C / SIGTERM, 1 the server could not start, 2 bad
flags or an unusable workflow module.`;

/** How long runs in flight get to record their cancellation when the server stops. */
const DRAIN_MS = 10_000;

type Io = { signals: NodeJS.EventEmitter; stdin: NodeJS.ReadableStream };

/** `forge-ts mcp`. Resolves to the exit code once the server stops. */
export async function mcpMain(args: readonly string[], version: string, io: Io = { signals: process, stdin: process.stdin }): Promise<number> {
  const values = parse(args);
  if (values.help) return console.log(MCP_HELP), 0;
  // On stdio, stdout is the protocol: whatever a workflow's module or tools log goes to stderr.
  if (!values.http) for (const method of ["log", "info", "debug"] as const) console[method] = console.error;
  const modules = values.workflow ?? [];
  if (modules.length === 0) throw new InvalidArgumentError("--workflow", "give at least one workflow module");
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidArgumentError("--port", `expected 0..65535, got "${values.port}"`);
  // The MCP SDK is an optional peer: without it this import fails with one line naming it (src/mcp-server/sdk.ts).
  const server = await import("../mcp-server/index.js");
  const loopback = server.isLoopbackHost(values.host);
  if (values.http && !loopback && !values["api-key"]) {
    throw new InvalidArgumentError("--api-key", `required with a non-loopback --host (${values.host}): anyone who reaches it could run your workflows`);
  }
  const budgetTokens = positiveInt("budget", values.budget, 8192);
  const maxIterations = positiveInt("max-iterations", values["max-iterations"], 10);
  if (!values.backend) throw new InvalidArgumentError("--backend", `required (${BACKENDS.join(", ")})`);
  // Absolute paths: the hints a waiting run gives are run from wherever the person's shell is.
  const loaded = await Promise.all(modules.map(async (m) => ({ path: path.resolve(m), ...(await loadWorkflowModule(m)) })));
  const workflows = loaded.map((m) => m.workflow);
  const tools = [...server.workflowToolNames(workflows).keys()].join(", ");
  const flags = { model: values.model, baseUrl: values["base-url"], mode: values.mode, think: values.think, apiKey: values["backend-api-key"], apiKeyFlag: "--backend-api-key", timeout: values.timeout, recommendedSampling: values["recommended-sampling"] };
  const { clientFor, label: backend, problem } = await runClients(values.backend, flags, loaded);
  const { store, label: storeLabel } = await openStore(storeSpec(values.store, ".forge"), { absolute: true });
  if (problem) console.error(`forge-ts mcp: warning: ${problem}; calls fail until it answers`);

  const modulePath = new Map<Workflow, string>(loaded.map((m) => [m.workflow, m.path]));
  const calls = new Set<Promise<CallToolResult>>();
  const options: WorkflowMcpServerOptions = {
    workflows,
    name: "forge-ts",
    version,
    runner: (workflow) => ({ client: clientFor(workflow), contextManager: new ContextManager({ budgetTokens }), maxIterations, store }),
    waitingLines: (workflow, runId, requests) =>
      waitingLines(runId, requests, { store: storeLabel, workflow: modulePath.get(workflow), backend: values.backend, model: values.model, "base-url": values["base-url"], mode: values.mode, think: values.think }, redactionMapOf(workflow.tools)),
    onCall: (call) => {
      calls.add(call);
      void call.finally(() => calls.delete(call));
    },
  };
  const serving = { server, options, io, calls, about: `${tools}, on ${backend}, store ${storeLabel}` };
  return values.http ? serveHttp(serving, { port, host: values.host, loopback, apiKey: values["api-key"] }) : serveStdio(serving);
}

function parse(args: readonly string[]) {
  const env = process.env;
  const str = (name: string) => (env[name] ? { default: env[name] } : {});
  return parseCliArgs({
    args: [...args],
    options: {
      workflow: { type: "string", multiple: true },
      store: { type: "string" },
      http: { type: "boolean", default: false },
      port: { type: "string", default: env.FORGE_MCP_PORT || "8765" },
      host: { type: "string", default: env.FORGE_MCP_HOST || "127.0.0.1" },
      "api-key": { type: "string", ...str("FORGE_MCP_API_KEY") },
      backend: { type: "string", ...str("FORGE_BACKEND") },
      model: { type: "string", ...str("FORGE_MODEL") },
      "base-url": { type: "string", ...str("FORGE_BASE_URL") },
      mode: { type: "string", ...str("FORGE_MODE") },
      think: { type: "string", ...str("FORGE_THINK") },
      "backend-api-key": { type: "string", ...str("FORGE_BACKEND_API_KEY") },
      timeout: { type: "string", ...str("FORGE_TIMEOUT") },
      budget: { type: "string", ...str("FORGE_BUDGET") },
      "max-iterations": { type: "string" },
      "recommended-sampling": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }).values;
}

interface Serving {
  server: typeof import("../mcp-server/index.js");
  options: WorkflowMcpServerOptions;
  io: Io;
  /** The calls in flight. */
  calls: Set<Promise<CallToolResult>>;
  /** "supplier_quote, on ollama qwen3:8b at …, store …": what is served, for the log. */
  about: string;
}

/** One MCP server on this process's stdin/stdout, until the client closes stdin (or a signal). */
async function serveStdio({ server, options, io, calls, about }: Serving): Promise<number> {
  const mcp = server.workflowMcpServer(options);
  await mcp.connect(new server.sdk.StdioServerTransport());
  console.error(`forge-ts mcp: serving ${about}, over stdio`);
  const why = await stopped(io.signals, io.stdin);
  console.error(`forge-ts mcp: ${why}, shutting down`);
  await mcp.close(); // aborts the calls in flight
  await drain(calls);
  return 0;
}

/** Streamable HTTP at <host>:<port>/mcp until Ctrl-C / SIGTERM. */
async function serveHttp({ server, options, io, calls, about }: Serving, at: { port: number; host: string; loopback: boolean; apiKey: string | undefined }): Promise<number> {
  const http = server.mcpHttpApp({ newServer: () => server.workflowMcpServer(options), loopbackOnly: at.loopback, ...(at.apiKey ? { apiKey: at.apiKey } : {}) });
  let listening: { server: Server; address: { url: string } };
  try {
    listening = await listenOn(http.fetch, at.port, at.host);
  } catch (error) {
    console.error(`forge-ts mcp: cannot listen on ${at.host}:${at.port}: ${(error as Error).message}`);
    return 1;
  }
  console.log(`forge-ts mcp listening on ${listening.address.url}${server.MCP_PATH}${at.apiKey ? "  (API key: the one given with --api-key)" : ""}`);
  console.log(`  tools: ${about}`);
  const why = await stopped(io.signals);
  console.log(`forge-ts mcp: ${why}, shutting down (calls in flight are cancelled)`);
  await http.close(); // aborts the calls in flight
  await drain(calls);
  listening.server.closeAllConnections();
  await new Promise<void>((resolve) => listening.server.close(() => resolve()));
  return 0;
}

/** Wait, for up to DRAIN_MS, for the aborted calls' runs to record their end and unlock. */
async function drain(calls: Set<Promise<CallToolResult>>): Promise<void> {
  const settled = Promise.allSettled([...calls]).then(() => true);
  const gaveUp = new Promise<false>((resolve) => setTimeout(() => resolve(false), DRAIN_MS).unref());
  if (!(await Promise.race([settled, gaveUp]))) console.error(`forge-ts mcp: runs still in flight after ${DRAIN_MS} ms; exiting (resume or retry them with forge-ts runs)`);
}

/** Resolves with why the server stops: Ctrl-C / SIGTERM, or (stdio) the client closed its end. */
function stopped(signals: NodeJS.EventEmitter, stdin?: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    signals.once("SIGINT", () => resolve("SIGINT"));
    signals.once("SIGTERM", () => resolve("SIGTERM"));
    stdin?.once("end", () => resolve("the client closed stdin"));
    stdin?.once("close", () => resolve("the client closed stdin"));
  });
}
