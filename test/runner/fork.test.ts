/**
 * Time travel: a fork starts a new run from any earlier commit of another, optionally patched,
 * and goes its own way; the parent's commits and events stay exactly as they were.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { InvalidArgumentError } from "../../src/core/errors.js";
import type { LLMResponse } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import { forkRun } from "../../src/runner/fork.js";
import { WorkflowRunner } from "../../src/runner.js";

const keys: string[] = [];
const ran: unknown[] = [];
const lookup = defineTool({
  name: "lookup",
  description: "Look a fruit up",
  parameters: z.object({ q: z.string() }),
  execute: ({ q }, ctx) => (keys.push(ctx.idempotencyKey), `found ${q}`),
});
const refund = defineTool({
  name: "refund",
  description: "Refund an order",
  parameters: z.object({ order: z.string(), amount: z.number().positive() }),
  needsApproval: (args) => args.amount > 100,
  execute: (args) => (ran.push(args), `refunded ${args.amount} on ${args.order}`),
});
const finish = defineTool({ name: "finish", description: "Done", parameters: z.object({ summary: z.string() }), execute: ({ summary }) => summary });
const workflow = new Workflow({ name: "fruit", tools: { lookup, refund, finish }, terminalTool: "finish", systemPromptTemplate: "You look fruit up." });

const call = (tool: string, args: Record<string, unknown>): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool, args }] });
const userText = (m: WireMessage[]) => String(m.find((x) => x.role === "user")?.content);
const lastTool = (m: WireMessage[]) => String(m.filter((x) => x.role === "tool").at(-1)?.content);
/** Looks up the last word of the user's message, then finishes with `prefix` and what it found. */
const model = (prefix: string) =>
  new ScriptedClient({ responses: [(m) => call("lookup", { q: userText(m).split(" ").at(-1)! }), (m) => call("finish", { summary: `${prefix}${lastTool(m)}` })] });
/** Finishes at once with the last tool result it saw. */
const finisher = () => new ScriptedClient({ responses: [(m) => call("finish", { summary: lastTool(m) })] });
const runnerOn = (store: RunStore, client: ScriptedClient) => new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }), store });
const fileStore = () => new FileRunStore({ dir: mkdtempSync(path.join(tmpdir(), "forge-fork-")) });

/** Each commit of a run: its seq and state. */
async function history(store: RunStore, runId: string): Promise<{ seq: number; state: string; status: string }[]> {
  const last = (await store.latest(runId))!;
  const out = [];
  for (let seq = 1; seq <= last.seq; seq++) {
    const c = (await store.latest(runId, { seq }))!;
    out.push({ seq, state: c.state, status: c.status });
  }
  return out;
}

const withoutRunId = (ctx: { run: { id: string } }) => ({ ...ctx, run: { ...ctx.run, id: "-" } });

