/** Figures of one run, derived from the final machine context (eval metrics, logs). */
import type { LoopStats, WorkflowContext } from "./context.js";
import { WorkflowState } from "./state-name.js";

/** The machine's running stats plus the outcome and totals of the finished run. */
export interface RunStats extends LoopStats {
  outcome: "done" | "failed" | "cancelled";
  iterations: number;
  usage: { inputTokens: number; outputTokens: number };
  elapsedMs: number;
  completedSteps: string[];
  terminal?: { tool: string; args: Record<string, unknown>; result: unknown };
  error?: { name: string; code: string; message: string };
}

export function runStatsFrom(ctx: WorkflowContext, finalState: string, now: number): RunStats {
  const outcome = finalState === WorkflowState.done ? "done" : finalState === WorkflowState.cancelled ? "cancelled" : "failed";
  return {
    ...ctx.stats,
    outcome,
    iterations: ctx.iteration,
    usage: { ...ctx.usage },
    elapsedMs: Math.max(0, now - ctx.run.startedAt),
    completedSteps: [...ctx.steps.completedTools],
    ...(ctx.terminal ? { terminal: ctx.terminal } : {}),
    ...(ctx.error ? { error: { name: ctx.error.name, code: ctx.error.code, message: ctx.error.message } } : {}),
  };
}
