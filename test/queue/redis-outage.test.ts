/**
 * Redis that cannot be used, against real servers: a producer fails fast (within its connect
 * timeout) and tells a server that does not answer from one that refused the credentials; a
 * worker and a producer ride out a stopped and restarted Redis without one unhandled 'error'
 * event (ioredis would print "Unhandled error event" with a stack trace), and the worker
 * reports the outage once. A Redis that goes silent mid-connection (behind a relay that stops
 * forwarding): a worker's client leaves the socket and gets its answer once Redis is back, a
 * producer's call fails after its reply timeout.
 */
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ServerError } from "../../src/core/errors.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { gatedClient } from "../../src/queue/gated-client.js";
import { assertRedisReachable, isConnectionError, redisOptions } from "../../src/queue/redis.js";
import { createRunQueue } from "../../src/queue/run-queue.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { startRelay, type FrozenRelay } from "../support/frozen-relay.js";
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

describe("Redis that stops answering (connected, silent: a partition or a paused server)", { timeout: 120_000 }, () => {
  let server: TestRedis;
  let relay: FrozenRelay;
  let url: string;
  beforeAll(async () => {
    server = await startRedis();
    relay = await startRelay(server.port);
    url = `redis://127.0.0.1:${relay.port}`;
  }, 300_000);
  afterAll(async () => {
    await relay?.close();
    await server?.stop();
  });
  afterEach(() => relay.thaw());

  it("a worker's client leaves a silent socket after the socket timeout, reconnects, and gets its answer once Redis is back", async () => {
    // Every client we create gets these: a silent connection is left after 30 s without data.
    expect(redisOptions(url)).toMatchObject({ maxRetriesPerRequest: null, connectTimeout: 10_000, socketTimeout: 30_000, keepAlive: 10_000 });
    // The same options with a short socket timeout, so the test does not wait 30 s.
    const client = new Redis({ ...redisOptions(url), socketTimeout: 500 });
    const errors: Error[] = [];
    client.on("error", (error: Error) => errors.push(error));
    try {
      await client.set("k", "before");
      const connections = relay.accepted;
      relay.freeze();
      let answered = false;
      const pending = client.get("k").then((value) => ((answered = true), value));
      // The socket is destroyed, and ioredis connects again (the relay accepts, and is silent too).
      await until(() => errors.some((e) => /^Socket timeout\. Expecting data, but didn't receive any in 500ms\.$/.test(e.message)));
      await until(() => relay.accepted > connections);
      expect(answered).toBe(false);
      // An outage, as the workers' reporter sees it: reported once, not line after line.
      expect(errors.filter((e) => !isConnectionError(e))).toEqual([]);
      relay.thaw();
      // Sent again on the new connection and answered (maxRetriesPerRequest: null waits it out).
      expect(await pending).toBe("before");
    } finally {
      client.disconnect();
    }
  });

  it("a producer's call fails after its reply timeout, saying it may or may not have taken effect; the next call works once Redis is back", async () => {
    // 2 s per reply instead of 30 s: a loaded machine answers well within it.
    const gate = gatedClient(url, SLACK_MS, 2_000);
    try {
      await gate.use(() => gate.client.set("p", "1"));
      relay.freeze();
      const error = await gate.use(() => gate.client.incr("counted")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServerError);
      expect((error as ServerError).message).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+ gave no reply within 2000 ms \(a network partition, or a server that hangs\); the call may or may not have taken effect$/);
      relay.thaw();
      expect(await gate.use(() => gate.client.get("p"))).toBe("1");
    } finally {
      gate.close();
    }
  });
});
