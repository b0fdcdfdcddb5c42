/**
 * Controlling queued runs, against a real redis-server and an in-process worker: cancelRun of
 * a running run (checkpointed "cancelled") and of one not started (removed); job options
 * (priority, delay, attempts, timeoutMs) and their checks; progress; a run whose lease another
 * runner holds is tried again when it ends, without spending an attempt.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionTurnFailedError } from "../../src/core/errors.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { createRunQueue, type RunQueue } from "../../src/queue/run-queue.js";
import { queueCounter } from "../../src/queue/counts.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { jobTimes, notesNamed, releaseHold, startTestWorker } from "../support/queue-harness.js";
import { until } from "../support/until.js";

let redis: TestRedis;
let queue: RunQueue;
// The lock test's job is delayed until the lease it meets ends (about 10 s). Shorter leases lose
// runs on a loaded machine: a renewal (every third of the lease) held up past the lease ends the run.
const store = new MemoryRunStore({ leaseMs: 10_000 });
// How long a "SLOW" model call takes: far longer than any wait here, so a run that ends before it was stopped, not finished.
const SLOW_MS = 600_000;
const workers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  redis = await startRedis();
  queue = createRunQueue({ redis: redis.url });
  workers.push(startTestWorker(redis.url, store, [notesNamed("notes")], { concurrency: 2, progressIntervalMs: 100 }));
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await queue?.close();
  await redis?.stop();
});

describe("run control", { timeout: 120_000 }, () => {
  it("cancelRun of a running run: it ends cancelled in the store, result() says so, the session's next turn fails fast", async () => {
    const run = await queue.enqueueRun({ workflow: "notes", sessionId: "cancel-active", runId: "cancel-active-1", text: `SLOW ${SLOW_MS} Remember a.` });
    const next = await queue.enqueueRun({ workflow: "notes", sessionId: "cancel-active", runId: "cancel-active-2", text: "Remember b." });
    // Running: its progress shows the model call in flight.
    const progress = await until(async () => (await queue.job("notes", run.runId))?.progress);
    expect(progress).toMatchObject({ state: expect.any(String), iteration: expect.any(Number) });
    // The visualizer's queue panel lists it with that progress.
    const counter = queueCounter(redis.url);
    try {
      const notes = (await counter.counts()).find((c) => c.queue === "forge-runs-notes");
      expect(notes?.running).toContainEqual({ id: run.runId, progress: expect.objectContaining({ state: expect.any(String) }) });
    } finally {
      await counter.close();
    }
    const cancelledAt = Date.now();
    expect(await queue.cancelRun(run.runId)).toBe("signalled");
    await expect(run.result(60_000)).rejects.toThrow(/cancelled/i);
    // Ended after the cancel, and long before the model call would have: the cancel stopped it.
    const { startedAt, finishedAt } = await jobTimes(redis.url, "notes", run.runId);
    expect(finishedAt).toBeGreaterThanOrEqual(cancelledAt);
    expect(finishedAt - startedAt).toBeLessThan(SLOW_MS);
    expect(await store.latest(run.runId)).toMatchObject({ state: "cancelled" });
    const error = await next.result(60_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionTurnFailedError);
    expect(error).toMatchObject({ failedRunId: "cancel-active-1", failedTurn: 1, outcome: "cancelled" });
    expect(await queue.cancelRun(run.runId)).toBe("finished");
  });

  it("cancelRun of a run not started: the job is removed, never runs, and the next turn goes on", async () => {
    // Turn 1 runs until the test lets it end; turn 2 waits for it, parked; turn 3 goes on after the cancelled turn 2.
    const first = await queue.enqueueRun({ workflow: "notes", sessionId: "cancel-waiting", text: "HOLD cancel-waiting Remember a." });
    const second = await queue.enqueueRun({ workflow: "notes", sessionId: "cancel-waiting", runId: "cancel-waiting-2", text: "Remember b." });
    const third = await queue.enqueueRun({ workflow: "notes", sessionId: "cancel-waiting", text: "Remember c.", afterFailure: "continue" });
    await until(async () => (await queue.job("notes", second.runId))?.state === "delayed");
    expect(await queue.cancelRun(second.runId)).toBe("removed");
    releaseHold("cancel-waiting");
    expect(await queue.job("notes", second.runId)).toBeUndefined();
    await expect(second.result(60_000)).rejects.toThrow(/cancelled/i);
    expect(await first.result(60_000)).toBe("I remember 1 fact(s).");
    expect(await third.result(60_000)).toBe("I remember 2 fact(s).");
    expect(await store.latest(second.runId)).toBeUndefined();
    // A workflow no worker runs: removed from the queue as well.
    const idle = await queue.enqueueRun({ workflow: "idle", text: "x" });
    expect(await queue.cancelRun(idle.runId)).toBe("removed");
    expect(await queue.counts("idle")).toMatchObject({ waiting: 0 });
    expect(await queue.cancelRun("never-enqueued")).toBe("not-found");
  });

  it("timeoutMs cancels a run that takes too long", async () => {
    const run = await queue.enqueueRun({ workflow: "notes", text: `SLOW ${SLOW_MS} Remember a.`, timeoutMs: 200 });
    await expect(run.result(60_000)).rejects.toThrow(/timed out after 200 ms/);
    // Not before its time, and long before the model call would have ended: the timeout stopped it.
    const { startedAt, finishedAt } = await jobTimes(redis.url, "notes", run.runId);
    expect(finishedAt - startedAt).toBeGreaterThanOrEqual(200);
    expect(finishedAt - startedAt).toBeLessThan(SLOW_MS);
    expect(await store.latest(run.runId)).toMatchObject({ state: "cancelled" });
    expect(await queue.job("notes", run.runId)).toMatchObject({ state: "failed", attemptsMade: 1 });
  });

  it("priority orders the jobs waiting for a worker; delay holds a job back", async () => {
    const prio = notesNamed("prio");
    const runs = [];
    for (const [runId, priority] of [["prio-low", 3], ["prio-high", 1], ["prio-mid", 2]] as const) runs.push(await queue.enqueueRun({ workflow: prio, runId, text: "Remember a.", priority }));
    expect(await queue.counts("prio")).toMatchObject({ waiting: 3 });
    const worker = startTestWorker(redis.url, store, [prio]);
    try {
      await Promise.all(runs.map((r) => r.result(60_000)));
      const started = await Promise.all(runs.map(async (r) => ({ runId: r.runId, at: (await store.latest(r.runId))!.createdAt })));
      expect(started.sort((a, b) => a.at - b.at).map((r) => r.runId)).toEqual(["prio-high", "prio-mid", "prio-low"]);
    } finally {
      await worker.close();
    }
    const delayed = await queue.enqueueRun({ workflow: "notes", text: "Remember a.", delay: 400 });
    expect(await queue.job("notes", delayed.runId)).toMatchObject({ state: "delayed" });
    await delayed.result(60_000);
    const { enqueuedAt, startedAt } = await jobTimes(redis.url, "notes", delayed.runId);
    expect(startedAt - enqueuedAt).toBeGreaterThanOrEqual(400);
  });

  it("publishes progress: the final state and the iterations", async () => {
    const run = await queue.enqueueRun({ workflow: "notes", text: "Remember a." });
    await run.result(60_000);
    expect(await queue.job("notes", run.runId)).toEqual({ state: "completed", progress: { state: "done", iteration: 2 }, attemptsMade: 1, failedReason: undefined });
    expect(await queue.job("notes", "no-such-run")).toBeUndefined();
  });

  it("a run whose lease another runner holds is tried again when the lease ends, without spending an attempt", async () => {
    const lease = await store.lock("locked-1");
    const run = await queue.enqueueRun({ workflow: "notes", runId: "locked-1", text: "Remember a." });
    // Delayed (not failed, not run) while the lease is held: then the holder lets go.
    await until(async () => (await queue.job("notes", "locked-1"))?.state === "delayed");
    await lease.release();
    expect(await run.result(60_000)).toBe("I remember 1 fact(s).");
    // One attempt (the default), counted once: the waits for the lease spent none.
    expect(await queue.job("notes", "locked-1")).toMatchObject({ state: "completed", attemptsMade: 1 });
  });

  it("refuses bad job options, naming the field, before anything is queued", async () => {
    const base = { workflow: "notes", text: "x" };
    for (const [options, field] of [
      [{ attempts: 0 }, "attempts"],
      [{ attempts: 1.5 }, "attempts"],
      [{ backoff: { type: "linear", delay: 10 } }, "backoff"],
      [{ backoff: { type: "fixed", delay: -1 } }, "backoff.delay"],
      [{ priority: 0 }, "priority"],
      [{ priority: 3_000_000 }, "priority"],
      [{ delay: -5 }, "delay"],
      [{ timeoutMs: 0 }, "timeoutMs"],
      [{ afterFailure: "skip", sessionId: "s" }, "afterFailure"],
      [{ afterFailure: "continue" }, "afterFailure"],
    ] as const) {
      await expect(queue.enqueueRun({ ...base, ...(options as object) })).rejects.toThrow(new RegExp(`^Invalid ${field.replace(".", "\\.")}:`));
    }
    expect(() => createRunQueue({ redis: redis.url, connectTimeoutMs: 0 })).toThrow(/connectTimeoutMs/);
    expect(await queue.counts("notes")).toMatchObject({ waiting: 0 });
  });
});
