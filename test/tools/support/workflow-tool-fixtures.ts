/**
 * A planner workflow whose model calls a `research` workflow as a tool, both on one client:
 * the model's answer is a pure function of the conversation and of the tools offered (the
 * child's include `lookup`), so a resumed run gets the answers the uninterrupted one got.
 */
import { z } from "zod";
import { ContextManager, NoCompact } from "../../../src/context/index.js";
import { defineTool, Workflow, type LLMResponse, type ToolSpec, type WireMessage } from "../../../src/core/index.js";
import { workflowTool } from "../../../src/tools/workflow-tool.js";
import { PolicyClient, type Policy } from "../../support/loop-fixtures.js";

export interface Effects {
  /** `<tool> <idempotency key>` per execution start. */
  started: string[];
}

export interface ResearchBehaviour {
  /** Lookups before the report (default 1). */
  lookups?: number;
  /** Never report: look up forever (a runaway model). */
  runaway?: boolean;
  /** Awaited inside each lookup before it finishes (its signal, its n). */
  duringLookup?: (signal: AbortSignal, n: number) => Promise<void> | void;
  /** The report needs a person's approval. */
  approveReport?: boolean;
}

export function researchWorkflow(effects: Effects, behaviour: ResearchBehaviour = {}): Workflow {
  return new Workflow({
    name: "research",
    description: "Research a topic and report what was found.",
    tools: {
      lookup: defineTool({
        name: "lookup",
        description: "look a topic up",
        parameters: z.object({ topic: z.string(), n: z.number().int() }),
        execute: async ({ topic, n }, ctx) => {
          effects.started.push(`lookup ${ctx.idempotencyKey}`);
          await behaviour.duringLookup?.(ctx.signal, n);
          return `fact ${n} about ${topic}`;
        },
      }),
      report: defineTool({
        name: "report",
        description: "report the findings",
        parameters: z.object({ summary: z.string() }),
        ...(behaviour.approveReport ? { needsApproval: true } : {}),
        execute: ({ summary }, ctx) => {
          effects.started.push(`report ${ctx.idempotencyKey}`);
          return { summary };
        },
      }),
    },
    requiredSteps: ["lookup"],
    terminalTool: "report",
    systemPromptTemplate: "You research.",
  });
}

export function plannerWorkflow(research: Workflow, effects: Effects): Workflow {
  return new Workflow({
    name: "planner",
    tools: {
      research: workflowTool(research),
      answer: defineTool({
        name: "answer",
        description: "answer the user",
        parameters: z.object({ text: z.string() }),
        execute: ({ text }, ctx) => {
          effects.started.push(`answer ${ctx.idempotencyKey}`);
          return text;
        },
      }),
    },
    terminalTool: "answer",
    systemPromptTemplate: "You plan.",
  });
}

const toolMessages = (messages: readonly WireMessage[]) => messages.filter((m) => m.role === "tool").map((m) => String(m.content));
const lastUser = (messages: readonly WireMessage[]) => String(messages.findLast((m) => m.role === "user")?.content ?? "");

/** The planner asks research about "solar", then answers with what the research tool said. */
export function plannerPolicy(messages: readonly WireMessage[]): LLMResponse {
  const results = toolMessages(messages);
  if (results.length === 0) return { type: "tool_calls", toolCalls: [{ tool: "research", args: { task: "solar" } }] };
  return { type: "tool_calls", toolCalls: [{ tool: "answer", args: { text: results.at(-1)! } }] };
}

/** Research looks its task up `lookups` times (forever when runaway), then reports the facts. */
export function researchPolicy(messages: readonly WireMessage[], behaviour: ResearchBehaviour = {}): LLMResponse {
  const facts = toolMessages(messages).filter((c) => c.startsWith("fact"));
  if (behaviour.runaway || facts.length < (behaviour.lookups ?? 1)) {
    return { type: "tool_calls", toolCalls: [{ tool: "lookup", args: { topic: lastUser(messages), n: facts.length + 1 } }] };
  }
  return { type: "tool_calls", toolCalls: [{ tool: "report", args: { summary: facts.join("; ") } }] };
}

/** One client for both workflows: the child's requests offer `lookup`. */
export function sharedModel(behaviour: ResearchBehaviour = {}, planner: Policy = plannerPolicy): PolicyClient {
  const isChild = (tools: ToolSpec[] | undefined) => tools?.some((t) => t.name === "lookup") ?? false;
  return new PolicyClient((messages, tools, signal) => (isChild(tools) ? researchPolicy(messages, behaviour) : planner(messages, tools, signal)));
}

export const contextManager = () => new ContextManager({ budgetTokens: 100_000, strategy: new NoCompact() });

/** Rejects once `signal` is aborted (a tool that runs until its call is cut off). */
export const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason instanceof Error ? signal.reason : new Error("aborted")), { once: true }));
