/**
 * A session's turns under faults, against a real redis-server and two in-process workers: a
 * failed or cancelled turn fails the later ones fast (or lets them run, with afterFailure
 * "continue"), a turn failed by spent attempts releases the next, a turn whose worker died
 * before releasing it is released by the next turn's worker, one failed by BullMQ for stalling
 * too often releases the next as well, and two producers racing on one
 * session keep every turn, numbered once, in order. The workers' parked turns wake only after
 * BACKSTOP_MS unless a release wakes them: a later turn ending well before that after an
 * earlier one shows that releases, not polling, move the sessions on.
 */
import { Worker } from "bullmq";
import fc from "fast-check";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionTurnFailedError } from "../../src/core/errors.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { createRunQueue, runQueueName, type EnqueuedRun, type RunQueue } from "../../src/queue/run-queue.js";
import { redisOptions } from "../../src/queue/redis.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { jobTimes, notesNamed, startTestWorker } from "../support/queue-harness.js";
import { until } from "../support/until.js";

let redis: TestRedis;
let queue: RunQueue;
let other: RunQueue; // a second producer
const store = new MemoryRunStore();
const workers: { close(): Promise<void> }[] = [];
// When a parked turn wakes if no release wakes it: far beyond any wait here.
const BACKSTOP_MS = 120_000;
/** `later` ended after `earlier`, and long before the backstop could have woken it: a release did. */
const wokenByRelease = (later: { finishedAt: number }, earlier: { finishedAt: number }) => {
  expect(later.finishedAt).toBeGreaterThanOrEqual(earlier.finishedAt);
  expect(later.finishedAt - earlier.finishedAt).toBeLessThan(BACKSTOP_MS / 2);
};

beforeAll(async () => {
  redis = await startRedis();
  queue = createRunQueue({ redis: redis.url });
  other = createRunQueue({ redis: redis.url });
  for (let i = 0; i < 2; i++) workers.push(startTestWorker(redis.url, store, [notesNamed("notes")], { concurrency: 2, sessionBackstopMs: BACKSTOP_MS }));
}, 300_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await Promise.all([queue?.close(), other?.close()]);
  await redis?.stop();
});

const times = (workflow: string, runId: string) => jobTimes(redis.url, workflow, runId);

/** Each turn's outcome: its result, or its error. */
const settle = (runs: EnqueuedRun[]): Promise<{ value?: unknown; error?: Error }[]> =>
  Promise.all(runs.map((r) => r.result(60_000).then((value) => ({ value }), (error: Error) => ({ error }))));

