/**
 * A runner process the paused-holder test stops and continues: it runs (or resumes) a workflow
 * of three slow steps and a terminal tool on a shared store with a short lease, logging every
 * tool start and end with its pid. Prints `result <json>` or `error <code> <message>`.
 * Usage: holder-child.ts <file|sql> <dir> <runId> <effects> <leaseMs> <toolMs> [stopAtStart]
 * stopAtStart n: the process stops itself (SIGSTOP) right after logging its n-th tool start, so
 * it is paused in the middle of that call however slowly the test that watches it gets to run.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ContextManager } from "../../../src/context/context-manager.js";
import { NoCompact } from "../../../src/context/no-compact.js";
import { ForgeError } from "../../../src/core/errors.js";
import type { LLMClient, LLMResponse } from "../../../src/core/llm.js";
import type { WireMessage } from "../../../src/core/wire-messages.js";
import { defineTool } from "../../../src/core/tool.js";
import { Workflow } from "../../../src/core/workflow.js";
import { FileRunStore } from "../../../src/persistence/file-run-store.js";
import { SqlRunStore } from "../../../src/persistence/sql-run-store.js";
import { WorkflowRunner } from "../../../src/runner.js";
import { leaseFree } from "../../../eval/bench/effects.js";

const [kind, dir, runId, effects, leaseMs, toolMs, stopAtStart = "0"] = process.argv.slice(2) as [string, string, string, string, string, string, string?];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const effect = (line: string) => appendFileSync(effects, `${process.pid} ${line}\n`);
let starts = 0;

const step = (name: string) =>
  defineTool({
    name,
    description: name,
    parameters: z.object({}),
    execute: async (_args, ctx) => {
      effect(`start ${ctx.idempotencyKey}`);
      if (++starts === Number(stopAtStart)) process.kill(process.pid, "SIGSTOP"); // synchronous: no renewal runs in between
      await sleep(Number(toolMs));
      effect(`end ${ctx.idempotencyKey}`);
      return `${name} done`;
    },
  });
const workflow = new Workflow({
  name: "paused",
  tools: { a: step("a"), b: step("b"), c: step("c"), finish: step("finish") },
  requiredSteps: ["a", "b", "c"],
  terminalTool: "finish",
  systemPromptTemplate: "Run a, b, c, then finish.",
});
const order = ["a", "b", "c", "finish"];
const client: LLMClient = {
  apiFormat: "openai",
  async send(messages: WireMessage[]): Promise<LLMResponse> {
    const turn = messages.filter((m) => m.role === "assistant").length;
    return { type: "tool_calls", toolCalls: [{ tool: order[Math.min(turn, 3)]!, args: {} }] };
  },
  async getContextLength() {
    return undefined;
  },
};

mkdirSync(dir, { recursive: true });
const options = { leaseMs: Number(leaseMs) };
const store = kind === "file" ? new FileRunStore({ dir, ...options }) : new SqlRunStore({ url: `file:${path.join(dir, "runs.db")}`, ...options });
// A holder that was stopped keeps its lease until it runs out: wait for that, as a worker would.
await leaseFree(store, runId);
const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 100_000, strategy: new NoCompact() }), store, maxIterations: 10 });
try {
  const existing = await store.latest(runId);
  const result = existing ? await runner.resume(runId, workflow) : await runner.run(workflow, "go", { runId });
  console.log(`result ${JSON.stringify(result)}`);
} catch (error) {
  console.log(`error ${ForgeError.isInstance(error) ? error.code : "?"} ${(error as Error).message}`);
  process.exitCode = 1;
}
