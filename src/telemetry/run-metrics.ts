/**
 * A WorkflowRunner run as the shared metric set counts it: runs by outcome, the duration of
 * each leg (a run that waits for a person is a leg until it waits), active runs, rescues by
 * format as they happen (from the same step diff as the trace's events), and — once, when the
 * run ends — its nudges, spent budget and tokens, read from the run's final stats
 * (src/loop/run-stats.ts). Counting the stats at the end only is what keeps a run that waited
 * and was resumed (its stats are cumulative) from being counted twice.
 */
import { clientName } from "../core/response-contract.js";
import type { LLMClient } from "../core/llm.js";
import type { WorkflowFact } from "../loop/facts.js";
import type { RunStats } from "../loop/run-stats.js";
import type { RunLease } from "../persistence/run-store.js";
import type { ForgeMetrics } from "./metrics.js";

export type RunLegOutcome = "done" | "failed" | "cancelled" | "waiting";

/** Error codes of the runs that stopped because a budget ran out, as the `kind` label reads them. */
const BUDGET_KINDS: Record<string, string> = {
  FORGE_TOOL_CALL: "retries",
  FORGE_TOOL_EXECUTION: "tool_errors",
  FORGE_MAX_ITERATIONS: "iterations",
  FORGE_STEP_ENFORCEMENT: "steps",
  FORGE_PREREQUISITE: "prerequisites",
  FORGE_CONTEXT_BUDGET_EXCEEDED: "context",
  FORGE_HUMAN_WAIT_TIMEOUT: "human_wait",
};

/** One leg of a run being counted: each fact the machine emits, each step, `end` once. */
export interface RunLeg {
  fact(fact: WorkflowFact): void;
  step(state: string): void;
  end(outcome: RunLegOutcome, stats: RunStats | undefined): void;
}

/**
 * Start counting one leg of a run.
 *
 * @example
 * const leg = startRunLeg(metrics, { workflow: "support", client });
 * leg.fact({ type: "guardrail.rescue", iteration: 1, format: "hermes" });
 * leg.end("done", runner.lastRunStats);
 */
export function startRunLeg(metrics: ForgeMetrics, run: { workflow: string; client: LLMClient }): RunLeg {
  const started = performance.now();
  metrics.activeRuns.inc({ surface: "runner" });
  const labels = { surface: "runner", backend: metrics.label("backend", clientName(run.client)), model: metrics.label("model", modelOf(run.client)) };
  let ended = false;
  return {
    fact(fact) {
      if (fact.type === "guardrail.rescue") metrics.rescues.inc({ ...labels, format: metrics.label("format", fact.format) });
    },
    step() {},
    end(outcome, stats) {
      if (ended) return;
      ended = true;
      metrics.activeRuns.dec({ surface: "runner" });
      const workflow = metrics.label("workflow", run.workflow);
      metrics.runs.inc({ surface: "runner", workflow, outcome });
      metrics.runDuration.observe({ surface: "runner", workflow, outcome }, (performance.now() - started) / 1000);
      if (outcome !== "waiting" && stats) recordRunStats(metrics, stats, labels);
    },
  };
}

/** The figures of an ended run. */
function recordRunStats(metrics: ForgeMetrics, stats: RunStats, labels: { surface: string; backend: string; model: string }): void {
  const nudges: [string, number][] = [
    ["retry", stats.retryNudges],
    ["step", stats.stepNudges],
    ["prerequisite", stats.prereqNudges],
    ["loop_break", stats.loopBreaks],
  ];
  for (const [kind, n] of nudges) if (n > 0) metrics.nudges.inc({ ...labels, kind }, n);
  if (stats.usage.inputTokens > 0) metrics.tokens.inc({ ...labels, direction: "input" }, stats.usage.inputTokens);
  if (stats.usage.outputTokens > 0) metrics.tokens.inc({ ...labels, direction: "output" }, stats.usage.outputTokens);
  const budget = budgetKind(stats.error);
  if (budget !== undefined) metrics.budgetsExhausted.inc({ surface: "runner", kind: budget });
}

/**
 * Which budget a failed run's error says ran out, if any.
 *
 * @example
 * budgetKind({ name: "ToolCallError", code: "FORGE_TOOL_CALL", message: "..." }); // "retries"
 */
export function budgetKind(error: RunStats["error"]): string | undefined {
  if (error === undefined) return undefined;
  // BudgetExhaustedError names its budget in its message: "Run budget exhausted (token_budget): ...".
  if (error.code === "FORGE_BUDGET_EXHAUSTED") return /\((token_budget|wall_clock)\)/.exec(error.message)?.[1] ?? "run_budget";
  return BUDGET_KINDS[error.code];
}

/**
 * Count a lease this process took over from a holder whose lease ran out.
 *
 * @example
 * countTakeover(metrics, "FileRunStore", await store.lock(runId));
 */
export function countTakeover(metrics: ForgeMetrics, store: string, lease: Pick<RunLease, "takenOver">): void {
  if (lease.takenOver) metrics.leaseTakeovers.inc({ store: metrics.label("store", store) });
}

function modelOf(client: LLMClient): string | undefined {
  const model = (client as { model?: unknown }).model;
  return typeof model === "string" ? model : undefined;
}
