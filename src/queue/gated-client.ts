/**
 * A producer's Redis connection that fails fast. BullMQ's workers wait out an outage (their
 * commands never give up); a caller of enqueueRun must not: every operation first waits at most
 * `connectTimeoutMs` for the connection to be ready, and rejects with a ServerError saying
 * whether Redis does not answer or refused the credentials. Commands are not queued while the
 * connection is down (`enableOfflineQueue: false`), so one that fails is not sent later behind
 * the caller's back; a command cut off mid-flight gives up after one reconnection attempt.
 *
 * A connected Redis that goes silent (a partition that drops packets, a paused server) is bounded
 * per reply: each command fails after `replyTimeoutMs` without one. The socket timeout alone does
 * not do it: ioredis keeps a command cut off by it and sends it again once a connection is ready,
 * and a server that accepts connections but never answers never lets one be, so the caller would
 * wait for as long as the silence lasts. Such a command may still reach Redis later: the error
 * says the call may or may not have taken effect (enqueueRun again with the same runId is safe).
 */
import type { Redis } from "ioredis";
import { ioredis } from "./packages.js";
import { ServerError } from "../core/errors.js";
import { redactUrl } from "../core/redact.js";
import { isAuthError, isConnectionError, REDIS_SOCKET_TIMEOUT_MS, redisOptions, redisUnavailable } from "./redis.js";

export interface GatedClient {
  readonly client: Redis;
  /** Resolves once the connection is ready; rejects within the connect timeout otherwise. */
  ready(): Promise<void>;
  /** `operation` once the connection is ready; its connection failures as the same typed error. */
  use<T>(operation: () => Promise<T>): Promise<T>;
  close(): void;
}

/** `replyTimeoutMs`: how long a command may go without a reply (the socket timeout's value; tests shorten it). */
export function gatedClient(url: string, connectTimeoutMs: number, replyTimeoutMs = REDIS_SOCKET_TIMEOUT_MS): GatedClient {
  const client = new ioredis.Redis({
    ...redisOptions(url),
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: connectTimeoutMs,
    socketTimeout: replyTimeoutMs,
    commandTimeout: replyTimeoutMs,
    lazyConnect: true,
  });
  // The reason of the current outage, for the error a caller gets; the client reconnects by itself.
  let lastError: Error | undefined;
  client.on("error", (error: Error) => (lastError = error));
  client.on("ready", () => (lastError = undefined));

  const ready = (): Promise<void> => {
    if (client.status === "ready") return Promise.resolve();
    if (client.status === "wait") client.connect().catch(() => undefined); // failures arrive as 'error' events
    return new Promise<void>((resolve, reject) => {
      const done = (outcome: () => void) => {
        clearTimeout(timer);
        client.off("ready", onReady);
        client.off("error", onError);
        outcome();
      };
      const onReady = () => done(resolve);
      // Refused credentials will not get better by waiting: say so at once.
      const onError = (error: Error) => {
        if (isAuthError(error)) done(() => reject(redisUnavailable(url, error)));
      };
      const timer = setTimeout(() => done(() => reject(redisUnavailable(url, lastError ?? new Error(`not connected within ${connectTimeoutMs} ms`)))), connectTimeoutMs);
      client.on("ready", onReady);
      client.on("error", onError);
      if (lastError && isAuthError(lastError)) onError(lastError);
    });
  };

  return {
    client,
    ready,
    async use(operation) {
      await ready();
      try {
        return await operation();
      } catch (error) {
        if (isReplyTimeout(error)) {
          throw new ServerError(`Redis at ${redactUrl(url)} gave no reply within ${replyTimeoutMs} ms (a network partition, or a server that hangs); the call may or may not have taken effect`, "", { cause: error });
        }
        throw isConnectionError(error) ? redisUnavailable(url, lastError ?? error) : error;
      }
    },
    close: () => client.disconnect(),
  };
}

/** ioredis' commandTimeout ran out. */
const isReplyTimeout = (error: unknown): boolean => (error as Error | undefined)?.message === "Command timed out";
