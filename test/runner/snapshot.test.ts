import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { SnapshotError } from "../../src/core/index.js";
import { MACHINE_VERSION } from "../../src/loop/context.js";
import { WorkflowRunner } from "../../src/runner.js";
import type { PersistedRun } from "../../src/persistence/snapshot.js";
import { compactingEveryIteration, loopWorkflow, PolicyClient, scriptThenCorrect } from "../support/loop-fixtures.js";
import { builtModule } from "../support/cli.js";

const vars = { promptVars: { company: "Acme" } };
const runnerFor = (onStateChange?: (state: string) => void) =>
  new WorkflowRunner({
    client: new PolicyClient(scriptThenCorrect([])),
    contextManager: compactingEveryIteration(),
    ...(onStateChange ? { onStateChange } : {}),
  });

/** Run until the `n`-th state entry, snapshot through JSON, stop the runner. */
async function interruptedAt(n: number) {
  const { workflow, log } = loopWorkflow();
  let snap: PersistedRun | undefined;
  let seen = 0;
  const runner: WorkflowRunner = runnerFor(() => {
    if (seen++ === n) {
      snap = JSON.parse(JSON.stringify(runner.snapshot())) as PersistedRun;
      runner.stop("migrating");
    }
  });
  await runner.run(workflow, "go", vars).catch(() => undefined);
  if (!snap) throw new Error(`run ended before state entry ${n}`);
  return { snap, workflow, log };
}

describe("snapshots", () => {
  it.each([0, 1, 2, 3, 4, 5, 7, 8])("snapshot at state entry %i → JSON → resume reaches the same result", async (n) => {
    const { snap, workflow, log } = await interruptedAt(n);
    expect(snap.context.machineVersion).toBe(MACHINE_VERSION);
    const before = log.length;
    await expect(runnerFor().resume(snap, workflow)).resolves.toEqual({ done: "all done" });
    // finished tool results live in the snapshot: at most the in-flight call runs again
    expect(log.length - before).toBeLessThanOrEqual(3 - Math.max(0, before - 1));
    // a tool in flight at snapshot time runs again under the same idempotency key
    expect(new Set(log.filter((e) => e.tool === "finish").map((e) => e.key)).size).toBe(1);
  });

  it("a finished run's snapshot resumes straight to its result", async () => {
    const { workflow } = loopWorkflow();
    const runner = runnerFor();
    await runner.run(workflow, "go", vars);
    const snap = JSON.parse(JSON.stringify(runner.snapshot())) as PersistedRun;
    await expect(runnerFor().resume(snap, workflow)).resolves.toEqual({ done: "all done" });
  });

  it("refuses a snapshot from another machine version", async () => {
    const { snap, workflow } = await interruptedAt(1);
    snap.context.machineVersion = MACHINE_VERSION + 1;
    await expect(runnerFor().resume(snap, workflow)).rejects.toThrow(SnapshotError);
    await expect(runnerFor().resume(snap, workflow)).rejects.toThrow(/machine version/);
  });

  it("refuses a snapshot whose in-flight service cannot be resolved (XState would hang)", async () => {
    const { snap, workflow } = await interruptedAt(1);
    const [id] = Object.keys(snap.children ?? {});
    expect(id).toBeDefined();
    snap.children![id!]!.src = "legacyInfer";
    await expect(runnerFor().resume(snap, workflow)).rejects.toThrow(/cannot resolve/);
  });

  it("refuses a snapshot of another workflow, or something that is not a snapshot", async () => {
    const { snap } = await interruptedAt(1);
    const other = loopWorkflow().workflow;
    const renamed = Object.assign(Object.create(Object.getPrototypeOf(other)), other, { name: "other" });
    await expect(runnerFor().resume(snap, renamed)).rejects.toThrow(/belongs to workflow/);
    await expect(runnerFor().resume({ nope: true } as never, other)).rejects.toThrow(SnapshotError);
  });

  it("resumes in another process without re-running finished tools", async () => {
    // entry 5 = the second tool is running: fetch_a is done and in context
    const { snap, log } = await interruptedAt(5);
    expect(log.map((e) => e.tool)).toEqual(["fetch_a", "fetch_b"]);
    const dir = mkdtempSync(path.join(tmpdir(), "forge-snap-"));
    const file = path.join(dir, "run.json");
    writeFileSync(file, JSON.stringify(snap));
    const { stdout } = await promisify(execFile)(process.execPath, [builtModule("test/fixtures/resume-child.ts"), file]);
    const child = JSON.parse(stdout) as { result: unknown; log: string[] };
    expect(child.result).toEqual({ done: "all done" });
    // fetch_b was in flight when the snapshot was taken: it is re-run (same idempotency key); fetch_a is not
    expect(child.log).toEqual(["fetch_b", "finish"]);
  }, 120_000);
});

describe("snapshot size", () => {
  it("persists the in-flight service's history as a reference to context.messages", async () => {
    const { snap } = await interruptedAt(1); // inferring: the infer input would repeat the history
    const [child] = Object.values(snap.children ?? {});
    expect((child as { snapshot: { input: { messages: unknown } } }).snapshot.input.messages).toBe("$context.messages");
    expect(JSON.stringify(snap).split('"role":"system"').length - 1).toBe(1);
  });
});

describe("stopped runs", () => {
  it("snapshot() after stop() is the snapshot from just before stopping, and it resumes", async () => {
    const { workflow } = loopWorkflow();
    let seen = 0;
    const runner: WorkflowRunner = runnerFor(() => {
      if (seen++ === 1) runner.stop("pause");
    });
    await expect(runner.run(workflow, "go", vars)).rejects.toThrow(/pause/);
    const snap = JSON.parse(JSON.stringify(runner.snapshot())) as PersistedRun;
    expect(snap.status).toBe("active");
    await expect(runnerFor().resume(snap, workflow)).resolves.toEqual({ done: "all done" });
  });

  it("refuses a stopped snapshot, or an active one waiting on a service it does not carry", async () => {
    const { snap, workflow } = await interruptedAt(1);
    await expect(runnerFor().resume({ ...snap, status: "stopped" }, workflow)).rejects.toThrow(/only an active or finished run/);
    await expect(runnerFor().resume({ ...snap, children: {} }, workflow)).rejects.toThrow(/carries no "infer" service/);
  });

  it("one run at a time per runner", async () => {
    const { workflow } = loopWorkflow();
    const runner = runnerFor();
    const first = runner.run(workflow, "go", vars);
    await expect(runner.run(workflow, "again", vars)).rejects.toThrow(/already active/);
    await expect(first).resolves.toEqual({ done: "all done" });
  });
});
