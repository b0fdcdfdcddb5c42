/**
 * A tiny HTTP endpoint for a process that has no server of its own (a queue worker, a script
 * driving WorkflowRunners): `GET /metrics` answers the metric set's Prometheus text, anything
 * else 404. With `bearerToken`, a scrape must send `Authorization: Bearer <token>` (Prometheus:
 * `authorization: { credentials: … }`); without it, bind it where only the scraper reaches.
 */
import { timingSafeEqual } from "node:crypto";
import type { Server } from "node:http";
import { InvalidArgumentError } from "../core/errors.js";
import { listenOn } from "../server/listen.js";
import { metricsResponse, type ForgeMetrics } from "./metrics.js";

export interface ServeMetricsOptions {
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1 (this host only); 0.0.0.0 for a scraper on another host. */
  host?: string;
  /** Required from scrapers as `Authorization: Bearer <token>` when set. */
  bearerToken?: string;
}

export interface MetricsEndpoint {
  /** e.g. http://127.0.0.1:9464 (the metrics are at `${url}/metrics`). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * @example
 * const metrics = createForgeMetrics();
 * const endpoint = await serveMetrics(metrics, { port: 9464 });
 * startRunWorker({ ..., metrics, runner: () => ({ client, contextManager, metrics }) });
 */
export async function serveMetrics(metrics: ForgeMetrics, options: ServeMetricsOptions): Promise<MetricsEndpoint> {
  const { port, host = "127.0.0.1", bearerToken } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidArgumentError("port", `expected an integer in 0..65535, got ${String(port)}`);
  if (bearerToken !== undefined && (typeof bearerToken !== "string" || bearerToken === "")) throw new InvalidArgumentError("bearerToken", "must be a non-empty string");
  const expected = bearerToken === undefined ? undefined : Buffer.from(`Bearer ${bearerToken}`);
  const handler = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    if (request.method !== "GET" || path !== "/metrics") return new Response("Not found: GET /metrics\n", { status: 404 });
    if (expected !== undefined) {
      const given = Buffer.from(request.headers.get("authorization") ?? "");
      // Constant-time: the token is a credential.
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return new Response("Unauthorized\n", { status: 401, headers: { "www-authenticate": "Bearer" } });
      }
    }
    return metricsResponse(metrics);
  };
  const { server, address } = await listenOn(handler, port, host);
  return { url: address.url, port: address.port, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // A scraper's keep-alive socket must not hold the process open.
    server.closeAllConnections();
  });
}
