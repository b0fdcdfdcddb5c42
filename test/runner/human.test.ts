/**
 * A person in the loop: guarded tools wait in `awaitingHuman`, durably (`waiting` in the store),
 * decisions come from any process (recorded in the log, idempotent, checked), approved calls
 * run exactly as approved, rejected ones never run and the model hears why.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { HumanDecisionError, HumanWaitTimeoutError, RunWaitingError } from "../../src/core/errors.js";
import type { LLMResponse } from "../../src/core/llm.js";
import { defineTool, humanInputTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import { readableRuns } from "../support/readable-runs.js";

const ran: { tool: string; args: unknown }[] = [];
const refund = defineTool({
  name: "refund",
  description: "Refund an order",
  parameters: z.object({ order: z.string(), amount: z.number().positive() }),
  needsApproval: (args) => args.amount > 100,
  execute: (args) => (ran.push({ tool: "refund", args }), `refunded ${args.amount} on ${args.order}`),
});
const askUser = humanInputTool({ name: "ask_user", description: "Ask the user", parameters: z.object({ question: z.string() }) });
const finish = defineTool({ name: "finish", description: "Done", parameters: z.object({ summary: z.string() }), execute: ({ summary }) => summary });
const workflow = new Workflow({ name: "refunds", tools: { refund, ask_user: askUser, finish }, terminalTool: "finish", systemPromptTemplate: "You handle refunds." });

const call = (tool: string, args: Record<string, unknown>): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool, args }] });
/** Calls the tool, then finishes with the last tool result it saw as the summary. */
const model = (first: LLMResponse) =>
  new ScriptedClient({
    responses: [first, (messages) => call("finish", { summary: String(messages.filter((m) => m.role === "tool").at(-1)?.content) })],
  });
const store = () => new FileRunStore({ dir: mkdtempSync(path.join(tmpdir(), "forge-human-")) });
const runnerWith = (client: ScriptedClient, extra: Partial<ConstructorParameters<typeof WorkflowRunner>[0]> = {}) =>
  new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }), ...extra });

