/**
 * A run parked in a store waiting for a person (as test/runner/human.test.ts makes them): a
 * refund tool that needs approval above 100, a question tool, and a model scripted to call
 * them, then finish with the last tool result it saw.
 */
import { z } from "zod";
import { ScriptedClient } from "../../../src/clients/scripted.js";
import { ContextManager } from "../../../src/context/context-manager.js";
import type { LLMResponse } from "../../../src/core/llm.js";
import { defineTool, humanInputTool } from "../../../src/core/tool.js";
import { Workflow } from "../../../src/core/workflow.js";
import type { RunStore } from "../../../src/persistence/run-store.js";
import { WorkflowRunner, type RunOutcome } from "../../../src/runner.js";

const refund = defineTool({
  name: "refund",
  description: "Refund an order",
  parameters: z.object({ order: z.string(), amount: z.number().positive() }),
  needsApproval: (args) => args.amount > 100,
  execute: (args) => `refunded ${args.amount} on ${args.order}`,
});
const askUser = humanInputTool({ name: "ask_user", description: "Ask the user", parameters: z.object({ question: z.string() }) });
const finish = defineTool({ name: "finish", description: "Done", parameters: z.object({ summary: z.string() }), execute: ({ summary }) => summary });

export const refundsWorkflow = new Workflow({ name: "refunds", tools: { refund, ask_user: askUser, finish }, terminalTool: "finish", systemPromptTemplate: "You handle refunds." });

/** Finishes with every tool result of the last batch, joined. */
const finishing = (messages: { role: string; content: unknown }[]): LLMResponse => {
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === "tool"; i--) results.unshift(String(messages[i]!.content));
  return { type: "tool_calls", toolCalls: [{ tool: "finish", args: { summary: results.join(" | ") } }] };
};

const runner = (store: RunStore, responses: ConstructorParameters<typeof ScriptedClient>[0]["responses"]) =>
  new WorkflowRunner({ client: new ScriptedClient({ responses }), contextManager: new ContextManager({ budgetTokens: 8192 }), store });

/**
 * Start run `runId` whose model asks for one refund per entry of `refunds` (and a question
 * when `question` is given) in one batch; it parks waiting. `proceed()` continues it as
 * another process would, the model then finishing.
 */
export async function parkedRun(store: RunStore, runId: string, refunds: { order: string; amount: number }[], question?: string) {
  const calls = [...refunds.map((args) => ({ tool: "refund", args })), ...(question ? [{ tool: "ask_user", args: { question } }] : [])];
  const outcome = await runner(store, [{ type: "tool_calls", toolCalls: calls }]).start(refundsWorkflow, "refund my orders", { runId });
  if (outcome.status !== "waiting") throw new Error(`run ${runId} did not park: ${JSON.stringify(outcome)}`);
  return {
    callIds: outcome.requests.map((r) => r.callId),
    proceed: (): Promise<RunOutcome> => runner(store, [finishing]).proceed(runId, refundsWorkflow),
  };
}
