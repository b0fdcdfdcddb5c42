/**
 * The process the kill -9 harness kills: runs (or resumes) one workflow with multi-call batches
 * on a FileRunStore, its tools writing every start and end to a side-effect log (fsynced), then
 * prints the result as JSON. Usage: durability-child.ts <storeDir> <runId> <sideEffectLog> [file|sql] [leaseMs]
 */
import { z } from "zod";
import { ContextManager } from "../../src/context/context-manager.js";
import { NoCompact } from "../../src/context/no-compact.js";
import type { LLMClient, LLMResponse } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { openStore } from "./durability-harness.js";
import { effectWriter, leaseFree, recordingOutcomes } from "./effects.js";
import { WorkflowRunner } from "../../src/runner.js";

/**
 * A killed process's lease ends this soon (the next process waits that long at most), unless the
 * harness gives another: a live process whose renewals are held up longer than this by a busy
 * machine loses its own lease, rightly, so a test beside other work gives a longer one.
 */
export const LEASE_MS = 300;


const [storeDir, runId, effectsFile, kind = "file", leaseArg] = process.argv.slice(2);
const leaseMs = leaseArg === undefined ? LEASE_MS : Number(leaseArg);
if (!storeDir || !runId || !effectsFile || (kind !== "file" && kind !== "sql") || !(Number.isInteger(leaseMs) && leaseMs > 0)) {
  console.error("usage: durability-child.ts <storeDir> <runId> <sideEffectLog> [file|sql] [leaseMs]");
  process.exit(2);
}

/** One line per side effect, on disk before the tool goes on: what a crash can never take back. */
const effect = effectWriter(effectsFile);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const step = (name: string) =>
  defineTool({
    name,
    description: `side-effecting step ${name}`,
    parameters: z.object({ n: z.number() }),
    execute: async ({ n }, ctx) => {
      effect(`start ${ctx.idempotencyKey} ${name}`);
      await sleep(3 + (n % 5) * 2);
      effect(`end ${ctx.idempotencyKey} ${name}`);
      return { name, n, doubled: n * 2 };
    },
  });

export const durabilityWorkflow = new Workflow({
  name: "durability",
  tools: {
    a: step("a"),
    b: step("b"),
    c: step("c"),
    finish: defineTool({
      name: "finish",
      description: "report",
      parameters: z.object({ total: z.number() }),
      execute: async ({ total }, ctx) => {
        effect(`start ${ctx.idempotencyKey} finish`);
        effect(`end ${ctx.idempotencyKey} finish`);
        return { total };
      },
    }),
  },
  requiredSteps: ["a", "b", "c"],
  terminalTool: "finish",
  systemPromptTemplate: "Run the steps.",
});

/** The model: a pure function of how many turns the conversation holds, so a resumed process answers the same. */
const SCRIPT: LLMResponse[] = [
  { type: "tool_calls", toolCalls: [{ tool: "a", args: { n: 1 } }, { tool: "b", args: { n: 2 } }, { tool: "c", args: { n: 3 } }] },
  { type: "tool_calls", toolCalls: [{ tool: "b", args: { n: 4 } }, { tool: "a", args: { n: 5 } }] },
  { type: "tool_calls", toolCalls: [{ tool: "c", args: { n: 6 } }, { tool: "b", args: { n: 7 } }, { tool: "a", args: { n: 8 } }] },
  { type: "tool_calls", toolCalls: [{ tool: "finish", args: { total: 36 } }] },
];
const client: LLMClient = {
  apiFormat: "openai",
  async send(messages: WireMessage[]) {
    await sleep(2);
    return SCRIPT[Math.min(messages.filter((m) => m.role === "assistant").length, SCRIPT.length - 1)]!;
  },
  async getContextLength() {
    return undefined;
  },
};

const store = recordingOutcomes(await openStore(kind, storeDir, { leaseMs }), effect);
const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 100_000, strategy: new NoCompact() }), store, maxIterations: 8 });
await leaseFree(store, runId!);
// Killed before the first checkpoint: no tool has run yet, so the run starts over under its id.
const existing = await store.latest(runId!);
console.log("ready");
const result = existing ? await runner.resume(runId, durabilityWorkflow) : await runner.run(durabilityWorkflow, "go", { runId });
console.log(JSON.stringify({ result }));