describe("forkRun", () => {
  it("a fork from an early commit with a patched message runs to a different end; the parent is unchanged", async () => {
    const store = fileStore();
    await expect(runnerOn(store, model("parent: ")).run(workflow, "find apples", { runId: "parent" })).resolves.toBe("parent: found apples");
    const parentLatest = JSON.stringify(await store.latest("parent"));
    const parentEvents = JSON.stringify(await store.events("parent"));
    const commits = await history(store, "parent");
    expect(commits[0]).toEqual({ seq: 1, state: "inferring", status: "active" });
    expect(commits.at(-1)).toMatchObject({ state: "done", status: "done" });

    const patch = { messages: (m: import("../../src/core/messages.js").Message[]) => m.map((x) => (x.role === "user" ? { ...x, content: "find pears" } : x)) };
    const fork = await runnerOn(store, model("unused")).fork("parent", { at: 1, patch, runId: "fork-1" });
    expect(fork).toEqual({ runId: "fork-1", forkedFrom: { runId: "parent", seq: 1 }, state: "inferring", status: "active" });
    expect(await store.events("fork-1")).toEqual([{ type: "fork", from: { runId: "parent", seq: 1 } }]);
    expect((await store.listRuns()).find((r) => r.runId === "fork-1")).toMatchObject({ seq: 1, workflow: "fruit", state: "inferring", status: "active" });

    await expect(runnerOn(store, model("fork: ")).resume("fork-1", workflow)).resolves.toBe("fork: found pears");
    expect(JSON.stringify(await store.latest("parent"))).toBe(parentLatest);
    expect(JSON.stringify(await store.events("parent"))).toBe(parentEvents);
  });

  it("the fork's first commit is the parent's commit at `at` (but for the run id); a tool in flight gets the fork's key", async () => {
    const store = new MemoryRunStore();
    keys.length = 0;
    await runnerOn(store, model("")).run(workflow, "find plums", { runId: "p" });
    const commits = await history(store, "p");
    for (const { seq, status } of commits.filter((c) => c.status !== "done")) {
      const fork = await forkRun(store, "p", { at: seq, workflow });
      const parent = (await store.latest("p", { seq }))!;
      const first = (await store.latest(fork.runId, { seq: 1 }))!;
      expect(first.snapshot.context.run.id).toBe(fork.runId);
      expect(withoutRunId(first.snapshot.context)).toEqual(withoutRunId(parent.snapshot.context));
      expect(first).toMatchObject({ state: parent.state, status, seq: 1 });
      expect(first.sessionId).toBeUndefined();
    }
    const running = commits.find((c) => c.state === "executingTools.running")!;
    const fork = await forkRun(store, "p", { at: running.seq, runId: "p-tool" });
    const child = (await store.latest("p-tool"))!.snapshot.children?.executeTool?.snapshot as { input: Record<string, unknown> };
    expect(child.input).toMatchObject({ runId: "p-tool", idempotencyKey: "p-tool:1:0" });
    keys.length = 0;
    await expect(runnerOn(store, finisher()).resume(fork.runId, workflow)).resolves.toBe("found plums");
    expect(keys).toEqual(["p-tool:1:0"]);
  });

  it("refuses a final commit, naming the nearest earlier one to fork from; and bad options", async () => {
    const store = new MemoryRunStore();
    await runnerOn(store, model("")).run(workflow, "find figs", { runId: "done-run" });
    const last = (await store.latest("done-run"))!;
    const error = await forkRun(store, "done-run", { at: last.seq }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(new RegExp(`commit ${last.seq} of run done-run is final \\(done\\).*nearest earlier commit a fork can start from is ${last.seq - 1} \\(executingTools.running\\)`));
    await expect(forkRun(store, "done-run", { at: last.seq + 1 })).rejects.toThrow(/has commits 1 to/);
    await expect(forkRun(store, "done-run", { at: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(forkRun(store, "done-run", { at: 1, runId: "done-run" })).rejects.toThrow(/an id of its own/);
    await expect(forkRun(store, "done-run", { at: 1, runId: "../x" })).rejects.toBeInstanceOf(InvalidArgumentError);
    await forkRun(store, "done-run", { at: 1, runId: "taken" });
    await expect(forkRun(store, "done-run", { at: 1, runId: "taken" })).rejects.toThrow(/already exists/);
    await expect(forkRun(store, "done-run", { at: 1, patch: { messages: () => "nope" as never } })).rejects.toThrow(/patch.messages/);
    await expect(forkRun(store, "done-run", { at: 1, patch: { messages: (m) => [...m, { role: "wizard" } as never] } })).rejects.toThrow(/patched state is malformed/);
    await expect(forkRun(store, "nobody", { at: 1 })).rejects.toThrow(/no run nobody/);
  });

  it("a fork of a waiting run at its awaitingHuman commit waits with the same requests; patched args are checked and run as patched", async () => {
    const store = fileStore();
    ran.length = 0;
    const client = () => new ScriptedClient({ responses: [call("refund", { order: "B2", amount: 500 }), (m) => call("finish", { summary: lastTool(m) })] });
    const outcome = await runnerOn(store, client()).start(workflow, "refund B2", { runId: "waits" });
    expect(outcome.status).toBe("waiting");
    const requests = outcome.status === "waiting" ? outcome.requests : [];
    const waitingAt = (await store.latest("waits"))!;
    expect(waitingAt).toMatchObject({ state: "awaitingHuman", status: "waiting" });
    // The parent is decided meanwhile; the fork from before the decision is asked afresh.
    await runnerOn(store, client()).decide("waits", { decision: { type: "approve" } });

    const fork = await forkRun(store, "waits", { at: waitingAt.seq, runId: "waits-fork" });
    expect(fork).toMatchObject({ state: "awaitingHuman", status: "waiting" });
    const same = await runnerOn(store, client()).proceed("waits-fork", workflow);
    expect(same).toEqual({ status: "waiting", runId: "waits-fork", requests });

    const callId = requests[0]!.callId;
    await expect(forkRun(store, "waits", { at: waitingAt.seq, patch: { args: { [callId]: { order: "B2", amount: -5 } } } })).rejects.toThrow(/amount/);
    await expect(forkRun(store, "waits", { at: waitingAt.seq, patch: { args: { nope: { order: "B2", amount: 5 } } } })).rejects.toThrow(new RegExp(`no call nope.*${callId} \\(refund\\)`));
    const edited = await forkRun(store, "waits", { at: waitingAt.seq, runId: "waits-edit", patch: { args: { [callId]: { order: "B2", amount: 150 } } } });
    const r = runnerOn(store, finisher());
    await r.decide(edited.runId, { decision: { type: "approve" } });
    await expect(r.proceed(edited.runId, workflow)).resolves.toMatchObject({ status: "done", result: "refunded 150 on B2" });
    expect(ran).toEqual([{ order: "B2", amount: 150 }]);
    // The parent went nowhere: still waiting, its decision logged, nothing ran for it.
    expect(await store.latest("waits")).toMatchObject({ state: "awaitingHuman", status: "waiting" });
  });

  it.each([
    ["MemoryRunStore", () => new MemoryRunStore()],
    ["FileRunStore", fileStore],
    ["SqlRunStore", () => new SqlRunStore({ url: "file:" + path.join(mkdtempSync(path.join(tmpdir(), "forge-fork-sql-")), "runs.db") })],
  ] as const)("%s stores and returns the fork event", async (_name, make) => {
    const store = make();
    try {
      await runnerOn(store, model("")).run(workflow, "find kiwis", { runId: "k" });
      const fork = await forkRun(store, "k", { at: 2 });
      expect(await store.events(fork.runId)).toEqual([{ type: "fork", from: { runId: "k", seq: 2 } }]);
      await expect(runnerOn(store, model("again: ")).resume(fork.runId, workflow)).resolves.toMatch(/found kiwis$/);
    } finally {
      await (store as { close?: () => Promise<void> }).close?.();
    }
  });
});
