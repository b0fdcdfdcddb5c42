/**
 * Generated small-model behaviour for property tests over whole runs: what the model does on
 * each turn, and the runner budgets it runs under.
 */
import fc from "fast-check";
import { ContextManager, NoCompact, TieredCompact } from "../../src/context/index.js";
import type { LLMResponse, WireMessage } from "../../src/core/index.js";
import type { WorkflowRunnerOptions } from "../../src/runner.js";
import { call, calls, correctNext, PolicyClient, text, turnOf } from "./loop-fixtures.js";

export const BEHAVIOURS = [
  "correct", "correct", "correct", "text", "fenced", "unknown", "premature", "prereq",
  "nonobject", "invalid", "throw", "resolve", "parallel", "repeat", "reasoning",
] as const;
export type Behaviour = (typeof BEHAVIOURS)[number] | "cancel";

/** What a small model does on one turn, given what the right call would be. */
export function act(behaviour: Behaviour, messages: WireMessage[]): LLMResponse {
  const right = correctNext(messages);
  const rightCall = right.type === "tool_calls" ? right.toolCalls[0]! : { tool: "finish", args: { summary: "x" } };
  const mode = (m: string) => (rightCall.tool === "finish" ? right : call(rightCall.tool, { ...(rightCall.args as object), mode: m }));
  switch (behaviour) {
    case "correct": case "cancel": return right;
    case "text": return text("Let me think about which tool to use.");
    case "fenced": return text(`Calling now:\n\`\`\`json\n${JSON.stringify({ tool: rightCall.tool, args: rightCall.args })}\n\`\`\``);
    case "unknown": return call("fetch_z", { n: 1 });
    case "premature": return call("finish", { summary: "too early" });
    case "prereq": return call("fetch_b", { n: 5 });
    case "nonobject": return call(rightCall.tool, "n=1");
    case "invalid": return call("fetch_a", { n: "one" });
    case "throw": return mode("throw");
    case "resolve": return mode("resolve");
    case "parallel": return calls([rightCall.tool, rightCall.args], ["extra", { n: 9 }]);
    case "repeat": return call("extra", { n: 1 });
    case "reasoning": return { ...right, reasoning: "thinking it through" };
  }
}

export const budgetArb = fc.record({
  maxIterations: fc.integer({ min: 2, max: 12 }),
  maxRetries: fc.integer({ min: 0, max: 3 }),
  maxToolErrors: fc.integer({ min: 0, max: 2 }),
  maxPrematureAttempts: fc.integer({ min: 0, max: 3 }),
  maxPrereqViolations: fc.integer({ min: 0, max: 2 }),
  maxToolRepeat: fc.integer({ min: 1, max: 3 }),
  tight: fc.boolean(),
});
export type Budget = typeof budgetArb extends fc.Arbitrary<infer T> ? T : never;

export function runnerOptions(b: Budget): Omit<WorkflowRunnerOptions, "client"> {
  const { tight, ...limits } = b;
  return {
    ...limits,
    contextManager: tight
      ? new ContextManager({ strategy: new TieredCompact({ keepRecent: 1 }), budgetTokens: 1200 })
      : new ContextManager({ strategy: new NoCompact(), budgetTokens: 1_000_000 }),
  };
}

/**
 * A client playing `script[turn]` (then the correct path); "cancel" aborts the returned
 * controller, whose signal the run is given, while the model is being asked.
 */
export function scriptedModel(script: readonly Behaviour[]): { client: PolicyClient; controller: AbortController; responses: LLMResponse[] } {
  const controller = new AbortController();
  /** Every response the model gave, in order (copies: the run may not change them). */
  const responses: LLMResponse[] = [];
  const client = new PolicyClient((messages, _tools, signal) => {
    const behaviour = script[turnOf(messages)] ?? "correct";
    if (behaviour === "cancel") {
      controller.abort(new Error("generated cancel"));
      signal?.throwIfAborted();
    }
    const response = act(behaviour, messages);
    // A cancelled run never takes the answer it was being given.
    if (behaviour !== "cancel") responses.push(structuredClone(response));
    return response;
  });
  return { client, controller, responses };
}
