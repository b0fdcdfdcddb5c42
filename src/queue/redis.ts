/**
 * Redis connection options for BullMQ from a `redis://[user:password@]host[:port][/db]` URL
 * (`rediss://` for TLS). BullMQ's workers block on Redis, so commands never give up while the
 * server is away (`maxRetriesPerRequest: null`): a restarted Redis is reconnected to, not an error.
 */
import { Worker, type Processor, type RedisOptions } from "bullmq";
import { Redis } from "ioredis";
import { InvalidArgumentError, ServerError } from "../core/errors.js";

export function redisOptions(url: string): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError("redis", `expected a redis:// URL (e.g. redis://127.0.0.1:6379), got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw new InvalidArgumentError("redis", `expected redis:// or rediss://, got ${parsed.protocol}`);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new InvalidArgumentError("redis", `the database in ${url} must be a number`);
  return {
    host: parsed.hostname || "127.0.0.1",
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    db,
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
    // Back off to one attempt a second while Redis is down.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
  };
}

/**
 * A BullMQ job id from a key that may hold ":" (BullMQ refuses it in custom ids): "%" and ":"
 * are percent-encoded, so distinct keys stay distinct and the id reads back with decodeURIComponent.
 */
export function jobIdOf(key: string): string {
  return key.replaceAll("%", "%25").replaceAll(":", "%3A");
}

/**
 * A worker's job lock: held while the worker lives (it renews it every half period), so a
 * worker that died, or whose completion Redis never got, gives its job back after about
 * `lockDurationMs` (default 30 s). A job may outlive several dead workers before one finishes it.
 */
export function lockOptions(lockDurationMs = 30_000): { lockDuration: number; stalledInterval: number; maxStalledCount: number } {
  return { lockDuration: lockDurationMs, stalledInterval: Math.max(500, Math.floor(lockDurationMs / 2)), maxStalledCount: 10 };
}

/**
 * A BullMQ worker's connection errors (Redis restarting, unreachable) on stderr, once per
 * outage: the worker reconnects by itself; the next finished job ends the outage.
 */
export function reportOutages(worker: { on(event: "error", f: (e: Error) => void): unknown; on(event: "completed", f: () => void): unknown }, label: string): void {
  let down = false;
  worker.on("error", (error) => {
    if (down) return;
    down = true;
    console.error(`${label}: ${error.message} (reconnecting)`);
  });
  worker.on("completed", () => (down = false));
}

/**
 * Fail fast when Redis does not answer at start (commands would otherwise wait for it forever):
 * a ServerError naming the URL. Outages after a good start are waited out.
 */
export async function assertRedisReachable(url: string, timeoutMs = 3_000): Promise<void> {
  const client = new Redis({ ...redisOptions(url), maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs, lazyConnect: true });
  client.on("error", () => undefined); // the failure is the rejected connect below
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw new ServerError(`Redis at ${redactedUrl(url)} does not answer (${(error as Error).message}): start it, or check --redis`);
  } finally {
    client.disconnect();
  }
}

/** The URL for logs and errors: a password in it is shown as "***". */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url;
  }
}

/**
 * BullMQ workers on `queues`, one processor for all: the lock of lockOptions, connection
 * outages reported once each. Close them with `closeWorkers`.
 */
export function startWorkers<Data, Result>(
  queues: readonly string[],
  processor: Processor<Data, Result>,
  options: { redis: string; concurrency?: number; lockDurationMs?: number },
): Worker<Data, Result>[] {
  const connection = redisOptions(options.redis);
  return queues.map((queue) => {
    const worker = new Worker<Data, Result>(queue, processor, { connection, concurrency: options.concurrency ?? 1, ...lockOptions(options.lockDurationMs) });
    reportOutages(worker, `forge-ts worker ${queue}`);
    return worker;
  });
}

export const closeWorkers = async (workers: readonly Worker[]): Promise<void> => void (await Promise.all(workers.map((w) => w.close())));
