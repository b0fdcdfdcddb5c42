/**
 * Required steps, premature-terminal escalation and tool prerequisites. Every decision is a pure
 * function over plain data (`required`, `completed: {tool,args}[]`), which the workflow machine
 * calls on its JSON context (and so does the Guardrails facade, which steps that machine).
 */
import { InvalidArgumentError } from "../core/errors.js";
import { blockedBatchResults, type BlockedResult } from "./blocked-batch.js";
import { isExhausted } from "./budget.js";
import { prerequisiteMessage, stepNudgeMessage, type Nudge } from "./nudges.js";
import type { PrerequisiteViolation } from "./prerequisites.js";

// Part of the step-enforcement API the workflow machine imports from here.
export { describePrerequisite, findPrerequisiteViolations, isPrerequisiteMet, type PrerequisiteViolation } from "./prerequisites.js";
export type { CompletedStep } from "./prerequisites.js";
import type { CompletedStep } from "./prerequisites.js";

/**
 * Required steps with no successful execution yet, in their declared order.
 *
 * @example
 * pendingSteps(["a", "b"], [{ tool: "b", args: {} }]); // ["a"]
 */
export function pendingSteps(required: readonly string[], completed: readonly CompletedStep[]): string[] {
  const done = new Set(completed.map((s) => s.tool));
  return required.filter((step) => !done.has(step));
}

/**
 * The first terminal call in the batch while required steps are pending (judged on pre-batch state).
 *
 * @example
 * findPrematureTerminal([{ tool: "answer" }], ["answer"], ["search"], []); // { terminalTool: "answer", pending: ["search"] }
 */
export function findPrematureTerminal(
  calls: readonly { tool: string }[],
  terminalTools: readonly string[],
  required: readonly string[],
  completed: readonly CompletedStep[],
): { terminalTool: string; pending: string[] } | null {
  const terminal = calls.find((c) => terminalTools.includes(c.tool));
  if (!terminal) return null;
  const pending = pendingSteps(required, completed);
  return pending.length > 0 ? { terminalTool: terminal.tool, pending } : null;
}

/**
 * Escalation tier of the n-th premature attempt.
 *
 * @example
 * stepTier(1); // 1
 * stepTier(7); // 3
 */
export function stepTier(attempt: number): 1 | 2 | 3 {
  return attempt <= 1 ? 1 : attempt === 2 ? 2 : 3;
}

/**
 * Progress line for compacted summaries: distinct completed tools, first-run order.
 *
 * @example
 * summaryHint([{ tool: "a", args: {} }, { tool: "a", args: {} }, { tool: "b", args: {} }]); // "[Steps completed: a, b]"
 */
export function summaryHint(completed: readonly CompletedStep[]): string {
  if (completed.length === 0) return "[No steps completed yet]";
  return `[Steps completed: ${[...new Set(completed.map((s) => s.tool))].join(", ")}]`;
}

export type StepCheck =
  | { needsNudge: false }
  | {
      needsNudge: true;
      kind: "step";
      tier: 1 | 2 | 3;
      nudge: Nudge;
      results: BlockedResult[];
      terminalTool: string;
      pending: string[];
      attempts: number;
      exhausted: boolean;
    }
  | {
      needsNudge: true;
      kind: "prerequisite";
      tier: number;
      nudge: Nudge;
      results: BlockedResult[];
      violations: PrerequisiteViolation[];
      attempts: number;
      exhausted: boolean;
    };

/**
 * The blocked-batch answer to the `attempt`-th premature terminal call (terminal calls get the
 * escalating `[StepEnforcementError]`, the rest `[Skipped]`).
 *
 * @example
 * stepBlock([{ tool: "answer" }], { terminalTool: "answer", pending: ["search"] }, 1, 3).tier; // 1
 */
export function stepBlock(
  calls: readonly { tool: string }[],
  premature: { terminalTool: string; pending: string[] },
  attempt: number,
  maxAttempts: number,
): Extract<StepCheck, { kind: "step" }> {
  const tier = stepTier(attempt);
  const content = stepNudgeMessage(premature.terminalTool, premature.pending, tier);
  const offending = new Map<number, string>();
  calls.forEach((c, i) => {
    if (c.tool === premature.terminalTool) offending.set(i, content);
  });
  return {
    needsNudge: true,
    kind: "step",
    tier,
    nudge: { role: "tool", content, kind: "step", tier },
    results: blockedBatchResults(calls, offending),
    ...premature,
    attempts: attempt,
    exhausted: isExhausted(attempt, maxAttempts),
  };
}

/**
 * The blocked-batch answer to the `attempt`-th consecutive prerequisite violation.
 *
 * @example
 * prerequisiteBlock([{ tool: "edit" }], [{ index: 0, tool: "edit", missing: ["read"] }], 1, 2).exhausted; // false
 */
export function prerequisiteBlock(
  calls: readonly { tool: string }[],
  violations: readonly PrerequisiteViolation[],
  attempt: number,
  maxViolations: number,
): Extract<StepCheck, { kind: "prerequisite" }> {
  if (violations.length === 0) throw new InvalidArgumentError("violations", "prerequisiteBlock needs at least one violation");
  const offending = new Map(violations.map((v) => [v.index, prerequisiteMessage(v.tool, v.missing)] as const));
  const first = offending.get(violations[0]!.index)!;
  return {
    needsNudge: true,
    kind: "prerequisite",
    tier: attempt,
    nudge: { role: "tool", content: first, kind: "prerequisite", tier: attempt },
    results: blockedBatchResults(calls, offending),
    violations: [...violations],
    attempts: attempt,
    exhausted: isExhausted(attempt, maxViolations),
  };
}
