/** Figures of one run, derived from the final machine context (eval metrics, logs). */
import type { WorkflowContext } from "./context.js";

export interface RunStats {
  outcome: "done" | "failed" | "cancelled";
  iterations: number;
  toolCalls: number;
  rescues: number;
  retryNudges: number;
  stepNudges: number;
  prereqNudges: number;
  toolErrors: number;
  loopBreaks: number;
  compactions: { phase: number; tokensBefore: number; tokensAfter: number; iteration: number }[];
  usage: { inputTokens: number; outputTokens: number };
  elapsedMs: number;
  completedSteps: string[];
  terminal?: { tool: string; args: Record<string, unknown>; result: unknown };
  error?: { name: string; code: string; message: string };
}

export function runStatsFrom(ctx: WorkflowContext, finalState: string, now: number): RunStats {
  const outcome = finalState === "done" ? "done" : finalState === "cancelled" ? "cancelled" : "failed";
  return {
    outcome,
    iterations: ctx.iteration,
    toolCalls: ctx.stats.toolCalls,
    rescues: ctx.stats.rescues,
    retryNudges: ctx.stats.retryNudges,
    stepNudges: ctx.stats.stepNudges,
    prereqNudges: ctx.stats.prereqNudges,
    toolErrors: ctx.stats.toolErrors,
    loopBreaks: ctx.stats.loopBreaks,
    compactions: ctx.stats.compactions,
    usage: { ...ctx.usage },
    elapsedMs: Math.max(0, now - ctx.startedAt),
    completedSteps: [...new Set(ctx.steps.completed.map((s) => s.tool))],
    ...(ctx.terminal ? { terminal: ctx.terminal } : {}),
    ...(ctx.error ? { error: { name: ctx.error.name, code: ctx.error.code, message: ctx.error.message } } : {}),
  };
}
