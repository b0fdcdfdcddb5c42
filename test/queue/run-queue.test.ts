/**
 * The run queue against a real redis-server: results come back, a run id is enqueued once, and
 * a session's turns run one at a time, in order, across several workers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadBatchConfig } from "../../eval/batch.js";
import { runQueuedBatch, startEvalWorker } from "../../eval/queue.js";
import type { RunRecord } from "../../eval/run-record.js";
import { selectScenarios } from "../../eval/scenarios/index.js";
import { visualizerInspector } from "../../visualizer/inspector.js";
import { createVisualizer } from "../../visualizer/server.js";
import { SimulatedClient } from "../../src/clients/simulated.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { StoreError, ToolExecutionError, errorToJSON } from "../../src/core/errors.js";
import { jobError, logJobError } from "../../src/queue/job-errors.js";
import { bullmq } from "../../src/queue/packages.js";
import { redisOptions } from "../../src/queue/redis.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { createRunQueue, type RunQueue } from "../../src/queue/run-queue.js";
import { startRunWorker } from "../../src/queue/run-worker.js";
import { oracle, workflow } from "../fixtures/queue-workflow.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { readableRuns } from "../support/readable-runs.js";

/** The workers' shared store, which can be made not to answer for a run a number of times (its server restarting). */
class OutageStore extends MemoryRunStore {
  readonly outages = new Map<string, number>();
  override async latest(...args: Parameters<MemoryRunStore["latest"]>) {
    const left = this.outages.get(args[0]) ?? 0;
    if (left > 0) {
      this.outages.set(args[0], left - 1);
      throw new StoreError(`run store database failed for run ${args[0]}: connect ECONNREFUSED`, args[0], "test", { unreachable: true });
    }
    return super.latest(...args);
  }
}

