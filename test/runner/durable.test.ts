/**
 * WorkflowRunner with a run store: a checkpoint after every committed step (inside a batch too),
 * resume by id, sessions, locks, and store failures that fail the run loudly.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { BackendError, InvalidArgumentError, RunLockedError, StoreError } from "../../src/core/errors.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { Checkpoint, Commit, CommitRecord, RunStore } from "../../src/persistence/run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import { Workflow } from "../../src/core/workflow.js";
import { calls, compactingEveryIteration, correctNext, loopWorkflow, PolicyClient, scriptThenCorrect, turnOf, type Policy, type ToolLogEntry } from "../support/loop-fixtures.js";

const vars = { promptVars: { company: "Acme" } };
const freshStore = () => new FileRunStore({ dir: mkdtempSync(path.join(tmpdir(), "forge-durable-")) });

function runner(store: RunStore, policy: Policy = scriptThenCorrect([])) {
  return new WorkflowRunner({ client: new PolicyClient(policy), contextManager: compactingEveryIteration(), store });
}

/** A store that remembers the checkpoint after every commit. */
class RecordingStore extends FileRunStore {
  readonly saved: Checkpoint[] = [];
  override async commit(commit: Commit): Promise<void> {
    await super.commit(commit);
    this.saved.push((await this.latest(commit.runId))!);
  }
}

