/**
 * Serve a Web-standard fetch handler on a port (the proxy, the visualizer): resolves with the
 * URL to give people once the socket listens, rejects with the listen error (port taken...).
 */
import { serve } from "@hono/node-server";
import type { Server } from "node:http";

export interface Listening {
  url: string;
  port: number;
  host: string;
}

export function listenOn(fetch: (request: Request) => Response | Promise<Response>, port: number, host: string): Promise<{ server: Server; address: Listening }> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port, hostname: host }, (info) => {
      const shown = host.includes(":") ? `[${host}]` : host;
      resolve({ server: server as Server, address: { url: `http://${shown}:${info.port}`, port: info.port, host } });
    });
    server.once("error", reject);
  });
}
