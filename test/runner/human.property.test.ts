/**
 * Properties of human in the loop, on the real machine and runner (fast-check):
 * - a guarded call never executes without an approve; a rejected call never executes;
 * - a snapshot taken while waiting round-trips through JSON and resumes waiting, asking the same;
 * - any interleaving of decisions, duplicate decisions and restarts (new runners resuming from
 *   the store) gives the same run as deciding in-process: the same tools ran, with the same args,
 *   and the same result.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { ContextManager } from "../../src/context/context-manager.js";
import type { LLMResponse } from "../../src/core/llm.js";
import { defineTool, humanInputTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import type { HumanDecision, HumanRequest } from "../../src/loop/human.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { WorkflowRunner, type RunOutcome } from "../../src/runner.js";

type Kind = "guarded" | "free" | "ask";
type Plan = { batches: Kind[][]; verdicts: ("approve" | "edit" | "reject")[] };

function setup() {
  const ran: string[] = [];
  const args = z.object({ n: z.number().int() });
  const guarded = defineTool({ name: "guarded", description: "needs approval", parameters: args, needsApproval: true, execute: ({ n }) => (ran.push(`guarded:${n}`), `g${n}`) });
  const free = defineTool({ name: "free", description: "runs freely", parameters: args, execute: ({ n }) => (ran.push(`free:${n}`), `f${n}`) });
  const ask = humanInputTool({ name: "ask", description: "asks a person", parameters: args });
  const finish = defineTool({ name: "finish", description: "done", parameters: z.object({ log: z.string() }), execute: ({ log }) => log });
  const workflow = new Workflow({ name: "hitl-prop", tools: { guarded, free, ask, finish }, terminalTool: "finish", systemPromptTemplate: "Test." });
  return { ran, workflow };
}

/** The model: each batch as planned (call n = a global counter), then finish with every tool result it saw. */
function model(plan: Plan): ScriptedClient {
  let n = 0;
  const responses: LLMResponse[] = plan.batches.map((batch) => ({ type: "tool_calls", toolCalls: batch.map((tool) => ({ tool, args: { n: n++ } })) }));
  return new ScriptedClient({
    responses: [
      ...responses,
      (messages) => ({ type: "tool_calls", toolCalls: [{ tool: "finish", args: { log: messages.filter((m) => m.role === "tool").map((m) => String(m.content).slice(0, 24)).join("|") } }] }),
    ],
  });
}

/** The person: a verdict per call number; questions are answered with the number doubled. */
function person(plan: Plan, request: HumanRequest): HumanDecision {
  const n = request.args.n as number;
  if (request.kind === "input") return { type: "answer", answer: n * 2 };
  const verdict = plan.verdicts[n % plan.verdicts.length]!;
  return verdict === "approve" ? { type: "approve" } : verdict === "edit" ? { type: "approve", args: { n: n + 1000 } } : { type: "reject", reason: `no to ${n}` };
}

const contextManager = () => new ContextManager({ budgetTokens: 100_000 });
const maxIterations = 50;
const planArb = fc.record({
  batches: fc.array(fc.array(fc.constantFrom<Kind>("guarded", "free", "ask"), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
  verdicts: fc.array(fc.constantFrom("approve" as const, "edit" as const, "reject" as const), { minLength: 1, maxLength: 4 }),
});

describe("human in the loop: properties", () => {
  it("guarded calls run only as approved; rejected ones never run (in-process decisions)", async () => {
    await fc.assert(
      fc.asyncProperty(planArb, async (plan) => {
        const { ran, workflow } = setup();
        const runner = new WorkflowRunner({ client: model(plan), contextManager: contextManager(), maxIterations, onHumanRequest: (r) => person(plan, r) });
        await runner.run(workflow, "go");
        let n = 0;
        const expected: string[] = [];
        for (const batch of plan.batches) {
          for (const kind of batch) {
            const verdict = plan.verdicts[n % plan.verdicts.length];
            if (kind === "free") expected.push(`free:${n}`);
            else if (kind === "guarded" && verdict === "approve") expected.push(`guarded:${n}`);
            else if (kind === "guarded" && verdict === "edit") expected.push(`guarded:${n + 1000}`);
            n++;
          }
        }
        expect(ran).toEqual(expected);
      }),
      { numRuns: 40, interruptAfterTimeLimit: 20_000 },
    );
  });

  it("any interleaving of decisions, duplicates and restarts gives the in-process run; waiting snapshots round-trip", async () => {
    const steps = fc.array(fc.constantFrom("decide", "duplicate", "restart", "snapshot"), { minLength: 1, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(planArb, steps, async (plan, script) => {
        const reference = setup();
        const expected = await new WorkflowRunner({ client: model(plan), contextManager: contextManager(), maxIterations, onHumanRequest: (r) => person(plan, r) }).run(reference.workflow, "go");

        const { ran, workflow } = setup();
        const store = new MemoryRunStore();
        const client = model(plan); // one model across restarts: it answers in order, as one process would be asked
        const runner = () => new WorkflowRunner({ client, contextManager: contextManager(), maxIterations, store });
        let outcome: RunOutcome = await runner().start(workflow, "go", { runId: "prop" });
        let step = 0;
        const decided: string[] = [];
        // Each turn of the loop decides one pending request, after the scripted disturbance.
        while (outcome.status === "waiting") {
          const action = script[step++ % script.length]!;
          if (action === "restart") {
            // A new process resumes before everything is decided: it waits again, asking the same.
            const before = outcome.requests.filter((r) => !decided.includes(r.callId)).map((r) => r.callId);
            outcome = await runner().proceed("prop", workflow);
            expect(outcome.status === "waiting" && outcome.requests.map((r) => r.callId)).toEqual(before);
          }
          if (action === "snapshot") {
            // The waiting state through JSON, resumed on a runner with no store: it waits again, asking the same.
            const latest = await store.latest("prop");
            const copy = JSON.parse(JSON.stringify(latest!.snapshot));
            const again = await new WorkflowRunner({ client: new ScriptedClient({ responses: [] }), contextManager: contextManager() }).proceed(copy, workflow);
            expect(again.status === "waiting" && again.requests.map((r) => r.callId)).toEqual(latest!.snapshot.context.batch!.human!.filter((r) => !r.decision).map((r) => r.callId));
          }
          const pending = outcome.status === "waiting" ? outcome.requests.filter((r) => !decided.includes(r.callId)) : [];
          const request = pending[step % pending.length]!;
          const decision = person(plan, request);
          expect((await runner().decide("prop", { callId: request.callId, decision })).duplicate).toBe(false);
          decided.push(request.callId);
          if (action === "duplicate") expect((await runner().decide("prop", { callId: request.callId, decision })).duplicate).toBe(true);
          if (pending.length === 1) {
            outcome = await runner().proceed("prop", workflow);
            decided.length = 0;
          }
        }
        expect(outcome).toEqual({ status: "done", runId: "prop", result: expected });
        expect(ran).toEqual(reference.ran);
      }),
      { numRuns: 40, interruptAfterTimeLimit: 20_000 },
    );
  });
});
