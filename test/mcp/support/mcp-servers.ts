/**
 * The MCP servers the tests talk to: the official reference servers spawned over stdio with
 * this node and their package's bin file (no npx, no network), and a Streamable HTTP server
 * built with the SDK's McpServer on a loopback port.
 */
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

const require = createRequire(import.meta.url);

/** The bin file of an installed package (its package.json `bin`). */
export function binOf(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = require(manifest) as { bin: string | Record<string, string> };
  const rel = typeof bin === "string" ? bin : Object.values(bin)[0]!;
  return path.join(path.dirname(manifest), rel);
}

export const EVERYTHING_BIN = binOf("@modelcontextprotocol/server-everything");
export const FILESYSTEM_BIN = binOf("@modelcontextprotocol/server-filesystem");

/** @modelcontextprotocol/server-everything over stdio. */
export const everything = () => ({ command: process.execPath, args: [EVERYTHING_BIN, "stdio"] });
/** @modelcontextprotocol/server-filesystem over stdio, allowed `dirs`. */
export const filesystem = (...dirs: string[]) => ({ command: process.execPath, args: [FILESYSTEM_BIN, ...dirs] });

export interface HttpMcp {
  /** e.g. http://127.0.0.1:40123/mcp */
  url: string;
  /** One McpServer per client session, in the order they connected. */
  servers: McpServer[];
  /** Headers of every request, in order. */
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** A stateful Streamable HTTP MCP server on port 0; `setup` registers the tools of each session's McpServer. */
export async function startHttpMcpServer(setup: (server: McpServer) => void): Promise<HttpMcp> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const http = createServer(async (req, res) => {
    headers.push(req.headers);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const body: unknown = text ? JSON.parse(text) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport && req.method === "POST" && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      const server = new McpServer({ name: "test-http", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
      setup(server);
      servers.push(server);
      await server.connect(created);
      transport = created;
    }
    if (!transport) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    servers,
    headers,
    close: async () => {
      await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A ToolExecuteContext for calling a tool's execute directly. */
export function callContext(runId = "run-1", signal: AbortSignal = new AbortController().signal) {
  return { signal, runId, idempotencyKey: `${runId}:0:0`, iteration: 0, callIndex: 0 };
}
