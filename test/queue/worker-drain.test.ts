/**
 * `forge-ts worker --drain-ms`: on SIGTERM a worker process waits that long for the jobs in
 * flight, then gives up (exit 1); a job that finishes in time is finished (exit 0).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRunQueue, type RunQueue } from "../../src/queue/run-queue.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";
import { until } from "../support/until.js";
import { cliArgs } from "../support/cli.js";

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
let redis: TestRedis;
let queue: RunQueue;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  queue = createRunQueue({ redis: redis.url });
  dir = mkdtempSync(path.join(tmpdir(), "forge-drain-"));
}, 120_000);

afterAll(async () => {
  // A test that failed before its worker exited leaves it running: never outlive the file.
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await queue?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A worker whose tools take `toolMs`; SIGTERM once its first tool started. Resolves with its exit. */
async function stopMidRun(drainMs: number, toolMs: number, runId: string): Promise<{ code: number | null; stderr: string }> {
  const toolLog = path.join(dir, `${runId}.jsonl`);
  const child = spawn(
    process.execPath,
    cliArgs("src/cli/main.ts", "worker", "--redis", redis.url, "--workflow", "test/fixtures/queue-workflow.ts", "--backend", "sim", "--store", path.join(dir, runId), "--drain-ms", String(drainMs)),
    { env: { ...env, NO_COLOR: "1", FORGE_TOOL_LOG: toolLog, FORGE_TOOL_MS: String(toolMs) } },
  );
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await queue.enqueueRun({ workflow: "notes", runId, text: "Remember the milk." });
  // This run's tool (the worker may also take an earlier test's job, left behind by a worker that gave up).
  const started = () => readFileSync(toolLog, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { event: string; key: string });
  await until(() => existsSync(toolLog) && started().some((e) => e.event === "start" && e.key.startsWith(`${runId}:`)), 30_000);
  child.kill("SIGTERM");
  return { code: await exited, stderr };
}

describe("forge-ts worker --drain-ms", { timeout: 120_000 }, () => {
  it("gives up on a job that outlasts it: exit 1, saying so", async () => {
    // The tool takes longer than the test may: the worker's exit is its giving up, not the job's end.
    const { code, stderr } = await stopMidRun(300, 600_000, "drain-short");
    expect(code).toBe(1);
    expect(stderr).toContain("not closed cleanly within 300 ms");
    expect((await queue.job("notes", "drain-short"))?.state).not.toBe("completed");
  });

  it("waits for a job that finishes in time: exit 0", async () => {
    const { code, stderr } = await stopMidRun(30_000, 300, "drain-long");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect((await queue.job("notes", "drain-long"))?.state).toBe("completed");
  });
});
