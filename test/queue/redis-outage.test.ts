/**
 * Redis that cannot be used, against real servers: a producer fails fast (within its connect
 * timeout) and tells a server that does not answer from one that refused the credentials; a
 * worker and a producer ride out a stopped and restarted Redis without one unhandled 'error'
 * event (ioredis would print "Unhandled error event" with a stack trace), and the worker
 * reports the outage once.
 */
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { assertRedisReachable } from "../../src/queue/redis.js";
import { createRunQueue } from "../../src/queue/run-queue.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { startTestWorker } from "../support/queue-harness.js";
import { until } from "../support/until.js";

let locked: TestRedis; // one that wants a password
let silent: net.Server; // accepts connections and never answers
let silentPort: number;
// A connect timeout for servers that do answer: long enough for a loaded machine.
const SLACK_MS = 5_000;

beforeAll(async () => {
  locked = await startRedis();
  const admin = new Redis(locked.url);
  await admin.config("SET", "requirepass", "s3cret");
  admin.disconnect();
  silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentPort = (silent.address() as net.AddressInfo).port;
}, 300_000);

afterAll(async () => {
  await locked?.stop();
  silent?.close();
});

/** How long `promise` takes to reject, and its message. */
async function rejection(promise: Promise<unknown>): Promise<{ ms: number; message: string }> {
  const started = Date.now();
  const error = await promise.then(
    () => expect.fail("should have been rejected"),
    (e: Error) => e,
  );
  return { ms: Date.now() - started, message: error.message };
}

describe("Redis that cannot be used", { timeout: 300_000 }, () => {
  it("enqueueRun fails fast: a Redis that does not answer, and one that refuses the credentials, told apart", async () => {
    // The silent server can only time out; the others answer (or refuse) at once, and get a
    // connect timeout a loaded machine cannot run out.
    const cases = [
      [`redis://127.0.0.1:1`, /Redis at redis:\/\/127\.0\.0\.1:1 does not answer \(.*ECONNREFUSED/, SLACK_MS],
      [`redis://127.0.0.1:${silentPort}`, /does not answer \(not connected within 500 ms\)/, 500],
      [`redis://:wrong@127.0.0.1:${locked.port}`, /Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ refused the credentials \(WRONGPASS/, SLACK_MS],
      [`redis://127.0.0.1:${locked.port}`, /refused the credentials \(NOAUTH/, SLACK_MS],
    ] as const;
    for (const [url, message, connectTimeoutMs] of cases) {
      const queue = createRunQueue({ redis: url, connectTimeoutMs });
      try {
        const failed = await rejection(queue.enqueueRun({ workflow: "notes", text: "x" }));
        expect(failed.message).toMatch(message);
        // Within a bound set by the connect timeout, not by ioredis, which would reconnect
        // forever: generous, so that a loaded machine cannot fail it.
        expect(failed.ms).toBeLessThan(connectTimeoutMs + SLACK_MS);
        // And again, for a caller who retries.
        expect((await rejection(queue.enqueueRun({ workflow: "notes", text: "x" }))).message).toMatch(message);
      } finally {
        await queue.close();
      }
    }
    // The right password works.
    const queue = createRunQueue({ redis: `redis://:s3cret@127.0.0.1:${locked.port}`, connectTimeoutMs: SLACK_MS });
    expect(await queue.counts("notes")).toMatchObject({ waiting: 0 });
    await queue.close();
  });

  it("assertRedisReachable tells the two apart as well", async () => {
    await expect(assertRedisReachable("redis://127.0.0.1:1", 500)).rejects.toThrow(/does not answer/);
    await expect(assertRedisReachable(`redis://:wrong@127.0.0.1:${locked.port}`, SLACK_MS)).rejects.toThrow(/refused the credentials \(WRONGPASS/);
    await expect(assertRedisReachable(`redis://:s3cret@127.0.0.1:${locked.port}`, SLACK_MS)).resolves.toBeUndefined();
  });

  it("a Redis stopped and started again: no unhandled error event, one outage report, work goes on", async () => {
    const server = await startRedis();
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const store = new MemoryRunStore();
    const worker = startTestWorker(server.url, store);
    const queue = createRunQueue({ redis: server.url, connectTimeoutMs: SLACK_MS });
    try {
      expect(await (await queue.enqueueRun({ workflow: "notes", text: "Remember a." })).result(60_000)).toBe("I remember 1 fact(s).");
      await server.down();
      // The clients try to reconnect meanwhile, and fail: the worker reports the outage.
      await until(() => printed.mock.calls.some((args) => args.map(String).join(" ").includes("(reconnecting)")));
      expect((await rejection(queue.enqueueRun({ workflow: "notes", text: "Remember b." }))).message).toMatch(/does not answer/);
      await server.up();
      // Work goes on once the clients have reconnected (ioredis backs off between its tries).
      await until(() => queue.counts("notes").then(() => true, () => false));
      expect(await (await queue.enqueueRun({ workflow: "notes", text: "Remember c." })).result(20_000)).toBe("I remember 1 fact(s).");
      const lines = printed.mock.calls.map((args) => args.map(String).join(" "));
      expect(lines.filter((l) => l.includes("Unhandled error event"))).toEqual([]);
      expect(lines.filter((l) => l.includes("(reconnecting)"))).toHaveLength(1);
    } finally {
      printed.mockRestore();
      await worker.close();
      await queue.close();
      await server.stop();
    }
  });
});