let redis: TestRedis;
let queue: RunQueue;
const store = new OutageStore();
const workers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  redis = await startRedis();
  queue = createRunQueue({ redis: redis.url });
  // Two workers sharing one store, as two processes would share a database.
  for (let i = 0; i < 2; i++) {
    workers.push(
      startRunWorker({
        redis: redis.url,
        store,
        workflows: [workflow],
        runner: () => ({ client: new SimulatedClient({ oracle, workflow, profile: "clean", seed: 1 }), contextManager: new ContextManager({ budgetTokens: 8192 }) }),
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await queue?.close();
  await redis?.stop();
});

describe("run queue", { timeout: 120_000 }, () => {
  it("runs an enqueued run on a worker and hands back its result", async () => {
    const run = await queue.enqueueRun({ workflow, text: "Remember the milk.", runId: "single-1" });
    expect(run).toMatchObject({ jobId: "single-1", runId: "single-1" });
    expect(await run.result(60_000)).toBe("I remember 1 fact(s).");
    expect(await store.latest("single-1")).toMatchObject({ status: "done", state: "done" });
  });

  it("waits out a store that does not answer, without spending an attempt, and says so", async () => {
    const printed: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void printed.push(String(line)));
    try {
      store.outages.set("outage-1", 2);
      const run = await queue.enqueueRun({ workflow, text: "Remember the milk.", runId: "outage-1" });
      expect(await run.result(60_000)).toBe("I remember 1 fact(s).");
      // The attempt that completed, only: the two waits spent none (with the default of one attempt, a spent one would have failed the job).
      expect(await queue.job("notes", "outage-1")).toMatchObject({ state: "completed", attemptsMade: 1 });
      expect(printed.filter((l) => l.includes("run outage-1: run store database failed") && l.includes("trying again in 1000 ms"))).toHaveLength(2);
    } finally {
      spy.mockRestore();
    }
  });

  it("a failed job's error is the one its failure names, not a later line a worker that lost the job logged", async () => {
    const q = new bullmq.Queue("job-errors-test", { connection: redisOptions(redis.url) });
    try {
      const job = await q.add("run", {}, { jobId: "j1" });
      const real = new ToolExecutionError("step", "step 1 fails, as the turn asked", 1);
      await logJobError(job, real);
      // Cut off while it failed, this worker's line reached Redis after the real failure.
      await logJobError(job, new StoreError("run store database failed for run j1: connect ENETUNREACH", "j1", "test", { unreachable: true }));
      const error = await jobError(q, "j1", real.message);
      expect(error).toBeInstanceOf(ToolExecutionError);
      expect(errorToJSON(error)).toEqual(errorToJSON(real));
      // A reason no line names: that reason, as it is.
      expect((await jobError(q, "j1", "job stalled more than allowable limit")).message).toBe("job stalled more than allowable limit");
    } finally {
      await q.obliterate({ force: true });
      await q.close();
    }
  });

  it("enqueues a run id once", async () => {
    const [a, b] = [await queue.enqueueRun({ workflow: "notes", text: "x", runId: "twice-1" }), await queue.enqueueRun({ workflow: "notes", text: "x", runId: "twice-1" })];
    expect(b.jobId).toBe(a.jobId);
    await a.result(60_000);
    expect((await store.listRuns()).filter((r) => r.runId === "twice-1")).toHaveLength(1);
  });

  it("runs a session's turns one at a time and in order, whichever worker takes them", async () => {
    const turns = [];
    for (let i = 1; i <= 4; i++) turns.push(await queue.enqueueRun({ workflow: "notes", text: `Remember fact ${i}.`, sessionId: "ordered", runId: `ordered-${i}` }));
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 4]);
    // Each turn sees the facts of every turn before it.
    expect(await Promise.all(turns.map((t) => t.result(60_000)))).toEqual(["I remember 1 fact(s).", "I remember 2 fact(s).", "I remember 3 fact(s).", "I remember 4 fact(s)."]);
    const runs = readableRuns(await store.listRuns({ sessionId: "ordered" }));
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.createdAt).toBeGreaterThanOrEqual(runs[i - 1]!.savedAt);
  });

  it("keeps a run of a workflow no worker runs waiting for a worker that does", async () => {
    await queue.enqueueRun({ workflow: "unknown-wf", text: "x", runId: "unknown-1" });
    // A run enqueued after it finishes: the workers were taking jobs all the while, and left it.
    expect(await (await queue.enqueueRun({ workflow: "notes", text: "Remember the milk.", runId: "after-unknown-1" })).result(60_000)).toBe("I remember 1 fact(s).");
    expect(await queue.counts("unknown-wf")).toMatchObject({ waiting: 1, active: 0, failed: 0 });
    expect(await queue.counts("notes")).toMatchObject({ waiting: 0, active: 0, failed: 0 });
  });

  it("an eval worker streams the runs it executes to the visualizer (forge-ts worker --visualize)", async () => {
    const viz = createVisualizer();
    const { url } = await viz.listen({ port: 0 });
    const evalWorker = startEvalWorker({ redis: redis.url, backends: ["sim"], inspect: visualizerInspector(url) });
    const dir = mkdtempSync(path.join(tmpdir(), "forge-eval-viz-"));
    try {
      const config = loadBatchConfig("sim");
      config.scenarios = selectScenarios({ names: [], tags: [] }).slice(0, 1).map((s) => s.name);
      const records: RunRecord[] = [];
      await runQueuedBatch({ config, runs: 1, out: path.join(dir, "r.jsonl"), redis: redis.url, log: () => undefined, onRecord: (r) => records.push(r) });
      expect(records).toHaveLength(config.rows.length);
      await expect.poll(() => viz.feed.runs().filter((r) => r.status !== "active").length).toBe(config.rows.length);
    } finally {
      await evalWorker.close();
      await viz.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses bad input before anything is queued", async () => {
    await expect(queue.enqueueRun({ workflow: "notes", text: "x", runId: "../bad" })).rejects.toThrow(/cannot name a run/);
    await expect(queue.enqueueRun({ workflow: "", text: "x" })).rejects.toThrow(/workflow/);
    expect(() => createRunQueue({ redis: "http://x" })).toThrow(/redis:\/\//);
  });
});
