/**
 * A planner run whose model calls a `research` workflow as a tool (workflowTool), so research
 * runs as its child: one ScriptedClient for both, its answers in the order the runs ask
 * (planner calls research; research looks up, then reports; planner answers).
 */
import { z } from "zod";
import { ScriptedClient } from "../../../src/clients/scripted.js";
import { ContextManager } from "../../../src/context/context-manager.js";
import { defineTool } from "../../../src/core/tool.js";
import { Workflow } from "../../../src/core/workflow.js";
import type { RunStore } from "../../../src/persistence/run-store.js";
import { WorkflowRunner } from "../../../src/runner.js";
import type { WorkflowRunnerOptions } from "../../../src/runner/options.js";
import { workflowTool } from "../../../src/tools/workflow-tool.js";

export const researchWorkflow = new Workflow({
  name: "research",
  description: "Research a topic and report.",
  tools: {
    lookup: defineTool({ name: "lookup", description: "look a topic up", parameters: z.object({ topic: z.string() }), execute: ({ topic }) => `a fact about ${topic}` }),
    report: defineTool({ name: "report", description: "report", parameters: z.object({ summary: z.string() }), execute: ({ summary }) => summary }),
  },
  requiredSteps: ["lookup"],
  terminalTool: "report",
  systemPromptTemplate: "You research.",
});

export const plannerWorkflow = new Workflow({
  name: "planner",
  tools: {
    research: workflowTool(researchWorkflow),
    answer: defineTool({ name: "answer", description: "answer the user", parameters: z.object({ text: z.string() }), execute: ({ text }) => text }),
  },
  terminalTool: "answer",
  systemPromptTemplate: "You plan.",
});

/** Run planner `runId` to its end (its child is `<runId>.1-0`); resolves with its answer. */
export function runPlanner(runId: string, options: { store?: RunStore; inspect?: WorkflowRunnerOptions["inspect"] } = {}): Promise<unknown> {
  const client = new ScriptedClient({
    responses: [
      { type: "tool_calls", toolCalls: [{ tool: "research", args: { task: "solar" } }] },
      { type: "tool_calls", toolCalls: [{ tool: "lookup", args: { topic: "solar" } }] },
      { type: "tool_calls", toolCalls: [{ tool: "report", args: { summary: "solar is bright" } }] },
      { type: "tool_calls", toolCalls: [{ tool: "answer", args: { text: "plan: go solar" } }] },
    ],
  });
  const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }), ...options });
  return runner.run(plannerWorkflow, "plan the launch", { runId });
}
