/**
 * Streamable HTTP for the workflow MCP server: one endpoint (`/mcp`, POST/GET/DELETE), one MCP
 * server and transport per session (a client's cancel arrives as a POST of its own, and must
 * reach the server running the call it cancels). The shared browser guard refuses a foreign
 * Origin, and on a loopback bind a Host that is not loopback (DNS rebinding: the MCP spec's
 * "servers MUST validate the Origin header"); with an API key, every request must carry it
 * (Bearer or x-api-key, as for `forge-ts proxy`).
 */
import { randomUUID } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import { callerAuth } from "../proxy/caller-auth.js";
import { HttpError } from "../proxy-request/http-error.js";
import { browserGuard } from "../server/browser-guard.js";
import { isLoopbackHost } from "../server/is-loopback-host.js";
import { sdk } from "./sdk.js";

export { isLoopbackHost };

export const MCP_PATH = "/mcp";

export interface McpHttpAppOptions {
  /** A new MCP server, connected to each new session's transport. */
  newServer: () => McpServer;
  /** Require this key from every caller. */
  apiKey?: string;
  /** Accept only loopback Host and Origin headers (set when listening on a loopback address). */
  loopbackOnly?: boolean;
}

export interface McpHttpApp {
  fetch: (request: Request) => Promise<Response>;
  /** Open sessions. */
  readonly sessions: number;
  /** Close every session (their calls in flight are aborted). */
  close(): Promise<void>;
}

/** A JSON-RPC error as the MCP transports send it, with no request id to answer. */
function jsonRpcError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, { status, headers });
}

/**
 * @example
 * const http = mcpHttpApp({ newServer: () => workflowMcpServer(options), loopbackOnly: true });
 * await listenOn(http.fetch, 8765, "127.0.0.1");
 */
export function mcpHttpApp(options: McpHttpAppOptions): McpHttpApp {
  const sessions = new Map<string, { transport: WebStandardStreamableHTTPServerTransport; server: McpServer }>();
  const app = new Hono();
  app.onError((error) => {
    if (error instanceof HttpError) return jsonRpcError(error.status, error.message, error.status === 401 ? { "www-authenticate": "Bearer" } : {});
    return jsonRpcError(500, "Internal error");
  });
  // The MCP spec: servers MUST validate the Origin header. On a loopback bind the Host too (DNS rebinding).
  const policy = { loopbackBind: options.loopbackOnly === true };
  app.use(MCP_PATH, browserGuard(() => policy, (_c, refusal) => jsonRpcError(refusal.status, refusal.message)));
  if (options.apiKey !== undefined) app.use(MCP_PATH, callerAuth(options.apiKey));
  app.all(MCP_PATH, async (c) => {
    const id = c.req.header("mcp-session-id");
    if (id !== undefined) {
      const session = sessions.get(id);
      return session ? session.transport.handleRequest(c.req.raw) : jsonRpcError(404, "Session not found: initialize a new one");
    }
    // No session yet: only an initialize request makes one (the transport refuses anything else).
    const server = options.newServer();
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, { transport, server }),
      onsessionclosed: (sessionId) => void sessions.delete(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(c.req.raw);
    if (transport.sessionId === undefined) await server.close();
    return response;
  });
  return {
    fetch: async (request) => app.fetch(request),
    get sessions() {
      return sessions.size;
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map(({ server }) => server.close()));
    },
  };
}
