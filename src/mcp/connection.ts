/**
 * One MCP server connection (the SDK's Client over stdio or Streamable HTTP) with the lifecycle
 * forge-ts promises: start failures and crashes become McpServerError naming the server with
 * its stderr tail; a server that went away is started again at the next call, once per run
 * (keyed by the call's runId); every call carries the run's signal, so an abort or a tool
 * deadline sends MCP's cancellation notification; `close()` ends the process or session.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { optionalPackages } from "../core/optional-package.js";
import { describeError, McpServerError, McpToolError } from "../core/errors.js";
import { MAX_TIMER_MS } from "../core/tool.js";
import { isStdio, type McpHttpServer, type McpStdioServer } from "./server-spec.js";
import { StderrTail } from "./stderr-tail.js";

// The MCP SDK is an optional peer: without it, importing `forge-ts/mcp` fails here, with one line naming it.
const sdk = await optionalPackages("forge-ts/mcp", ["@modelcontextprotocol/sdk"], async () => {
  const [client, stdio, http, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return { ...client, ...stdio, ...http, ...types };
});

/** What a call needs from the run: its signal (abort, deadline) and its id (the restart budget). */
export interface McpCallContext {
  signal: AbortSignal;
  runId: string;
}

export interface McpConnectionOptions {
  connectTimeoutMs: number;
  /** The server said its tool list changed (notifications/tools/list_changed). */
  onToolListChanged?: () => void;
  /** A restart connected again: the tool list may differ from before. */
  onReconnected?: () => void;
}

interface Live {
  client: Client;
  transport: StdioClientTransport | StreamableHTTPClientTransport;
}

const CLIENT_INFO = { name: "forge-ts", version: "0.1.0" };
/** Restarts a server gets per run after it went away. */
const RESTARTS_PER_RUN = 1;

/**
 * @example
 * const connection = new McpConnection("fs", { command: "node", args: ["fs-server.js", "."] }, { connectTimeoutMs: 30_000 });
 * await connection.open();
 * const result = await connection.callTool("read_text_file", { path: "README.md" }, { signal, runId });
 */
export class McpConnection {
  readonly #stderr = new StderrTail();
  readonly #restarts = new Map<string, number>();
  #live: Live | undefined;
  #opening: Promise<Live> | undefined;
  /** Why the last connection ended, for the next error. */
  #lost = "is not connected";
  #closed = false;

  constructor(
    readonly name: string,
    readonly spec: McpStdioServer | McpHttpServer,
    readonly options: McpConnectionOptions,
  ) {}

  /** The last lines the server wrote to stderr (stdio servers). */
  get stderrTail(): string {
    return this.#stderr.text();
  }

  /** The server process's id while a stdio server runs. */
  get pid(): number | undefined {
    const transport = this.#live?.transport;
    return transport instanceof sdk.StdioClientTransport ? (transport.pid ?? undefined) : undefined;
  }

  get serverInfo(): { name: string; version: string } | undefined {
    const v = this.#live?.client.getServerVersion();
    return v ? { name: v.name, version: v.version } : undefined;
  }

  get instructions(): string | undefined {
    return this.#live?.client.getInstructions();
  }

  /** Start (or reach) the server and finish the MCP handshake. */
  async open(): Promise<void> {
    await this.#connect();
  }

