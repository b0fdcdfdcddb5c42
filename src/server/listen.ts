/**
 * Serve a Web-standard fetch handler on a port (the proxy, the visualizer, the MCP server,
 * /metrics): resolves with the URL to give people once the socket listens, rejects with the
 * listen error (port taken...).
 *
 * Connections are bounded for a local service (docs/security.md): a client that has not sent
 * its headers after HEADERS_TIMEOUT_MS, or its whole request after REQUEST_TIMEOUT_MS, is cut
 * (checked every second, not Node's 30 s: a slow-header client otherwise held its socket for
 * 90 s and more), an idle keep-alive socket closes after KEEP_ALIVE_TIMEOUT_MS, and at most
 * `maxConnections` sockets are open at once (further ones are closed at accept). Answers take
 * as long as they take: a stream may run for minutes.
 */
import { serve } from "@hono/node-server";
import type { Server } from "node:http";

export interface Listening {
  url: string;
  port: number;
  host: string;
}

/** Headers of a request, all of them, within this (a local client sends them at once). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request (headers and body) within this: 16 MiB at 300 kB/s. */
export const REQUEST_TIMEOUT_MS = 60_000;
/** An idle keep-alive socket closes after this (Node's default). */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Open sockets at most, unless the server says otherwise: above a thousand streams needs raising `ulimit -n` too. */
export const DEFAULT_MAX_CONNECTIONS = 1_024;
const CHECK_INTERVAL_MS = 1_000;

export interface ConnectionLimits {
  maxConnections?: number | undefined;
  /** For tests of the bound itself; default HEADERS_TIMEOUT_MS. */
  headersTimeoutMs?: number | undefined;
}

export function listenOn(
  fetch: (request: Request) => Response | Promise<Response>,
  port: number,
  host: string,
  limits: ConnectionLimits = {},
): Promise<{ server: Server; address: Listening }> {
  const headersTimeout = limits.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        fetch,
        port,
        hostname: host,
        serverOptions: {
          headersTimeout,
          requestTimeout: Math.max(REQUEST_TIMEOUT_MS, headersTimeout),
          keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
          connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, headersTimeout),
        },
      },
      (info) => {
        const shown = host.includes(":") ? `[${host}]` : host;
        resolve({ server: server as Server, address: { url: `http://${shown}:${info.port}`, port: info.port, host } });
      },
    ) as Server;
    server.maxConnections = limits.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    server.once("error", reject);
  });
}
