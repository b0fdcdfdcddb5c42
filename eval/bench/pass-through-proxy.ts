/**
 * The floor of the proxy bench: the least an HTTP hop can do. POST bodies (any path) go to the
 * backend unchanged over one keep-alive undici Agent and the answer is piped back; nothing is
 * parsed. What it adds to a request is what any proxy costs on this machine. GET /health
 * answers at once, so a bench can time how long a probe waits behind the hop's work.
 *
 * In process (startPassThroughProxy), or as its own process for benches that measure the hop's
 * CPU and memory: `node --import tsx eval/bench/pass-through-proxy.ts <backend url>` prints
 * `pass-through listening on <url>`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";

/** @example const floor = await startPassThroughProxy("http://127.0.0.1:8080"); await floor.close(); */
export async function startPassThroughProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/health") return void res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    if (req.method !== "POST") return void res.writeHead(404).end();
    const length = req.headers["content-length"];
    request(`${target}${req.url}`, {
      method: "POST",
      body: req,
      headers: { "content-type": req.headers["content-type"] ?? "application/json", ...(length === undefined ? {} : { "content-length": length }) },
      dispatcher: agent,
    })
      .then((upstream) => {
        const headers: Record<string, string> = {};
        for (const name of ["content-type", "content-length"]) if (typeof upstream.headers[name] === "string") headers[name] = upstream.headers[name];
        res.writeHead(upstream.statusCode, headers);
        return pipeline(upstream.body, res);
      })
      .catch(() => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const target = process.argv[2];
  if (!target) throw new Error("usage: pass-through-proxy.ts <backend url>");
  const floor = await startPassThroughProxy(target);
  console.log(`pass-through listening on ${floor.url}`);
  process.once("SIGTERM", () => void floor.close().then(() => process.exit(0)));
}
