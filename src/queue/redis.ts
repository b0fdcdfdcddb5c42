/**
 * Redis connection options for BullMQ from a `redis://[user:password@]host[:port][/db]` URL
 * (`rediss://` for TLS). BullMQ's workers block on Redis, so commands never give up while the
 * server is away (`maxRetriesPerRequest: null`): a restarted Redis is reconnected to, not an
 * error. A server that went silent (a partition that drops packets, a paused server) is left
 * by the socket timeout, then reconnected to the same way. A producer's calls must not wait
 * forever: gated-client.ts bounds them. Also here: the outage reporting every client we create
 * gets, and the errors for a Redis we cannot use.
 */
import type { Processor, RedisOptions, Worker } from "bullmq";
import { bullmq, ioredis } from "./packages.js";
import { InvalidArgumentError, ServerError } from "../core/errors.js";
import { redactUrl } from "../core/redact.js";

/** How long connecting (TCP, and TLS for rediss://) may take before ioredis tries again. */
const REDIS_CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long a connection may get no data while a reply is due before ioredis destroys its socket
 * (then it reconnects and sends the command again). Without it a silent peer holds a command
 * until the kernel gives up on the connection, about 15 minutes. Above the longest wait Redis
 * itself takes to answer us: BullMQ's blocking reads (a worker's BZPOPMIN and QueueEvents' XREAD)
 * block at most 10 s, and BullMQ races each against a watchdog of its own (the block plus 1 s)
 * that resets a connection whose read did not come back. Our own commands never block.
 */
export const REDIS_SOCKET_TIMEOUT_MS = 30_000;

/**
 * TCP keepalive: after this long without traffic the OS probes the peer (Node asks for 10 probes
 * a second apart), so a connection whose host vanished is found dead in about 20 s even with no
 * reply due: an idle subscriber, or a blocked read the server acknowledged.
 */
const REDIS_KEEPALIVE_MS = 10_000;

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
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    socketTimeout: REDIS_SOCKET_TIMEOUT_MS,
    keepAlive: REDIS_KEEPALIVE_MS,
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

/** Whatever reports errors: ioredis clients and BullMQ's Queue, QueueEvents and Worker. */
export interface ErrorSource {
  on(event: "error", listener: (error: Error) => void): unknown;
}

/**
 * Connection errors of several clients (Redis restarting, unreachable) on stderr, once per
 * outage: the clients reconnect by themselves. Every client we create gets a listener from
 * `watch`, so no 'error' event goes unhandled (ioredis would print a stack trace for it, and an
 * EventEmitter without a listener throws it). `recovered()` ends the outage: the next error is
 * reported again. Other errors (BullMQ's "Missing lock for job ...": a job's lock lapsed) are
 * printed as they come, not as an outage.
 */
export function outageReporter(label: string, print: (line: string) => void = console.error): { watch(source: ErrorSource): void; recovered(): void } {
  let down = false;
  const onError = (error: Error) => {
    if (!isConnectionError(error)) return print(`${label}: ${error.message}`);
    if (down) return;
    down = true;
    print(`${label}: ${error.message} (reconnecting)`);
  };
  return {
    watch: (source) => void source.on("error", onError),
    recovered: () => void (down = false),
  };
}

/** ioredis' and Node's words for a connection that failed, was cut, went silent, or refused our credentials. */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  const text = `${typeof e?.code === "string" ? e.code : ""} ${typeof e?.message === "string" ? e.message : ""}`;
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|Connection is closed|Stream isn't writeable|max retries per request|Socket timeout/i.test(text) || isAuthError(error);
}

/** Redis refused our credentials (a wrong password or user), rather than not answering at all. */
export function isAuthError(error: unknown): boolean {
  return /\b(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i.test((error as Error | undefined)?.message ?? "");
}

/**
 * The typed error for a Redis we cannot use, telling a server that refused the credentials
 * (fix the URL's password) from one that does not answer (start it, or fix host and port).
 */
export function redisUnavailable(url: string, error: unknown, hint = "check the URL"): ServerError {
  const reason = (error as Error | undefined)?.message ?? String(error);
  return isAuthError(error)
    ? new ServerError(`Redis at ${redactUrl(url)} refused the credentials (${reason}): check the user and password in the URL`, "", { cause: error })
    : new ServerError(`Redis at ${redactUrl(url)} does not answer (${reason}): start it, or ${hint}`, "", { cause: error });
}

/**
 * Fail fast when Redis does not answer at start or refuses the credentials (commands would
 * otherwise wait for it forever): a ServerError naming the URL. Outages after a good start are
 * waited out.
 */
export async function assertRedisReachable(url: string, timeoutMs = 3_000): Promise<void> {
  const client = new ioredis.Redis({ ...redisOptions(url), maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs, lazyConnect: true });
  // The 'error' event carries the server's reply (WRONGPASS, NOAUTH); the rejected connect()
  // often only says "Connection is closed".
  let lastError: Error | undefined;
  client.on("error", (error: Error) => (lastError ??= error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw redisUnavailable(url, lastError ?? error, "check --redis");
  } finally {
    client.disconnect();
  }
}

// Outside the queue so that commands without BullMQ (forge-ts visualize) redact the same way.
export { redactUrl };

/**
 * BullMQ workers on `queues`, one processor for all: the lock of lockOptions, connection
 * outages reported once each (through `outages`, when the caller's other clients share it).
 * Close them with `closeWorkers`.
 */
export function startWorkers<Data, Result>(
  queues: readonly string[],
  processor: Processor<Data, Result>,
  options: { redis: string; concurrency?: number; lockDurationMs?: number; outages?: ReturnType<typeof outageReporter> },
): Worker<Data, Result>[] {
  const connection = redisOptions(options.redis);
  return queues.map((queue) => {
    const worker = new bullmq.Worker<Data, Result>(queue, processor, { connection, concurrency: options.concurrency ?? 1, ...lockOptions(options.lockDurationMs) });
    // A finished job shows Redis is back: the next outage is reported again.
    const outages = options.outages ?? outageReporter(`forge-ts worker ${queue}`);
    outages.watch(worker);
    worker.on("completed", outages.recovered);
    return worker;
  });
}

export const closeWorkers = async (workers: readonly Worker[]): Promise<void> => void (await Promise.all(workers.map((w) => w.close())));
