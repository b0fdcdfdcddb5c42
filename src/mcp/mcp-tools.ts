/**
 * `mcpTools(server, options)`: connect to an MCP server and take its tools as forge tools.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { McpServerError } from "../core/errors.js";
import type { AnyToolDef, Prerequisite } from "../core/tool.js";
import { McpConnection } from "./connection.js";
import { defaultServerName, parseServerSpec, parseToolsOptions, type McpServerSpec } from "./server-spec.js";
import { ToolCatalog, type McpToolsChange } from "./tool-catalog.js";
import { mcpResultValue } from "./tool-result.js";

export type { McpToolsChange } from "./tool-catalog.js";
export type { McpServerSpec } from "./server-spec.js";

/** One call as the server answered it, for `onResult`. */
export interface McpCallRecord {
  server: string;
  /** The tool's name in the workflow (prefixed). */
  tool: string;
  /** Its name on the server. */
  remoteTool: string;
  args: Record<string, unknown>;
  runId: string;
  idempotencyKey: string;
  /** The raw answer: every content part with its data (images, audio, resources), structuredContent, isError, _meta. */
  result: CallToolResult;
}

export interface McpToolsOptions {
  /** How errors and records name the server. Default: its command line or URL. */
  name?: string;
  /** Put before every tool name: `prefix: "fs_"` makes `read_text_file` the workflow's `fs_read_text_file`. */
  prefix?: string;
  /** Only these tools (the server's names, without the prefix). */
  allow?: string[];
  /** Never these tools (the server's names). */
  deny?: string[];
  /** Deadline in ms for one call of these tools; without it the runner's `toolTimeoutMs` applies. */
  timeoutMs?: number;
  /** Tools to call first, keyed by the server's tool name; values name workflow tools (prefixed), as in defineTool. */
  prerequisites?: Record<string, Prerequisite[]>;
  /** Deadline for the start and MCP handshake, and for each tools/list. Default 30,000 ms. */
  connectTimeoutMs?: number;
  /** Every answer with its raw parts (the model sees images and resources only as references). A throw fails the call. */
  onResult?: (record: McpCallRecord) => void;
  /** The server's tool list changed (tools/list_changed, or a restart): what changed. */
  onToolsChanged?: (change: McpToolsChange) => void;
  /** Abort to close the server (e.g. a run's signal, to tie the server to that run). */
  signal?: AbortSignal;
}

/** A connected server's tools. Close it when the runs that use it are over. */
export interface McpToolSet {
  readonly server: string;
  /** The tools at connect time by workflow name, ready to spread into a Workflow's `tools`; updated in place on list changes. */
  readonly tools: Readonly<Record<string, AnyToolDef>>;
  /** Tools the server listed since connecting that `tools` lacks (workflow names). */
  readonly added: readonly string[];
  /** Tools of `tools` the server no longer lists; their calls fail as tool errors. */
  readonly removed: readonly string[];
  /** Tools left out: a name or input schema forge-ts cannot take. */
  readonly skipped: readonly { tool: string; reason: string }[];
  /** What the server says about itself, from the handshake. */
  readonly serverInfo: { name: string; version: string } | undefined;
  readonly instructions: string | undefined;
  /** The last lines of a stdio server's stderr. */
  readonly stderrTail: string;
  /** The process id of a running stdio server (it changes when the server is started again). */
  readonly pid: number | undefined;
  /** Every tool listed now, new names included: for a Workflow built after a list change. */
  latest(): Record<string, AnyToolDef>;
  /** List the tools again now (list changes are also picked up by themselves). */
  refresh(): Promise<McpToolsChange>;
  /** Stop the server process or end the HTTP session; later calls fail with McpServerError. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/**
 * Connect to an MCP server (a command spawned over stdio, or a Streamable HTTP URL) and take
 * its tools. Throws McpServerError (naming the server, with its stderr tail) when it cannot
 * start or be reached, InvalidArgumentError for a bad option or an allow/deny name it does not list.
 *
 * @example
 * const fs = await mcpTools({ command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] }, { prefix: "fs_" });
 * try {
 *   const workflow = new Workflow({ name: "files", tools: { ...fs.tools, answer }, terminalTool: "answer" });
 *   await runner.run(workflow, "What is in README.md?");
 * } finally {
 *   await fs.close();
 * }
 */
export async function mcpTools(server: McpServerSpec, options: McpToolsOptions = {}): Promise<McpToolSet> {
  const spec = parseServerSpec(server);
  const o = parseToolsOptions(options) as McpToolsOptions;
  const name = o.name ?? defaultServerName(spec);
  if (o.signal?.aborted) throw new McpServerError(name, "was not started: its signal was already aborted");
  let catalog: ToolCatalog | undefined;
  let refresh: () => Promise<McpToolsChange> = async () => ({ server: name, added: [], removed: [], changed: [], skipped: [] });
  const connection = new McpConnection(name, spec, {
    connectTimeoutMs: o.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    onToolListChanged: () => void refresh().catch(() => undefined),
    onReconnected: () => void refresh().catch(() => undefined),
  });
  await connection.open();
  try {
    catalog = new ToolCatalog(
      {
        server: name,
        prefix: o.prefix ?? "",
        ...(o.allow ? { allow: o.allow } : {}),
        ...(o.deny ? { deny: o.deny } : {}),
        ...(o.prerequisites ? { prerequisites: o.prerequisites } : {}),
        ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
        call: async (remoteTool, tool, args, context) => {
          const result = await connection.callTool(remoteTool, args, context);
          o.onResult?.({ server: name, tool, remoteTool, args, runId: context.runId, idempotencyKey: context.idempotencyKey, result });
          return mcpResultValue(result, name, remoteTool);
        },
      },
      await connection.listTools(),
    );
  } catch (error) {
    await connection.close();
    throw error;
  }
  refresh = serialized(async () => {
    const change = { server: name, ...catalog!.apply(await connection.listTools()) };
    if (change.added.length + change.removed.length + change.changed.length + change.skipped.length > 0) o.onToolsChanged?.(change);
    return change;
  });
  const close = async () => {
    o.signal?.removeEventListener("abort", onAbort);
    await connection.close();
  };
  const onAbort = () => void close();
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) {
    await close();
    throw new McpServerError(name, "was closed: its signal was aborted while it started");
  }
  const set = catalog;
  return {
    server: name,
    tools: set.record,
    get added() {
      return set.added;
    },
    get removed() {
      return set.removed;
    },
    get skipped() {
      return set.skipped;
    },
    get serverInfo() {
      return connection.serverInfo;
    },
    get instructions() {
      return connection.instructions;
    },
    get stderrTail() {
      return connection.stderrTail;
    },
    get pid() {
      return connection.pid;
    },
    latest: () => set.latest(),
    refresh: () => refresh(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * One refresh at a time; a request while one runs queues one more (a change may have come
 * after that listing was taken), and requests while one is queued share it.
 */
function serialized<T>(work: () => Promise<T>): () => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  let queued: Promise<T> | undefined;
  return () => {
    if (queued) return queued;
    const next = tail.then(() => {
      queued = undefined;
      return work();
    });
    queued = next;
    tail = next.catch(() => undefined);
    return next;
  };
}
