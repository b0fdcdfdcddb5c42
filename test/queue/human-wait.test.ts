/**
 * Queued runs that wait for a person, against a real redis-server: the waiting run frees its
 * worker (its job completes "waiting"), keeps its session's turn, and once decided in the
 * store, resumeRun puts it back in the queue and a worker finishes it; then the next turn runs.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { RunWaitingError } from "../../src/core/errors.js";
import { Workflow } from "../../src/core/workflow.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { createRunQueue, type RunQueue } from "../../src/queue/run-queue.js";
import { recordDecision } from "../../src/runner/decisions.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { notesNamed, startTestWorker } from "../support/queue-harness.js";
import { until } from "../support/until.js";

const base = notesNamed("guarded-notes");
// Every note needs a person's approval before it is kept.
const workflow = new Workflow({
  name: "guarded-notes",
  tools: { ...base.tools, remember: { ...base.tools.remember!, needsApproval: true } },
  requiredSteps: [...base.requiredSteps],
  terminalTool: [...base.terminalTools],
  systemPromptTemplate: base.systemPromptTemplate,
});

let redis: TestRedis;
let queue: RunQueue;
const store = new MemoryRunStore();
let worker: { close(): Promise<void> };

beforeAll(async () => {
  redis = await startRedis();
  queue = createRunQueue({ redis: redis.url });
  worker = startTestWorker(redis.url, store, [workflow], { concurrency: 1 });
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await queue?.close();
  await redis?.stop();
});

it("a waiting run frees its worker and holds its turn; decided and requeued, it finishes, then the next turn runs", { timeout: 120_000 }, async () => {
  const first = await queue.enqueueRun({ workflow, sessionId: "hitl", runId: "hitl-1", text: "Remember that the meeting is at 10." });
  const second = await queue.enqueueRun({ workflow, sessionId: "hitl", runId: "hitl-2", text: "Remember that lunch is at 12." });
  const waiting = await first.result(20_000).catch((e: unknown) => e);
  expect(waiting, String(waiting)).toBeInstanceOf(RunWaitingError);
  expect((waiting as RunWaitingError).requests).toMatchObject([{ tool: "remember", kind: "approval" }]);
  expect(await store.latest("hitl-1")).toMatchObject({ status: "waiting", state: "awaitingHuman" });
  // The worker is free (concurrency 1: it takes turn 2's job, which parks), yet the session's
  // next turn has not run: its turn is held.
  await until(async () => {
    const c = await queue.counts("guarded-notes");
    return c.active === 0 && c.delayed === 1;
  });
  expect(await store.latest("hitl-2")).toBeUndefined();

  await recordDecision(store, "hitl-1", { decision: { type: "approve" } }, Date.now());
  expect(await queue.resumeRun(workflow, "hitl-1")).toBe("requeued");
  expect(await first.result(20_000)).toBeDefined();
  expect(await store.latest("hitl-1")).toMatchObject({ status: "done", state: "done" });
  // Turn 2 waits for its own approval now, and its job has ended parked: a resumeRun while the job
  // still runs is handed to its worker, and result() asked meanwhile can see the parked ending.
  await until(async () => (await store.latest("hitl-2"))?.status === "waiting" && (await queue.job(workflow, "hitl-2"))?.state === "completed");
  await recordDecision(store, "hitl-2", { decision: { type: "approve" } }, Date.now());
  expect(await queue.resumeRun(workflow, "hitl-2")).toBe("requeued");
  expect(await second.result(20_000)).toBeDefined();
  expect(await queue.resumeRun(workflow, "hitl-2")).toBe("not-waiting");
});
