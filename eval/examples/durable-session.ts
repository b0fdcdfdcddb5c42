/**
 * A durable two-turn session (docs/durable-runs.md). Each call is one process and
 * one turn; the conversation lives in the run store, so a process killed between turns, or a
 * new machine with the same directory, carries on:
 *   npx tsx eval/examples/durable-session.ts "Remember that the deploy is on Friday."
 *   npx tsx eval/examples/durable-session.ts "What do you remember?"
 * The store directory is $FORGE_STORE, else ./.forge. The model is the simulated one.
 */
import { z } from "zod";
import { ContextManager, defineTool, FileRunStore, SimulatedClient, Workflow, WorkflowRunner, type Oracle } from "forge-ts";

const remember = defineTool({
  name: "remember",
  description: "Store a fact from the user's message",
  parameters: z.object({ fact: z.string() }),
  execute: async ({ fact }) => `stored: ${fact}`,
});
const reply = defineTool({
  name: "reply",
  description: "Answer the user",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
const workflow = new Workflow({
  name: "notes",
  tools: { remember, reply },
  requiredSteps: ["remember"],
  terminalTool: "reply",
  systemPromptTemplate: "You keep notes for the user. Always act through tools.",
});

// Each turn: remember, then reply with how many facts the whole conversation holds.
const oracle: Oracle = ({ results }) => {
  const facts = results.filter((r) => r.tool === "remember" && !r.isError).length;
  const lastReply = results.map((r) => r.tool).lastIndexOf("reply");
  const rememberedThisTurn = results.slice(lastReply + 1).some((r) => r.tool === "remember" && !r.isError);
  return rememberedThisTurn ? { tool: "reply", args: { text: `I remember ${facts} fact(s).` } } : { tool: "remember", args: { fact: `fact #${facts + 1}` } };
};

const store = new FileRunStore({ dir: process.env.FORGE_STORE ?? ".forge" });
const runner = new WorkflowRunner({
  client: new SimulatedClient({ oracle, workflow, profile: "clean", seed: 1 }),
  contextManager: new ContextManager({ budgetTokens: 8192 }),
  store,
});
const message = process.argv[2] ?? "Remember this.";
const answer = await runner.run(workflow, message, { sessionId: "demo-session" });
const history = await store.history("demo-session");
console.log(`${answer} (session history: ${history.length} messages, ${(await store.listRuns({ sessionId: "demo-session" })).length} turn(s))`);
