/**
 * Post-batch bookkeeping (seed 000, 3g) as one pure function: which steps to record, whether the
 * batch counts as a tool error, and whether a terminal tool succeeded.
 */
import type { CompletedStep } from "./step-enforcer.js";

/** What happened to one executed call. `resolution`: the tool threw ToolResolutionError. */
export interface ExecutedResult {
  tool: string;
  args: unknown;
  ok: boolean;
  resolution?: boolean;
  /** The thrown value, for error context (optional). */
  error?: unknown;
}

export interface BatchOutcome {
  /** Successful calls, in order: the steps to record. */
  steps: CompletedStep[];
  /** Some call failed with a counted error (resolution errors do not count). */
  hadError: boolean;
  terminalSucceeded: boolean;
  /** The last counted failure, for ToolExecutionError context. */
  lastFailure?: { tool: string; error: unknown };
}

/**
 * @example
 * batchOutcome([{ tool: "search", args: {}, ok: true }, { tool: "answer", args: {}, ok: true }], ["answer"]);
 * // { steps: [search, answer], hadError: false, terminalSucceeded: true }
 */
export function batchOutcome(results: readonly ExecutedResult[], terminalTools: readonly string[]): BatchOutcome {
  const outcome: BatchOutcome = { steps: [], hadError: false, terminalSucceeded: false };
  for (const r of results) {
    if (r.resolution === true) continue;
    if (r.ok) {
      outcome.steps.push({ tool: r.tool, args: r.args });
      if (terminalTools.includes(r.tool)) outcome.terminalSucceeded = true;
    } else {
      outcome.hadError = true;
      outcome.lastFailure = { tool: r.tool, error: r.error ?? "the tool reported a failure" };
    }
  }
  return outcome;
}