describe("session turns under faults", { timeout: 300_000 }, () => {
  it("a failed turn fails the later turns fast with SessionTurnFailedError, the cascade too", async () => {
    const runs = [];
    for (const [i, text] of ["Remember a.", "FAIL", "Remember c.", "Remember d."].entries()) {
      runs.push(await queue.enqueueRun({ workflow: "notes", sessionId: "cascade", runId: `cascade-${i + 1}`, text }));
    }
    const [first, second, third, fourth] = await settle(runs);
    expect(first).toEqual({ value: "I remember 1 fact(s)." });
    expect(second!.error?.message).toMatch(/model is down/);
    for (const [outcome, turn] of [[third, 3], [fourth, 4]] as const) {
      const error = outcome!.error;
      expect(SessionTurnFailedError.isInstance(error) && error instanceof SessionTurnFailedError).toBe(true);
      expect(error).toMatchObject({ code: "FORGE_SESSION_TURN_FAILED", sessionId: "cascade", runId: `cascade-${turn}`, turn, failedRunId: "cascade-2", failedTurn: 2, outcome: "failed" });
    }
    // The failed-fast turns never ran.
    expect(await store.latest("cascade-3")).toBeUndefined();
    expect(await store.latest("cascade-4")).toBeUndefined();
    // Fast: turn 4 failed on turn 2's release, not on the backstop.
    wokenByRelease(await times("notes", "cascade-4"), await times("notes", "cascade-2"));
  });

  it('afterFailure "continue": the next turn runs after a failed one', async () => {
    const failed = await queue.enqueueRun({ workflow: "notes", sessionId: "goes-on", text: "FAIL" });
    const next = await queue.enqueueRun({ workflow: "notes", sessionId: "goes-on", text: "Remember b.", afterFailure: "continue" });
    await expect(failed.result(20_000)).rejects.toThrow(/model is down/);
    expect(await next.result(20_000)).toMatch(/^I remember \d fact\(s\)\.$/);
  });

  it("a turn failed by spent attempts (with backoff) releases the next", async () => {
    const started = Date.now();
    const failing = await queue.enqueueRun({ workflow: "notes", sessionId: "attempts", runId: "attempts-1", text: "FAIL", attempts: 3, backoff: { type: "fixed", delay: 100 } });
    const next = await queue.enqueueRun({ workflow: "notes", sessionId: "attempts", runId: "attempts-2", text: "Remember b.", afterFailure: "continue" });
    await expect(failing.result(20_000)).rejects.toThrow(/model is down/);
    expect(await next.result(20_000)).toMatch(/I remember/);
    expect(await queue.job("notes", "attempts-1")).toMatchObject({ state: "failed", attemptsMade: 3 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200); // two backoffs of 100 ms
  });

  it("a turn ended without its release (its worker died in the hand-over) is released by the next turn's worker", async () => {
    // A bare BullMQ worker stands for ours dying between finishing a job and releasing its turn.
    const bare = new Worker(
      runQueueName("elsewhere"),
      async (job) => {
        if (job.data.text === "FAIL") throw new Error("boom");
        return { result: "ok" };
      },
      { connection: redisOptions(redis.url) },
    );
    bare.on("error", () => undefined);
    try {
      for (const [session, text, expected] of [
        ["handover-done", "Remember a.", { value: "I remember 1 fact(s)." }],
        ["handover-failed", "FAIL", { value: "I remember 1 fact(s)." }],
      ] as const) {
        const first = await queue.enqueueRun({ workflow: "elsewhere", sessionId: session, text });
        await first.result(20_000).catch(() => undefined);
        // Its turn was never released: the second turn's worker finds its job finished.
        const second = await queue.enqueueRun({ workflow: "notes", sessionId: session, text: "Remember b.", afterFailure: "continue" });
        expect((await settle([second]))[0]).toEqual(expected);
        const { enqueuedAt, finishedAt } = await times("notes", second.runId);
        wokenByRelease({ finishedAt }, { finishedAt: enqueuedAt });
      }
    } finally {
      await bare.close();
    }
  });

  it("a turn failed by BullMQ for stalling too often (no processor of ours runs) releases the next", async () => {
    const first = await queue.enqueueRun({ workflow: "stall", sessionId: "stalled", runId: "stalled-1", text: "Remember a." });
    // What BullMQ's stalled-job check writes on a job that stalled more than maxStalledCount
    // times: the next worker to take it fails it at once ("defa": its deferred failure).
    const admin = new Redis(redisOptions(redis.url));
    await admin.hset(`bull:${runQueueName("stall")}:stalled-1`, "defa", "job stalled more than allowable limit");
    admin.disconnect();
    const second = await queue.enqueueRun({ workflow: "notes", sessionId: "stalled", runId: "stalled-2", text: "Remember b.", afterFailure: "continue" });
    await until(async () => (await queue.job("notes", "stalled-2"))?.state === "delayed"); // parked behind turn 1
    const worker = startTestWorker(redis.url, store, [notesNamed("stall")], { sessionBackstopMs: BACKSTOP_MS });
    try {
      await expect(first.result(20_000)).rejects.toThrow(/stalled more than allowable limit/);
      expect(await second.result(20_000)).toBe("I remember 1 fact(s).");
      wokenByRelease(await times("notes", "stalled-2"), await times("stall", "stalled-1"));
      expect(await store.latest("stalled-1")).toBeUndefined();
    } finally {
      await worker.close();
    }
  });

  it("property: producers racing on one session keep every turn once, each producer's order, and run them in turn order", async () => {
    let trial = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 2, maxLength: 3 }), fc.nat(), async (sizes, sharedAt) => {
        const session = `race-${trial++}`;
        const shared = `${session}-shared`;
        // Producer p enqueues its own runs in order, and the shared run id at some position.
        const plans = sizes.map((n, p) => {
          const ids = Array.from({ length: n }, (_, i) => `${session}-p${p}-${i}`);
          ids.splice(sharedAt % (n + 1), 0, shared);
          return ids;
        });
        const producers = [queue, other];
        const enqueued = await Promise.all(
          plans.map(async (ids, p) => {
            const out: EnqueuedRun[] = [];
            for (const runId of ids) out.push(await producers[p % 2]!.enqueueRun({ workflow: "notes", sessionId: session, runId, text: `Remember ${runId}.` }));
            return out;
          }),
        );
        const byRun = new Map(enqueued.flat().map((r) => [r.runId, r]));
        const total = byRun.size;
        // Every turn number once, the shared run one number however often it was enqueued.
        expect([...byRun.values()].map((r) => r.turn).sort((a, b) => a! - b!)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
        // A producer's own runs keep its order (the shared one has the number its first registration gave it).
        for (const runs of enqueued) {
          const turns = runs.filter((r) => r.runId !== shared).map((r) => r.turn!);
          expect(turns).toEqual([...turns].sort((a, b) => a - b));
        }
        for (const r of enqueued.flat()) expect(r.turn).toBe(byRun.get(r.runId)!.turn);
        // Turn t sees the t - 1 facts of the turns before it: they ran one at a time, in order.
        const outcomes = await settle([...byRun.values()]);
        [...byRun.values()].forEach((r, i) => expect(outcomes[i]).toEqual({ value: `I remember ${r.turn} fact(s).` }));
      }),
      { numRuns: 15 },
    );
  });
});