  /** Every tool the server lists, page by page. */
  async listTools(): Promise<Tool[]> {
    const live = this.#live ?? (await this.#opening);
    if (!live) throw new McpServerError(this.name, this.#lost, this.stderrTail);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await live.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.options.connectTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * Call a tool. The SDK's own 60 s request timeout is lifted: the deadline is the tool's
   * (`timeoutMs`, the runner's `toolTimeoutMs`), which reaches here as an aborted signal.
   */
  async callTool(tool: string, args: Record<string, unknown>, context: McpCallContext): Promise<CallToolResult> {
    const live = await this.#clientFor(context.runId);
    // A signal of our own per call: the SDK never removes its abort listener from the one it gets.
    const controller = new AbortController();
    const follow = () => controller.abort(context.signal.reason);
    if (context.signal.aborted) follow();
    else context.signal.addEventListener("abort", follow, { once: true });
    try {
      return (await live.client.callTool({ name: tool, arguments: args }, undefined, { signal: controller.signal, timeout: MAX_TIMER_MS })) as CallToolResult;
    } catch (error) {
      if (context.signal.aborted) throw abortReason(context.signal);
      if (!isConnectionLoss(error)) throw new McpToolError(this.name, tool, errorMessage(error), undefined, { cause: error });
      await this.#drop(live, `lost its connection during "${tool}" (${errorMessage(error)})`);
      await tick(); // the last stderr chunks of a crashed process arrive just after its exit
      const again = (this.#restarts.get(context.runId) ?? 0) < RESTARTS_PER_RUN && !this.#closed;
      const next = again ? "; the next call starts it again" : "; it is not started again in this run";
      throw new McpServerError(this.name, `${this.#lost}${next}`, this.stderrTail, { cause: error });
    } finally {
      context.signal.removeEventListener("abort", follow);
    }
  }

  /** End the process (stdio) or the session (HTTP). Idempotent; later calls fail with McpServerError. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#lost = "was closed (its tool set's close() was called)";
    const live = this.#live ?? (await this.#opening?.catch(() => undefined));
    if (live) await this.#drop(live, this.#lost);
  }

  /** The live client, or a restart of the server when this run still has one left. */
  async #clientFor(runId: string): Promise<Live> {
    if (this.#closed) throw new McpServerError(this.name, this.#lost);
    if (this.#live) return this.#live;
    if (!this.#opening) {
      const used = this.#restarts.get(runId) ?? 0;
      if (used >= RESTARTS_PER_RUN) {
        throw new McpServerError(this.name, `${this.#lost}; it was already started again once in run ${runId}`, this.stderrTail);
      }
      this.#restarts.set(runId, used + 1);
      const reconnected = this.#connect();
      void reconnected.then(() => this.options.onReconnected?.(), () => undefined);
      return reconnected;
    }
    return this.#opening;
  }

  #connect(): Promise<Live> {
    const opening = this.#open().finally(() => {
      if (this.#opening === opening) this.#opening = undefined;
    });
    this.#opening = opening;
    return opening;
  }

  async #open(): Promise<Live> {
    const client = new sdk.Client(CLIENT_INFO, { capabilities: {}, debouncedNotificationMethods: ["notifications/tools/list_changed"] });
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => this.options.onToolListChanged?.());
    const transport = this.#transport();
    const live: Live = { client, transport };
    client.onclose = () => {
      if (this.#live !== live) return;
      this.#live = undefined;
      this.#lost = isStdio(this.spec) ? "exited" : "closed the connection";
    };
    try {
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      await tick();
      throw new McpServerError(this.name, this.#startFailure(error), this.stderrTail, { cause: error });
    }
    if (this.#closed) {
      await client.close().catch(() => undefined);
      throw new McpServerError(this.name, this.#lost);
    }
    this.#live = live;
    return live;
  }

  #transport(): StdioClientTransport | StreamableHTTPClientTransport {
    const spec = this.spec;
    if (!isStdio(spec)) {
      const url = new URL(spec.url);
      return new sdk.StreamableHTTPClientTransport(url, spec.headers ? { requestInit: { headers: spec.headers } } : undefined);
    }
    const transport = new sdk.StdioClientTransport({
      command: spec.command,
      ...(spec.args ? { args: spec.args } : {}),
      // The SDK replaces the environment with `env` when given; servers still need PATH and HOME.
      env: { ...sdk.getDefaultEnvironment(), ...spec.env },
      ...(spec.cwd ? { cwd: spec.cwd } : {}),
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer | string) => this.#stderr.push(String(chunk)));
    return transport;
  }

  #startFailure(error: unknown): string {
    const what = isStdio(this.spec) ? `could not be started (${[this.spec.command, ...(this.spec.args ?? [])].join(" ")})` : `could not be reached at ${String(this.spec.url)}`;
    if (error instanceof sdk.McpError && error.code === sdk.ErrorCode.RequestTimeout) {
      return `${what}: no answer to the MCP handshake within ${this.options.connectTimeoutMs} ms`;
    }
    if (error instanceof sdk.McpError && error.code === sdk.ErrorCode.ConnectionClosed) return `${what}: it exited during the MCP handshake`;
    return `${what}: ${errorMessage(error)}`;
  }

  async #drop(live: Live, reason: string): Promise<void> {
    if (this.#live === live) this.#live = undefined;
    this.#lost = reason;
    if (live.transport instanceof sdk.StreamableHTTPClientTransport && live.transport.sessionId !== undefined) {
      // Best effort: a server that is gone cannot end its session, and must not hold up close().
      await Promise.race([live.transport.terminateSession().catch(() => undefined), delay(2_000)]);
    }
    await live.client.close().catch(() => undefined);
  }
}

/**
 * Whether the connection itself failed (the process exited, the HTTP endpoint is unreachable
 * or forgot the session), as opposed to the server answering the call with an error.
 */
function isConnectionLoss(error: unknown): boolean {
  if (error instanceof sdk.McpError) return error.code === sdk.ErrorCode.ConnectionClosed;
  // A malformed answer (the SDK's schema check) came from a server that is still there.
  if (typeof error === "object" && error !== null && Array.isArray((error as { issues?: unknown }).issues)) return false;
  return true;
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`the call was aborted: ${String(reason)}`);
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error && cause.message && !error.message.includes(cause.message) ? `${error.message}: ${cause.message}` : error.message;
  }
  return describeError(error);
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
