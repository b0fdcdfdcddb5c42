/**
 * `npm run bench -- queue`: eval runs on the simulated model through BullMQ with 1, 2 and 4
 * worker processes (runs/s and scaling efficiency), and the per-job cost of the queue against
 * the same runs in one process. Starts its own redis-server (Debian's package) on a free port.
 * FORGE_BENCH_QUEUE_RUNS runs per measurement (default 300).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ioredis } from "../../src/queue/packages.js";
import { redisOptions } from "../../src/queue/redis.js";
import { loadBatchConfig, runBatch, type BatchConfig } from "../batch.js";
import { runQueuedBatch } from "../queue.js";
import { selectScenarios } from "../scenarios/index.js";
import { fig, mdRow, row, type BenchRow, type BenchSuite } from "./harness.js";
import { startRedis } from "./redis-server.js";

const RUNS = Number(process.env.FORGE_BENCH_QUEUE_RUNS ?? 300);
const WORKERS = [1, 2, 4];

function batch(): { config: BatchConfig; runs: number } {
  const config = loadBatchConfig("sim");
  config.rows = config.rows.slice(0, 1);
  config.scenarios = selectScenarios({ names: [], tags: [] }).slice(0, 10).map((s) => s.name);
  return { config, runs: Math.ceil(RUNS / config.scenarios.length) };
}

async function startWorkers(n: number, redis: string): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from({ length: n }, () => {
      const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "worker", "--redis", redis, "--eval", "sim"], { stdio: ["ignore", "pipe", "inherit"] });
      return new Promise<ChildProcess>((resolve, reject) => {
        child.stdout!.on("data", (d: Buffer) => d.toString().includes("forge-ts worker") && resolve(child));
        child.once("exit", (code) => reject(new Error(`worker exited ${code}`)));
      });
    }),
  );
}

export const suite: BenchSuite = {
  name: "queue",
  async run() {
    const redis = await startRedis();
    const dir = mkdtempSync(path.join(tmpdir(), "forge-bench-queue-"));
    const admin = new ioredis.Redis(redisOptions(redis.url));
    const rows: BenchRow[] = [];
    try {
      const { config, runs } = batch();
      const total = config.scenarios.length * runs;
      let started = performance.now();
      await runBatch({ config, runs, out: path.join(dir, "local.jsonl"), log: () => undefined });
      const local = total / ((performance.now() - started) / 1000);
      rows.push({ suite: "queue", case: "in-process batch (no queue)", value: local, unit: "runs/s", note: `${total} sim runs` });
      for (const n of WORKERS) {
        await admin.flushall(); // job ids are the runs' keys: every measurement starts empty
        const workers = await startWorkers(n, redis.url);
        try {
          started = performance.now();
          await runQueuedBatch({ config, runs, out: path.join(dir, `queued-${n}.jsonl`), redis: redis.url, log: () => undefined });
          const rate = total / ((performance.now() - started) / 1000);
          rows.push({ suite: "queue", case: `${n} worker process${n > 1 ? "es" : ""}`, value: rate, unit: "runs/s", note: `${total} sim runs` });
        } finally {
          // Gone before Redis is: a worker outliving it would only report the lost connection.
          await Promise.all(workers.map((w) => new Promise((resolve) => (w.once("exit", resolve), w.kill("SIGTERM")))));
        }
      }
      const one = row(rows, "1 worker process").value;
      for (const n of WORKERS.slice(1)) rows.push({ suite: "queue", case: `scaling efficiency, ${n} workers`, value: row(rows, `${n} worker processes`).value / (n * one), unit: "ratio", note: "runs/s ÷ (n × 1-worker runs/s)" });
      rows.push({ suite: "queue", case: "per-job overhead vs in-process", value: 1000 / one - 1000 / local, unit: "ms", note: "1 worker: ms per run minus in-process ms per run" });
    } finally {
      admin.disconnect();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    return rows;
  },
  readme(rows) {
    const v = (c: string) => fig(row(rows, c).value);
    return [
      mdRow("queue", `eval runs on the simulated model through BullMQ + Redis, 1 / 2 / 4 worker processes (${RUNS} runs each, 2 cores)`, `${v("1 worker process")} / ${v("2 worker processes")} / ${v("4 worker processes")} runs/s`, ""),
      mdRow("queue", "scaling efficiency at 2 / 4 workers (runs/s ÷ n × 1-worker runs/s)", `${v("scaling efficiency, 2 workers")} / ${v("scaling efficiency, 4 workers")}`, ""),
      mdRow("queue", "the same runs in one process (no queue); per-job cost of the queue", `${v("in-process batch (no queue)")} runs/s; +${v("per-job overhead vs in-process")} ms per run`, ""),
    ];
  },
};