describe("human in the loop", () => {
  it("a call under the approval threshold runs without asking", async () => {
    ran.length = 0;
    const r = runnerWith(model(call("refund", { order: "A1", amount: 20 })));
    await expect(r.run(workflow, "refund A1")).resolves.toBe("refunded 20 on A1");
  });

  it("waits durably, is approved from another runner, runs once, finishes", async () => {
    ran.length = 0;
    const s = store();
    const first = runnerWith(model(call("refund", { order: "B2", amount: 500 })), { store: s });
    const outcome = await first.start(workflow, "refund B2", { runId: "r-approve" });
    expect(outcome).toMatchObject({ status: "waiting", runId: "r-approve", requests: [{ tool: "refund", kind: "approval", args: { order: "B2", amount: 500 } }] });
    expect(ran).toEqual([]);
    expect(await s.latest("r-approve")).toMatchObject({ status: "waiting", state: "awaitingHuman" });
    expect(readableRuns(await s.listRuns()).map((r) => r.status)).toEqual(["waiting"]);
    const callId = outcome.status === "waiting" ? outcome.requests[0]!.callId : "";

    const other = runnerWith(model(call("finish", { summary: "unused" })), { store: s });
    await expect(other.decide("r-approve", { decision: { type: "approve" } })).resolves.toMatchObject({ callId, tool: "refund", duplicate: false, pending: [] });
    // A retried webhook: the same decision again is a no-op; a different one is refused.
    await expect(other.decide("r-approve", { callId, decision: { type: "approve" } })).resolves.toMatchObject({ duplicate: true });
    await expect(other.decide("r-approve", { callId, decision: { type: "reject", reason: "no" } })).rejects.toMatchObject({ code: "FORGE_HUMAN_DECISION", problem: "already_decided" });

    const resumed = runnerWith(model(call("refund", { order: "never", amount: 1 })), { store: s });
    // The resumed runner's model is asked once, for the step after the approved call.
    (resumed.options.client as ScriptedClient).requests.length = 0;
    const done = await runnerWith(new ScriptedClient({ responses: [(m) => call("finish", { summary: String(m.filter((x) => x.role === "tool").at(-1)?.content) })] }), { store: s }).proceed("r-approve", workflow);
    expect(done).toEqual({ status: "done", runId: "r-approve", result: "refunded 500 on B2" });
    expect(ran).toEqual([{ tool: "refund", args: { order: "B2", amount: 500 } }]);
    expect((await s.events("r-approve")).filter((e) => e.type === "decision")).toHaveLength(1);
  });

  it("a rejected call never runs; the model hears the reason on the tool channel", async () => {
    ran.length = 0;
    const r = runnerWith(model(call("refund", { order: "C3", amount: 900 })), { onHumanRequest: () => ({ type: "reject", reason: "over the limit" }) });
    const result = await r.run(workflow, "refund C3");
    expect(result).toMatch(/^\[Rejected\] A person declined the call to "refund": over the limit\./);
    expect(ran).toEqual([]);
  });

  it("an approval with edited args runs the edited call; invalid edits are refused", async () => {
    ran.length = 0;
    const r = runnerWith(model(call("refund", { order: "D4", amount: 700 })), { onHumanRequest: () => ({ type: "approve", args: { order: "D4", amount: 150 } }) });
    await expect(r.run(workflow, "refund D4")).resolves.toBe("refunded 150 on D4");
    expect(ran).toEqual([{ tool: "refund", args: { order: "D4", amount: 150 } }]);
    const bad = runnerWith(model(call("refund", { order: "D4", amount: 700 })), { onHumanRequest: () => ({ type: "approve", args: { order: "D4", amount: -1 } }) });
    await expect(bad.run(workflow, "refund D4")).rejects.toBeInstanceOf(HumanDecisionError);
  });

  it("a human-input tool's result is the person's answer", async () => {
    const r = runnerWith(model(call("ask_user", { question: "Which order?" })), { onHumanRequest: (req) => ({ type: "answer", answer: `E5 (you asked: ${String(req.args.question)})` }) });
    await expect(r.run(workflow, "refund my order")).resolves.toBe("E5 (you asked: Which order?)");
  });

  it("run() without a handler rejects with RunWaitingError naming the requests", async () => {
    const r = runnerWith(model(call("ask_user", { question: "Which order?" })));
    const error = await r.run(workflow, "refund").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunWaitingError);
    expect((error as RunWaitingError).requests).toMatchObject([{ tool: "ask_user", kind: "input", args: { question: "Which order?" } }]);
  });

  it("maxWaitMs: a wait past it rejects the call, or fails the run", async () => {
    let clock = 1_000;
    const now = () => clock;
    const s = store();
    const waiting = runnerWith(model(call("refund", { order: "F6", amount: 300 })), { store: s, now, maxWaitMs: 60_000 });
    await waiting.start(workflow, "refund F6", { runId: "r-wait" });
    clock += 61_000;
    const later = runnerWith(new ScriptedClient({ responses: [(m) => call("finish", { summary: String(m.filter((x) => x.role === "tool").at(-1)?.content) })] }), { store: s, now, maxWaitMs: 60_000 });
    await expect(later.proceed("r-wait", workflow)).resolves.toMatchObject({ status: "done", result: expect.stringMatching(/no decision came within 60000 ms/) });
  });

  it("maxWaitMs with onWaitTimeout fail: the run fails with HumanWaitTimeoutError", async () => {
    let clock = 1_000;
    const now = () => clock;

    // Asked in-process, nobody answers; the clock moves past maxWaitMs and the timer fails the run.
    const nobody = () => ((clock += 10), new Promise<never>(() => undefined));
    const failing = runnerWith(model(call("refund", { order: "F7", amount: 300 })), { now, maxWaitMs: 5, onWaitTimeout: "fail", onHumanRequest: nobody });
    await expect(failing.run(workflow, "refund F7")).rejects.toBeInstanceOf(HumanWaitTimeoutError);
  });
});
