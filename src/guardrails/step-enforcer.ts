/**
 * Required steps, premature-terminal escalation and tool prerequisites. Every decision is a pure
 * function over plain data (`required`, `completed: {tool,args}[]`), which the workflow machine
 * calls on its JSON context; `StepEnforcer` is the stateful wrapper for foreign loops.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { Prerequisite } from "../core/tool.js";
import { blockedBatchResults, type BlockedResult } from "./blocked-batch.js";
import { budgetOption, isExhausted } from "./error-tracker.js";
import { prerequisiteMessage, stepNudgeMessage, type Nudge } from "./nudges.js";
import { findPrerequisiteViolations, type PrerequisiteViolation } from "./prerequisites.js";

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

export interface StepEnforcerOptions {
  requiredSteps?: readonly string[];
  terminalTools?: readonly string[];
  /** Tool definitions (only `prerequisites` is read). */
  tools?: Readonly<Record<string, { prerequisites: readonly Prerequisite[] }>>;
  /** Alternative to `tools`: prerequisites by tool name. */
  toolPrerequisites?: Readonly<Record<string, readonly Prerequisite[]>>;
  maxPrematureAttempts?: number;
  maxPrereqViolations?: number;
}

/**
 * @example
 * const steps = new StepEnforcer({ requiredSteps: ["search"], terminalTools: ["answer"] });
 * steps.check([{ tool: "answer" }]);          // needsNudge, tier 1
 * steps.record("search", { q: "x" });
 * steps.check([{ tool: "answer" }]).needsNudge; // false
 */
export class StepEnforcer {
  readonly requiredSteps: readonly string[];
  readonly terminalTools: readonly string[];
  readonly maxPrematureAttempts: number;
  readonly maxPrereqViolations: number;
  readonly #tools: Readonly<Record<string, { prerequisites: readonly Prerequisite[] }>>;
  #completed: CompletedStep[] = [];
  #premature = 0;
  #prereq = 0;

  constructor(options: StepEnforcerOptions = {}) {
    if (options.tools !== undefined && options.toolPrerequisites !== undefined) {
      throw new InvalidArgumentError("tools", "give either tools or toolPrerequisites, not both");
    }
    this.requiredSteps = Object.freeze([...(options.requiredSteps ?? [])]);
    this.terminalTools = Object.freeze([...(options.terminalTools ?? [])]);
    this.maxPrematureAttempts = budgetOption("maxPrematureAttempts", options.maxPrematureAttempts, 3);
    this.maxPrereqViolations = budgetOption("maxPrereqViolations", options.maxPrereqViolations, 2);
    const byName = options.toolPrerequisites ?? {};
    this.#tools =
      options.tools ?? Object.fromEntries(Object.entries(byName).map(([name, prerequisites]) => [name, { prerequisites }]));
  }

  /** Premature-terminal check; counts an attempt when it blocks. */
  check(calls: readonly { tool: string }[]): StepCheck {
    const premature = findPrematureTerminal(calls, this.terminalTools, this.requiredSteps, this.#completed);
    if (!premature) return { needsNudge: false };
    this.#premature += 1;
    return stepBlock(calls, premature, this.#premature, this.maxPrematureAttempts);
  }

  /** Prerequisite check against pre-batch state; counts a violation when it blocks. */
  checkPrerequisites(calls: readonly { tool: string; args: unknown }[]): StepCheck {
    const violations = findPrerequisiteViolations(calls, this.#tools, this.#completed);
    if (violations.length === 0) return { needsNudge: false };
    this.#prereq += 1;
    return prerequisiteBlock(calls, violations, this.#prereq, this.maxPrereqViolations);
  }

  /** Record a successful execution (any tool, not only required ones: prerequisites need them all). */
  record(tool: string, args: unknown = {}): void {
    this.#completed.push({ tool, args });
  }

  isSatisfied(): boolean {
    return this.pending().length === 0;
  }

  pending(): string[] {
    return pendingSteps(this.requiredSteps, this.#completed);
  }

  resetPremature(): void {
    this.#premature = 0;
  }

  resetPrereqViolations(): void {
    this.#prereq = 0;
  }

  summaryHint(): string {
    return summaryHint(this.#completed);
  }

  get prematureAttempts(): number {
    return this.#premature;
  }

  get prematureExhausted(): boolean {
    return isExhausted(this.#premature, this.maxPrematureAttempts);
  }

  get prereqViolations(): number {
    return this.#prereq;
  }

  get prereqExhausted(): boolean {
    return isExhausted(this.#prereq, this.maxPrereqViolations);
  }

  /** A copy: callers cannot rewrite history. */
  get completedSteps(): CompletedStep[] {
    return this.#completed.map((s) => ({ ...s }));
  }
}
