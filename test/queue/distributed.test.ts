/**
 * Scale-out with real processes: a redis-server and three `forge-ts worker` processes sharing a
 * SQL run store (the configuration for workers on several machines). A
 * distributed eval batch writes the same records as a local one; a worker killed with kill -9
 * mid-run leaves its run to another worker, which resumes it without re-running a finished
 * tool; a Redis restart mid-batch is reconnected to and the batch completes.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadBatchConfig, runBatch, type BatchConfig } from "../../eval/batch.js";
import { runQueuedBatch, type QueueCounts } from "../../eval/queue.js";
import { readRecords, type RunRecord } from "../../eval/run-record.js";
import { selectScenarios } from "../../eval/scenarios/index.js";
import { queueCounter } from "../../src/queue/counts.js";
import { createRunQueue } from "../../src/queue/run-queue.js";
import { createVisualizer } from "../../visualizer/server.js";
import { launchChromium, screenshot } from "../support/browser.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { cliArgs } from "../support/cli.js";
import { until } from "../support/until.js";

const execFileP = promisify(execFile);

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
let redis: TestRedis;
let dir: string;
let toolLog: string;
let replyGate: string; // the notes workflow's reply waits for this file (test/fixtures/queue-workflow.ts)
const workers: ChildProcess[] = [];

function startWorker(): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    cliArgs("src/cli/main.ts", "worker", "--redis", redis.url, "--eval", "sim", "--workflow", "test/fixtures/queue-workflow.ts", "--backend", "sim", "--store", `file:${path.join(dir, "runs.db")}`, "--lock-ms", "2000"),
    { env: { ...env, NO_COLOR: "1", FORGE_TOOL_LOG: toolLog, FORGE_TOOL_MS: "300", FORGE_REPLY_GATE: replyGate } },
  );
  workers.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("forge-ts worker")) resolve(child);
    });
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => reject(new Error(`worker exited ${code}: ${out}`)));
  });
}

beforeAll(async () => {
  redis = await startRedis();
  dir = mkdtempSync(path.join(tmpdir(), "forge-queue-"));
  toolLog = path.join(dir, "tools.jsonl");
  replyGate = path.join(dir, "reply-gate");
  await Promise.all([startWorker(), startWorker(), startWorker()]);
}, 120_000);

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill("SIGKILL");
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A small sim batch: a few scenarios, two runs each. */
function smallBatch(scenarios: number, seed = 42): BatchConfig {
  const config = loadBatchConfig("sim");
  config.seed = seed;
  config.scenarios = selectScenarios({ names: config.scenarios, tags: config.tags }).slice(0, scenarios).map((s) => s.name);
  return config;
}

/** Records without what depends on the machine and the moment. */
const comparable = (records: readonly RunRecord[]) => records.map(({ elapsedMs: _e, timestamp: _t, ...rest }) => rest);

