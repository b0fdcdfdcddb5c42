/**
 * Replay of runs that waited for a person: the logged decisions are re-applied where the run
 * took them (approve, edited args, reject, answer); a run still waiting replays up to its wait.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { ContextManager } from "../../src/context/context-manager.js";
import type { LLMResponse } from "../../src/core/llm.js";
import { defineTool, humanInputTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import type { HumanDecision } from "../../src/loop/human.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import { replayRun } from "../../src/runner/replay.js";

const refund = defineTool({ name: "refund", description: "Refund", parameters: z.object({ order: z.string(), amount: z.number().positive() }), needsApproval: true, execute: (a) => `refunded ${a.amount} on ${a.order}` });
const askUser = humanInputTool({ name: "ask_user", description: "Ask", parameters: z.object({ question: z.string() }) });
const finish = defineTool({ name: "finish", description: "Done", parameters: z.object({ summary: z.string() }), execute: ({ summary }) => summary });
const workflow = new Workflow({ name: "refunds", tools: { refund, ask_user: askUser, finish }, terminalTool: "finish", systemPromptTemplate: "You handle refunds." });
const finishing = (m: readonly { role: string; content: unknown }[]): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool: "finish", args: { summary: String(m.filter((x) => x.role === "tool").at(-1)?.content) } }] });
const runner = (store: MemoryRunStore, responses: ConstructorParameters<typeof ScriptedClient>[0]["responses"]) =>
  new WorkflowRunner({ client: new ScriptedClient({ responses }), contextManager: new ContextManager({ budgetTokens: 8192 }), store });

describe("replayRun and a person's decisions", () => {
  const cases: [string, { tool: string; args: Record<string, unknown> }, HumanDecision][] = [
    ["an approval", { tool: "refund", args: { order: "A", amount: 5 } }, { type: "approve" }],
    ["an approval with edited args", { tool: "refund", args: { order: "A", amount: 500 } }, { type: "approve", args: { order: "A", amount: 50 } }],
    ["a rejection", { tool: "refund", args: { order: "A", amount: 5 } }, { type: "reject", reason: "no" }],
    ["an answer", { tool: "ask_user", args: { question: "which?" } }, { type: "answer", answer: "B" }],
  ];
  for (const [name, call, decision] of cases) {
    it(`re-applies ${name} and ends like the run`, async () => {
      const store = new MemoryRunStore();
      const parked = await runner(store, [{ type: "tool_calls", toolCalls: [call] }]).start(workflow, "go", { runId: "r" });
      expect(parked.status).toBe("waiting");
      expect(await replayRun(store, "r", workflow)).toMatchObject({ state: "waiting" });
      await runner(store, []).decide("r", { decision });
      const done = await runner(store, [finishing]).proceed("r", workflow);
      const replay = await replayRun(store, "r", workflow);
      expect(replay.state).toBe("done");
      expect(replay.states).toContain("awaitingHuman");
      expect(done).toMatchObject({ status: "done", result: replay.result });
      expect(replay.messages).toEqual((await store.latest("r"))!.snapshot.context.messages);
    });
  }

  it("re-applies a wait that ran out (maxWaitMs, reject): the runner logged the rejection", async () => {
    const store = new MemoryRunStore();
    let clock = 1_000;
    const timed = (responses: ConstructorParameters<typeof ScriptedClient>[0]["responses"]) =>
      new WorkflowRunner({ client: new ScriptedClient({ responses }), contextManager: new ContextManager({ budgetTokens: 8192 }), store, now: () => clock, maxWaitMs: 10 });
    await timed([{ type: "tool_calls", toolCalls: [{ tool: "refund", args: { order: "A", amount: 5 } }] }]).start(workflow, "go", { runId: "t" });
    clock += 60_000;
    const done = await timed([finishing]).proceed("t", workflow);
    expect(done).toMatchObject({ status: "done", result: expect.stringMatching(/no decision came within 10 ms/) });
    expect((await store.events("t")).filter((e) => e.type === "decision")).toMatchObject([{ decision: { type: "reject" } }]);
    const replay = await replayRun(store, "t", workflow);
    expect(replay.state).toBe("done");
    expect(replay.result).toBe((done as { result: unknown }).result);
  });
});
