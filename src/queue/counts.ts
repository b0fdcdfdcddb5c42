/**
 * Live counts of every forge-ts queue on a Redis (run queues per workflow, eval queues per
 * backend), for `forge-ts visualize --redis` and progress lines: found by their BullMQ keys.
 */
import type { Queue } from "bullmq";
import { bullmq, ioredis } from "./packages.js";
import { redisOptions } from "./redis.js";

export interface QueueCount {
  queue: string;
  waiting: number;
  active: number;
  delayed: number;
  completed: number;
  failed: number;
  /** The jobs running now (at most RUNNING_SHOWN), with the progress their workers published ({ state, iteration } for runs). */
  running: { id: string; progress: unknown }[];
}

/** Running jobs listed per queue: a panel line each, not a census. */
const RUNNING_SHOWN = 20;

export interface QueueCounter {
  counts(): Promise<QueueCount[]>;
  /** The last connection error since the last successful count (Redis away: counts wait for it). */
  lastError(): string | undefined;
  close(): Promise<void>;
}

export function queueCounter(redisUrl: string): QueueCounter {
  const connection = redisOptions(redisUrl);
  const redis = new ioredis.Redis(connection);
  const queues = new Map<string, Queue>();
  // The clients reconnect by themselves; the error is kept for whoever shows the counts.
  let lastError: string | undefined;
  const onError = (error: Error) => (lastError = error.message);
  redis.on("error", onError);
  return {
    async counts() {
      // BullMQ keeps a `bull:<queue>:meta` hash per queue.
      const names = new Set<string>();
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", "bull:forge-*:meta", "COUNT", 200);
        cursor = next;
        for (const key of keys) names.add(key.slice("bull:".length, -":meta".length));
      } while (cursor !== "0");
      const out: QueueCount[] = [];
      for (const name of [...names].sort()) {
        let queue = queues.get(name);
        if (!queue) {
          queues.set(name, (queue = new bullmq.Queue(name, { connection })));
          queue.on("error", onError);
        }
        const c = await queue.getJobCounts("waiting", "active", "delayed", "completed", "failed");
        const running = (await queue.getActive(0, RUNNING_SHOWN - 1)).filter((job) => job?.id !== undefined).map((job) => ({ id: job.id!, progress: job.progress ?? null }));
        out.push({ queue: name, waiting: c.waiting ?? 0, active: c.active ?? 0, delayed: c.delayed ?? 0, completed: c.completed ?? 0, failed: c.failed ?? 0, running });
      }
      lastError = undefined;
      return out;
    },
    lastError: () => lastError,
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      redis.disconnect();
    },
  };
}
