/**
 * Worker metrics against a real redis-server: a `forge-ts worker --metrics-port` process serves
 * /metrics whose run and job counters match the runs sent to it; an in-process worker with the
 * library option counts failed runs and jobs, and a run whose lease it took over from a holder
 * that stopped renewing it (a paused or dead runner).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { MemoryRunStore, type MemoryRunData } from "../../src/persistence/memory-run-store.js";
import { createRunQueue, runQueueName, type RunQueue } from "../../src/queue/run-queue.js";
import { createForgeMetrics } from "../../src/telemetry/metrics.js";
import { serveMetrics } from "../../src/telemetry/serve-metrics.js";
import { scrape } from "../support/prometheus.js";
import { notesNamed, startTestWorker } from "../support/queue-harness.js";
import { until } from "../support/until.js";
import { cliArgs } from "../support/cli.js";

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
let redis: TestRedis;
let queue: RunQueue;
let dir: string;
const stops: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  redis = await startRedis();
  queue = createRunQueue({ redis: redis.url });
  dir = mkdtempSync(path.join(tmpdir(), "forge-worker-metrics-"));
}, 120_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await queue?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A worker process; resolves with its metrics URL once it has printed it and is taking jobs. */
function startWorkerProcess(args: string[]): Promise<{ child: ChildProcess; metricsUrl: string }> {
  const child = spawn(process.execPath, cliArgs("src/cli/main.ts", "worker", "--redis", redis.url, ...args), { env: { ...env, NO_COLOR: "1" } });
  stops.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const look = () => {
      const url = /metrics at (http:\/\/\S+\/metrics)/.exec(out)?.[1];
      if (url && out.includes(`forge-ts worker ${child.pid}`)) resolve({ child, metricsUrl: url });
    };
    child.stdout!.on("data", (d: Buffer) => ((out += d.toString()), look()));
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => reject(new Error(`worker exited ${code}: ${out}`)));
  });
}

describe("worker metrics", { timeout: 120_000 }, () => {
  it("forge-ts worker --metrics-port serves runs and jobs that match the runs sent", async () => {
    const { metricsUrl } = await startWorkerProcess(["--workflow", "test/fixtures/queue-workflow.ts", "--backend", "sim", "--store", path.join(dir, "cli-store"), "--metrics-port", "0"]);
    const before = await scrape(metricsUrl);
    expect(before.value("forge_runs_total")).toBe(0);
    const runs = await Promise.all([1, 2, 3].map((i) => queue.enqueueRun({ workflow: "notes", runId: `cli-run-${i}`, text: `Remember item ${i}.` })));
    await Promise.all(runs.map((r) => r.result(60_000)));
    // The job's completion reaches the counter right after result() can see it: look until it does.
    const s = await until(async () => {
      const scraped = await scrape(metricsUrl);
      return scraped.value("forge_jobs_total") >= 3 ? scraped : undefined;
    });
    expect(s.value("forge_runs_total", { surface: "runner", workflow: "notes", outcome: "done" })).toBe(3);
    expect(s.value("forge_runs_total")).toBe(3);
    expect(s.value("forge_jobs_total", { queue: runQueueName("notes"), outcome: "completed" })).toBe(3);
    expect(s.value("forge_jobs_total")).toBe(3);
    expect(s.value("forge_active_runs", { surface: "runner" })).toBe(0);
    expect(s.count("forge_run_duration_seconds")).toBe(3);
    expect(s.value("forge_lease_takeovers_total")).toBe(0);
    // The worker process reports its own process metrics too.
    expect(s.families.some((f) => f.name === "forge_process_cpu_seconds_total")).toBe(true);
  });

  it("the library option counts failed runs and jobs, and a lease taken over from a holder that stopped renewing it", async () => {
    const data: MemoryRunData = { logs: new Map(), leases: new Map() };
    // A runner that took the run's lease and then stopped renewing it (paused, or killed).
    const paused = new MemoryRunStore({ data, leaseMs: 200, autoRenew: false });
    await paused.lock("lib-stalled");
    // Its lease runs out (by the store's record of it), so the worker's store may take it over.
    await until(() => data.leases.get("lib-stalled")!.expiresAt < Date.now());
    const metrics = createForgeMetrics({ processMetrics: false });
    const endpoint = await serveMetrics(metrics, { port: 0, bearerToken: "scrape-me" });
    stops.push(() => endpoint.close());
    const worker = startTestWorker(redis.url, new MemoryRunStore({ data, leaseMs: 5_000 }), [notesNamed("notes-lib")], { metrics });
    stops.push(() => worker.close());

    const ok = await queue.enqueueRun({ workflow: "notes-lib", runId: "lib-stalled", text: "Remember a." });
    const failing = await queue.enqueueRun({ workflow: "notes-lib", runId: "lib-failing", text: "FAIL Remember b." });
    await ok.result(60_000);
    await expect(failing.result(60_000)).rejects.toThrow();

    expect((await fetch(`${endpoint.url}/metrics`)).status).toBe(401);
    const auth = { authorization: "Bearer scrape-me" };
    const s = await until(async () => {
      const scraped = await scrape(`${endpoint.url}/metrics`, auth);
      return scraped.value("forge_jobs_total") >= 2 ? scraped : undefined;
    });
    expect(s.value("forge_runs_total", { workflow: "notes-lib", outcome: "done" })).toBe(1);
    expect(s.value("forge_runs_total", { workflow: "notes-lib", outcome: "failed" })).toBe(1);
    expect(s.value("forge_jobs_total", { queue: runQueueName("notes-lib"), outcome: "completed" })).toBe(1);
    expect(s.value("forge_jobs_total", { queue: runQueueName("notes-lib"), outcome: "failed" })).toBe(1);
    expect(s.value("forge_lease_takeovers_total", { store: "MemoryRunStore" })).toBe(1);
    expect(s.value("forge_active_runs")).toBe(0);
  });
});