describe("distributed eval and session workers", () => {
  it("a distributed eval batch equals the local one, record for record", async () => {
    const config = smallBatch(3);
    const local = path.join(dir, "local.jsonl");
    const queued = path.join(dir, "queued.jsonl");
    await runBatch({ config, runs: 2, out: local, log: () => undefined });
    const counts: QueueCounts[] = [];
    const outcome = await runQueuedBatch({ config, runs: 2, out: queued, redis: redis.url, log: () => undefined, onCounts: (c) => counts.push(c) });
    expect(outcome.ran).toBe(readRecords(local).length);
    expect(comparable(readRecords(queued))).toEqual(comparable(readRecords(local)));
    expect(counts.at(-1)).toMatchObject({ waiting: 0, active: 0, failed: 0 });
    // Enqueued again: every job id exists, nothing runs twice, nothing is appended.
    expect(await runQueuedBatch({ config, runs: 2, out: queued, redis: redis.url, log: () => undefined })).toEqual({ ran: 0, skipped: outcome.ran });
    // Into a fresh file: the jobs exist (same keys, same seed), so their results come back without running again.
    const again = path.join(dir, "again.jsonl");
    const counter = queueCounter(redis.url);
    const completed = async () => (await counter.counts()).find((c) => c.queue === "forge-eval-sim")?.completed;
    const completedBefore = await completed();
    expect((await runQueuedBatch({ config, runs: 2, out: again, redis: redis.url, log: () => undefined })).ran).toBe(outcome.ran);
    expect(comparable(readRecords(again))).toEqual(comparable(readRecords(queued)));
    expect(await completed()).toBe(completedBefore);
    await counter.close();
  }, 120_000);

  it("a worker killed with kill -9 mid-run: another worker finishes the run, no finished tool runs again", async () => {
    const queue = createRunQueue({ redis: redis.url });
    try {
      const run = await queue.enqueueRun({ workflow: "notes", text: "Remember the milk.", runId: "killed-1" });
      const lines = () =>
        (existsSync(toolLog) ? readFileSync(toolLog, "utf8") : "")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { event: string; tool: string; key: string; pid: number })
          .filter((e) => e.key.startsWith("killed-1:"));
      // Killed once its reply has started (the run goes on to it only after remember's outcome
      // is in the store), and before that reply can finish (it waits for the gate). "remember
      // ended" alone is not enough: killed before the outcome is written, remember runs again,
      // which a loaded machine showed.
      const victim = await until(() => lines().find((e) => e.event === "start" && e.tool === "reply")?.pid, 30_000);
      process.kill(victim, "SIGKILL");
      writeFileSync(replyGate, "");
      expect(await run.result(60_000)).toBe("I remember 1 fact(s).");
      const log = lines();
      const ends = log.filter((e) => e.event === "end");
      // Every tool call finished once; the finished one never started again.
      expect(new Set(ends.map((e) => e.key)).size).toBe(ends.length);
      expect(log.filter((e) => e.tool === "remember" && e.event === "start")).toHaveLength(1);
      expect(ends.find((e) => e.tool === "reply")!.pid).not.toBe(victim);
      // `forge-ts runs list --redis` shows the run's job beside its state in the store.
      const listed = await execFileP(process.execPath, cliArgs("src/cli/main.ts", "runs", "list", "--store", `file:${path.join(dir, "runs.db")}`, "--redis", redis.url, "--status", "done"));
      expect(listed.stdout).toMatch(/killed-1 +notes +- +done +done +\d+ +\S+ +completed \(done, iteration \d+\)/);
    } finally {
      await queue.close();
    }
    await startWorker(); // three again for what follows
  }, 120_000);

  it("1,000 queued sim runs across the 3 workers (throughput printed)", async () => {
    const config = loadBatchConfig("sim");
    config.seed = 1000;
    config.rows = config.rows.slice(0, 1);
    config.scenarios = selectScenarios({ names: [], tags: [] }).slice(0, 10).map((s) => s.name);
    const out = path.join(dir, "thousand.jsonl");
    const started = performance.now();
    const outcome = await runQueuedBatch({ config, runs: 100, out, redis: redis.url, log: () => undefined });
    const seconds = (performance.now() - started) / 1000;
    expect(outcome).toEqual({ ran: 1000, skipped: 0 });
    expect(new Set(readRecords(out).map((r) => r.key)).size).toBe(1000);
    console.log(`[queue] 1,000 sim runs on 3 workers: ${seconds.toFixed(1)} s, ${(1000 / seconds).toFixed(0)} runs/s`);
  }, 120_000);

  it("the visualizer shows every queue's counts live (forge-ts visualize --redis)", async () => {
    const queues = queueCounter(redis.url);
    const viz = createVisualizer({ queues });
    const { url } = await viz.listen({ port: 0 });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(url);
      const done = page.locator("[data-testid=queues] tr[data-queue=forge-eval-sim] [data-count=completed]");
      await expect.poll(async () => Number(await done.textContent().catch(() => "0")), { timeout: 30_000 }).toBeGreaterThanOrEqual(1000);
      const before = Number(await done.textContent());
      // A batch enqueued now moves the counts while the page watches.
      const config = smallBatch(2, 7);
      await runQueuedBatch({ config, runs: 5, out: path.join(dir, "watched.jsonl"), redis: redis.url, log: () => undefined });
      await expect.poll(async () => Number(await done.textContent()), { timeout: 30_000 }).toBe(before + 2 * 5 * config.rows.length);
      expect(await page.textContent("tr[data-queue=forge-runs-notes] [data-count=completed]")).toBe("1");
      await screenshot(page, "queues");
    } finally {
      await browser.close();
      await viz.close();
      await queues.close();
    }
  }, 120_000);

  it("Redis restarted mid-batch: the workers reconnect and the batch completes", async () => {
    const config = smallBatch(4, 77);
    const runs = 25;
    const total = config.scenarios.length * runs * config.rows.length;
    const out = path.join(dir, "restart.jsonl");
    let restart: Promise<void> | undefined;
    let recordsAtRestart = 0;
    let recorded = 0;
    const outcome = await runQueuedBatch({
      config,
      runs,
      out,
      redis: redis.url,
      log: () => undefined,
      onRecord: () => {
        recorded++;
        if (restart) return;
        recordsAtRestart = recorded;
        restart = redis.restart(); // SIGKILL, then the same port again (append-only file)
      },
    });
    await restart;
    expect(recordsAtRestart).toBeLessThan(total / 2);
    expect(outcome.ran).toBe(total);
    expect(readRecords(out)).toHaveLength(total);
    // The same seed's runs: the records match a local batch's.
    const local = path.join(dir, "restart-local.jsonl");
    await runBatch({ config, runs, out: local, log: () => undefined });
    expect(comparable(readRecords(out))).toEqual(comparable(readRecords(local)));
  }, 90_000);
});