describe("runs with a store", () => {
  it("checkpoints every committed tool result of a multi-call batch, before the next call starts", async () => {
    const store = new RecordingStore({ dir: mkdtempSync(path.join(tmpdir(), "forge-durable-")) });
    const runId = "batch-run";
    // fetch_a and extra in one batch; when extra starts, fetch_a's result must already be on disk.
    let seenOnDisk: string[] | undefined;
    class Log extends Array<ToolLogEntry> {
      override push(...entries: ToolLogEntry[]): number {
        if (entries.some((e) => e.tool === "extra")) {
          seenOnDisk = store.saved.at(-1)?.snapshot.context.batch?.done.map((d) => d.tool);
        }
        return super.push(...entries);
      }
    }
    const { workflow, log } = loopWorkflow(new Log());
    const r = runner(store, scriptThenCorrect([calls(["fetch_a", { n: 1 }], ["extra", { n: 2 }])]));
    await expect(r.run(workflow, "go", { ...vars, runId })).resolves.toEqual({ done: "all done" });
    expect(log.map((e) => e.tool)).toEqual(["fetch_a", "extra", "fetch_b", "finish"]);
    expect(seenOnDisk).toEqual(["fetch_a"]);
    const seqs = store.saved.map((c) => c.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(store.saved.at(-1)).toMatchObject({ status: "done", state: "done" });
    // the log explains the run: every model answer, every tool outcome, the end
    const events = await store.events(runId);
    expect(events.filter((e) => e.type === "response")).toHaveLength(3);
    expect(events.filter((e) => e.type === "toolEnd").map((e) => (e as { tool: string }).tool)).toEqual(["fetch_a", "extra", "fetch_b", "finish"]);
    expect(events.at(-1)).toEqual({ type: "end", state: "done" });
  });

  it("resumes a stopped run by id without re-running a finished tool, and unlocks it when done", async () => {
    const store = freshStore();
    const { workflow, log } = loopWorkflow();
    const runId = "stop-me";
    let stopped = false;
    const first: WorkflowRunner = new WorkflowRunner({
      client: new PolicyClient(scriptThenCorrect([])),
      contextManager: compactingEveryIteration(),
      store,
      onStateChange: (state, ctx) => {
        if (!stopped && state === "inferring" && ctx.steps.completed.length === 1) {
          stopped = true;
          first.stop("simulated crash");
        }
      },
    });
    await expect(first.run(workflow, "go", { ...vars, runId })).rejects.toMatchObject({ code: "FORGE_WORKFLOW_CANCELLED" });
    expect(log.map((e) => e.tool)).toEqual(["fetch_a"]);
    expect((await store.latest(runId))?.status).toBe("active");
    await expect(runner(store).resume(runId, workflow)).resolves.toEqual({ done: "all done" });
    expect(log.map((e) => e.tool)).toEqual(["fetch_a", "fetch_b", "finish"]);
    expect(await store.latest(runId)).toMatchObject({ status: "done", state: "done" });
    const lock = await store.lock(runId);
    await lock.release();
  });

  it("keeps a session's turns in order when the hosts running them have clocks minutes apart", async () => {
    const store = freshStore();
    const { workflow } = loopWorkflow();
    // Each turn answered from its own question on (the history before it is the earlier turns').
    const policy: Policy = (messages) => correctNext(messages.slice(messages.findLastIndex((m) => m.role === "user")));
    const skewed = (offsetMs: number) => new WorkflowRunner({ client: new PolicyClient(policy), contextManager: compactingEveryIteration(), store, now: () => Date.now() + offsetMs });
    // Ahead, then behind, then right: without the order kept, turn 3 would continue turn 1's conversation.
    await skewed(300_000).run(workflow, "first", { ...vars, sessionId: "skew" });
    await skewed(-300_000).run(workflow, "second", { ...vars, sessionId: "skew" });
    await skewed(0).run(workflow, "third", { ...vars, sessionId: "skew" });
    const history = await store.history("skew");
    expect(history.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["first", "second", "third"]);
    const [session] = await store.listSessions();
    const created = session!.runs.map((r) => r.createdAt);
    expect(created).toEqual([...created].sort((a, b) => a - b));
  });

  it("continues a session turn after turn; an unfinished turn must be resumed first", async () => {
    const store = freshStore();
    const { workflow } = loopWorkflow();
    const seen: number[] = [];
    // The model sees the whole conversation: the number of earlier assistant turns grows per turn.
    const policy: Policy = (messages) => (seen.push(turnOf(messages)), correctNext(messages.slice(messages.findLastIndex((m) => m.role === "user"))));
    await runner(store, policy).run(workflow, "first question", { ...vars, sessionId: "chat" });
    await runner(store, policy).run(workflow, "second question", { ...vars, sessionId: "chat" });
    expect(seen[3]).toBeGreaterThan(seen[0]!); // turn 2 starts with turn 1's history
    const history = await store.history("chat");
    expect(history.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["first question", "second question"]);
    const sessions = await store.listSessions();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.runs).toHaveLength(2);

    // A turn stopped half-way blocks the next one until it is resumed.
    const halfway: WorkflowRunner = new WorkflowRunner({
      client: new PolicyClient(policy),
      contextManager: compactingEveryIteration(),
      store,
      onStateChange: (state) => state === "executingTools.running" && halfway.stop("crash"),
    });
    await expect(halfway.run(workflow, "third", { ...vars, sessionId: "chat" })).rejects.toMatchObject({ code: "FORGE_WORKFLOW_CANCELLED" });
    const blocked = await runner(store, policy).run(workflow, "fourth", { ...vars, sessionId: "chat" }).catch((e: unknown) => e);
    expect(blocked).toBeInstanceOf(InvalidArgumentError);
    expect((blocked as Error).message).toMatch(/did not finish: resume it first/);
    const unfinished = (await store.listRuns({ sessionId: "chat" })).at(-1)!;
    // Starting that very turn again (a second worker given the same job) is a taken run id, which
    // the queue answers by going on from the store, not "the last turn did not finish".
    const again = await runner(store, policy).run(workflow, "third", { ...vars, sessionId: "chat", runId: unfinished.runId }).catch((e: unknown) => e);
    expect(again).toMatchObject({ argument: "runId", message: expect.stringMatching(/already exists in the store/) });
    await runner(store, policy).resume(unfinished.runId, workflow);
    await runner(store, policy).run(workflow, "fourth", { ...vars, sessionId: "chat" });
    expect((await store.history("chat")).filter((m) => m.role === "user").map((m) => m.content)).toEqual(["first question", "second question", "third", "fourth"]);
  });

  it("refuses a second live runner on the same run, a reused run id, and sessions without a store", async () => {
    const store = freshStore();
    const { workflow } = loopWorkflow();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let asked = false;
    const slow: Policy = async (messages) => ((asked = true), await gate, correctNext(messages));
    const busy = runner(store, slow).run(workflow, "go", { ...vars, runId: "shared" });
    await vi.waitFor(() => expect(asked).toBe(true), { timeout: 30_000, interval: 5 }); // the run holds its lease by the time it asks the model
    await expect(runner(store).resume("shared", workflow)).rejects.toBeInstanceOf(RunLockedError);
    release();
    await busy;
    await expect(runner(store).run(workflow, "go", { ...vars, runId: "shared" })).rejects.toThrow(/already exists in the store/);
    const plain = new WorkflowRunner({ client: new PolicyClient(scriptThenCorrect([])), contextManager: compactingEveryIteration() });
    await expect(plain.run(workflow, "go", { ...vars, sessionId: "s" })).rejects.toThrow(/sessions live in a run store/);
    await expect(plain.resume("shared", workflow)).rejects.toThrow(/needs a runner with a store/);
    await expect(runner(store).resume("nope", workflow)).rejects.toBeInstanceOf(StoreError);
  });

  it("resuming a corrupt checkpoint, another workflow's or another version's is a typed error that keeps the run and its lock free", async () => {
    const store = freshStore();
    const { workflow } = loopWorkflow();
    await runner(store).run(workflow, "go", { ...vars, runId: "kept" });
    const file = path.join(store.dir, "runs", "kept", "log.jsonl");
    const good = readFileSync(file, "utf8");
    const other = new Workflow({ name: "other", tools: workflow.tools, requiredSteps: ["fetch_a"], terminalTool: "finish", systemPromptTemplate: "x" });
    await expect(runner(store).resume("kept", other)).rejects.toMatchObject({ code: "FORGE_SNAPSHOT" });
    // The run's base commit (its first line) rewritten by another machine version.
    const lines = good.split("\n");
    const base = JSON.parse(lines[0]!) as CommitRecord;
    base.snapshot!.context.machineVersion = 1;
    writeFileSync(file, [JSON.stringify(base), ...lines.slice(1)].join("\n"));
    await expect(runner(store).resume("kept", workflow)).rejects.toThrow(/written by machine version 1/);
    writeFileSync(file, [lines[0]!.slice(0, 100), ...lines.slice(1)].join("\n"));
    const corrupt = await runner(store).resume("kept", workflow).catch((e: unknown) => e);
    expect(corrupt).toBeInstanceOf(StoreError);
    expect(corrupt).toMatchObject({ code: "FORGE_CORRUPT_RECORD", runId: "kept", location: `${file}:1` });
    // nothing was lost: the good checkpoint resumes (to its finished result), and no lock was left behind
    writeFileSync(file, good);
    await expect(runner(store).resume("kept", workflow)).resolves.toEqual({ done: "all done" });
  });

  it("a store that cannot write fails the run with StoreError; the last good checkpoint stays", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "forge-durable-"));
    class FullDisk extends FileRunStore {
      writes = 0;
      override async commit(commit: Commit): Promise<void> {
        if (++this.writes > 3) throw new StoreError(`disk full writing run ${commit.runId}`, commit.runId, "test");
        return super.commit(commit);
      }
    }
    const store = new FullDisk({ dir });
    const { workflow, log } = loopWorkflow();
    const error = await runner(store).run(workflow, "go", { ...vars, runId: "full" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toContain("disk full");
    const kept = await new FileRunStore({ dir }).latest("full");
    expect(kept?.seq).toBe(3);
    // nothing ran past the failed write's step
    expect(log.length).toBeLessThanOrEqual(2);
    // and the run resumes from what was kept
    await expect(runner(new FileRunStore({ dir })).resume("full", workflow)).resolves.toEqual({ done: "all done" });
  });

  it("retries a failed run from its last state before the failure, without re-running a finished tool; refuses runs that did not fail", async () => {
    const store = freshStore();
    const { workflow, log } = loopWorkflow();
    // The backend goes down after two answers: the run fails in its third inference.
    let calls = 0;
    const down: Policy = (messages) => {
      if (++calls > 2) throw new BackendError(503, "model unloaded");
      return correctNext(messages);
    };
    const failed = await runner(store, down).run(workflow, "go", { ...vars, runId: "flaky" }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: "FORGE_BACKEND" });
    expect(await store.latest("flaky")).toMatchObject({ state: "failed", status: "failed" });
    const ranBefore = log.map((e) => e.key);
    await expect(runner(store).retry("flaky", workflow)).resolves.toEqual({ done: "all done" });
    expect(await store.latest("flaky")).toMatchObject({ state: "done", status: "done" });
    // Only new calls ran: nothing that had finished before the failure.
    expect(log.slice(ranBefore.length).map((e) => e.key).filter((k) => ranBefore.includes(k))).toEqual([]);
    await expect(runner(store).retry("flaky", workflow)).rejects.toThrow(/is done; only a failed or cancelled run can be retried/);
    await expect(runner(store).retry("nope", workflow)).rejects.toBeInstanceOf(StoreError);
  });
});
