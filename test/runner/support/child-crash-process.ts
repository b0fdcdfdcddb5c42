/**
 * The process test/runner/child-crash.test.ts kills: a planner whose model calls a note tool
 * and a `research` workflowTool in one batch, on a FileRunStore; every tool appends its start
 * and end to a side-effect log (fsynced), and the store notes each outcome once durable.
 *
 * Usage: child-crash-process.ts <storeDir> <effectsFile> <first|resume>
 * - first: runs the planner as run "p"; when the child asks its model for the step after its
 *   first tool (whose outcome is durable by then), prints "mid-child" and hangs there, to be killed.
 * - resume: resumes "p" (after its lease lapses) and prints the result as JSON.
 */
import { z } from "zod";
import { ContextManager } from "../../../src/context/context-manager.js";
import { NoCompact } from "../../../src/context/no-compact.js";
import type { LLMClient, LLMResponse } from "../../../src/core/llm.js";
import type { ToolSpec } from "../../../src/core/tool.js";
import type { WireMessage } from "../../../src/core/wire-messages.js";
import { defineTool } from "../../../src/core/tool.js";
import { Workflow } from "../../../src/core/workflow.js";
import { FileRunStore } from "../../../src/persistence/file-run-store.js";
import { WorkflowRunner } from "../../../src/runner.js";
import { workflowTool } from "../../../src/tools/workflow-tool.js";
import { effectWriter, leaseFree, recordingOutcomes } from "../../../eval/bench/effects.js";

// Short, so the resume takes over soon after the kill; long enough that a renewal (every third
// of it) delayed by a loaded machine does not lose the live process its lease.
export const LEASE_MS = 2_000;

const [storeDir, effectsFile, mode] = process.argv.slice(2);
if (!storeDir || !effectsFile || (mode !== "first" && mode !== "resume")) {
  console.error("usage: child-crash-process.ts <storeDir> <effectsFile> <first|resume>");
  process.exit(2);
}
const effect = effectWriter(effectsFile);

const sideEffect = (name: string) =>
  defineTool({
    name,
    description: `side-effecting ${name}`,
    parameters: z.object({ n: z.number() }),
    execute: ({ n }, ctx) => {
      effect(`start ${ctx.idempotencyKey} ${name}`);
      effect(`end ${ctx.idempotencyKey} ${name}`);
      return `${name} did ${n}`;
    },
  });

const research = new Workflow({
  name: "research",
  tools: {
    step1: sideEffect("step1"),
    step2: sideEffect("step2"),
    report: defineTool({
      name: "report",
      description: "report",
      parameters: z.object({ summary: z.string() }),
      execute: ({ summary }, ctx) => {
        effect(`start ${ctx.idempotencyKey} report`);
        effect(`end ${ctx.idempotencyKey} report`);
        return { summary };
      },
    }),
  },
  requiredSteps: ["step1", "step2"],
  terminalTool: "report",
  systemPromptTemplate: "Research.",
});

const planner = new Workflow({
  name: "planner",
  tools: {
    note: sideEffect("note"),
    research: workflowTool(research),
    answer: defineTool({ name: "answer", description: "answer", parameters: z.object({ text: z.string() }), execute: ({ text }) => text }),
  },
  terminalTool: "answer",
  systemPromptTemplate: "Plan.",
});

const call = (tool: string, args: Record<string, unknown>): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool, args }] });
const results = (messages: WireMessage[]) => messages.filter((m) => m.role === "tool").map((m) => String(m.content));

/** The model: a pure function of the conversation and the tools offered, so a resumed process answers the same. */
function answer(messages: WireMessage[], tools: ToolSpec[] | undefined): LLMResponse {
  const done = results(messages);
  if (tools?.some((t) => t.name === "step1")) {
    if (done.length === 0) return call("step1", { n: 1 });
    if (done.length === 1) return call("step2", { n: 2 });
    return call("report", { summary: done.join(" + ") });
  }
  if (done.length === 0) return { type: "tool_calls", toolCalls: [{ tool: "note", args: { n: 0 } }, { tool: "research", args: { task: "solar" } }] };
  return call("answer", { text: done.at(-1)! });
}

const client: LLMClient = {
  apiFormat: "openai",
  async send(messages, tools) {
    const childAfterFirstTool = tools?.some((t) => t.name === "step1") && results(messages).length === 1;
    if (mode === "first" && childAfterFirstTool) {
      console.log("mid-child");
      setInterval(() => undefined, 1_000); // alive until killed, whatever else is pending
      return new Promise<never>(() => undefined);
    }
    return answer(messages, tools);
  },
  async getContextLength() {
    return undefined;
  },
};

const store = recordingOutcomes(new FileRunStore({ dir: storeDir, leaseMs: LEASE_MS }), effect);
const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 100_000, strategy: new NoCompact() }), store });
if (mode === "first") {
  await runner.run(planner, "go", { runId: "p" });
  console.error("the first process was to be killed mid-child, but its run finished");
  process.exit(1);
}
await leaseFree(store, "p");
console.log(JSON.stringify({ result: await runner.resume("p", planner) }));
