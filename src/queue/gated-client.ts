/**
 * A producer's Redis connection that fails fast. BullMQ's workers wait out an outage (their
 * commands never give up); a caller of enqueueRun must not: every operation first waits at most
 * `connectTimeoutMs` for the connection to be ready, and rejects with a ServerError saying
 * whether Redis does not answer or refused the credentials. Commands are not queued while the
 * connection is down (`enableOfflineQueue: false`), so one that fails is not sent later behind
 * the caller's back; a command cut off mid-flight gives up after one reconnection attempt.
 */
import type { Redis } from "ioredis";
import { ioredis } from "./packages.js";
import { isAuthError, isConnectionError, redisOptions, redisUnavailable } from "./redis.js";

export interface GatedClient {
  readonly client: Redis;
  /** Resolves once the connection is ready; rejects within the connect timeout otherwise. */
  ready(): Promise<void>;
  /** `operation` once the connection is ready; its connection failures as the same typed error. */
  use<T>(operation: () => Promise<T>): Promise<T>;
  close(): void;
}

export function gatedClient(url: string, connectTimeoutMs: number): GatedClient {
  const client = new ioredis.Redis({ ...redisOptions(url), maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: connectTimeoutMs, lazyConnect: true });
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
        throw isConnectionError(error) ? redisUnavailable(url, lastError ?? error) : error;
      }
    },
    close: () => client.disconnect(),
  };
}
