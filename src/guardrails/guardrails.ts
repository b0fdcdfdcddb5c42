/**
 * The `Guardrails` facade for foreign loops (seed 002, "Middleware"): `check(response)` before
 * executing anything, `record(results)` after. It composes ResponseValidator, StepEnforcer,
 * ErrorTracker and the loop break; the caller routes the returned messages into its own history.
 */
import { InvalidArgumentError, PrerequisiteError, StepEnforcementError, ToolCallError, ToolExecutionError, type ForgeError } from "../core/errors.js";
import type { LLMResponse, ToolCall } from "../core/llm.js";
import type { AnyToolDef } from "../core/tool.js";
import { batchOutcome, type ExecutedResult } from "./batch-outcome.js";
import { blockedBatchResults, type BlockedResult } from "./blocked-batch.js";
import { ErrorTracker, budgetOption } from "./error-tracker.js";
import { countCalls, DEFAULT_MAX_TOOL_REPEAT, findRepeatViolations } from "./loop-break.js";
import { loopBreakMessage, type Nudge } from "./nudges.js";
import { assertValidatorTools, rejectionBudget, toolNamesOf, validateResponse, type ValidatedCall, type ValidatorTools } from "./response-validator.js";
import { StepEnforcer, type CompletedStep } from "./step-enforcer.js";

export type GuardrailDecision =
  | { action: "execute"; toolCalls: ValidatedCall[] }
  | { action: "retry"; nudge: Nudge }
  | { action: "tool_error"; toolCalls: ToolCall[]; results: BlockedResult[] }
  | { action: "step_blocked"; toolCalls: ValidatedCall[]; results: BlockedResult[]; kind: "step" | "prerequisite"; tier: number }
  | { action: "fatal"; error: ForgeError };

export interface GuardrailsOptions {
  /** Tool definitions: enables schema validation and prerequisites. Give this or `toolNames`. */
  tools?: Readonly<Record<string, AnyToolDef>>;
  /** Bare tool names (no schema or prerequisite checks). Include "respond" for the synthetic respond tool. */
  toolNames?: readonly string[];
  requiredSteps?: readonly string[];
  terminalTools?: string | readonly string[];
  rescueEnabled?: boolean;
  maxRetries?: number;
  maxToolErrors?: number;
  maxPrematureAttempts?: number;
  maxPrereqViolations?: number;
  maxToolRepeat?: number;
}

/**
 * @example
 * const guard = new Guardrails({ tools: { search, answer }, requiredSteps: ["search"], terminalTools: "answer" });
 * const decision = guard.check(await model.send(messages));
 * if (decision.action === "execute") {
 *   const results = await runTools(decision.toolCalls);
 *   const { done, fatal } = guard.record(results);
 * }
 */
export class Guardrails {
  readonly toolNames: readonly string[];
  readonly maxToolRepeat: number;
  readonly #tools: ValidatorTools;
  readonly #rescueEnabled: boolean;
  readonly #steps: StepEnforcer;
  readonly #errors: ErrorTracker;
  #callCounts: Record<string, number> = {};

  constructor(options: GuardrailsOptions) {
    if ((options.tools === undefined) === (options.toolNames === undefined)) {
      throw new InvalidArgumentError("tools", "give exactly one of tools (definitions) or toolNames");
    }
    const given: unknown = options.tools ?? options.toolNames;
    assertValidatorTools(given);
    this.#tools = Array.isArray(given) ? [...given] : given;
    this.toolNames = Object.freeze(toolNamesOf(this.#tools));
    if (this.toolNames.length === 0) throw new InvalidArgumentError("tools", "at least one tool is required");
    const terminal = typeof options.terminalTools === "string" ? [options.terminalTools] : [...(options.terminalTools ?? [])];
    const required = [...(options.requiredSteps ?? [])];
    for (const [field, list] of [["requiredSteps", required], ["terminalTools", terminal]] as const) {
      const unknown = list.filter((t) => !this.toolNames.includes(t));
      if (unknown.length > 0) throw new InvalidArgumentError(field, `unknown tool(s) ${unknown.join(", ")}; tools are ${this.toolNames.join(", ")}`);
    }
    const both = terminal.filter((t) => required.includes(t));
    if (both.length > 0) throw new InvalidArgumentError("terminalTools", `${both.join(", ")} cannot also be a required step`);
    this.#rescueEnabled = options.rescueEnabled ?? true;
    this.maxToolRepeat = budgetOption("maxToolRepeat", options.maxToolRepeat, DEFAULT_MAX_TOOL_REPEAT);
    this.#errors = new ErrorTracker({ maxRetries: options.maxRetries, maxToolErrors: options.maxToolErrors });
    this.#steps = new StepEnforcer({
      requiredSteps: required,
      terminalTools: terminal,
      ...(options.tools ? { tools: options.tools } : {}),
      maxPrematureAttempts: options.maxPrematureAttempts,
      maxPrereqViolations: options.maxPrereqViolations,
    });
  }

  /** Decide what to do with one model response. Call before executing anything. */
  check(response: LLMResponse): GuardrailDecision {
    const validation = validateResponse(response, { tools: this.#tools, rescueEnabled: this.#rescueEnabled });
    if (validation.kind === "retry") {
      this.#errors.recordRetry();
      if (this.#errors.retriesExhausted) {
        const n = this.#errors.retries;
        return fatal(new ToolCallError(`No usable tool call in ${n} consecutive response(s)`, { rawResponse: validation.raw, attempt: n, lastError: validation.nudge.content }));
      }
      return { action: "retry", nudge: validation.nudge };
    }
    if (validation.kind === "rejected") {
      const first = validation.rejections.find((r) => r.kind !== "batch_skipped") ?? validation.rejections[0]!;
      if (rejectionBudget(validation.rejections) === "retries") {
        this.#errors.recordRetry();
        if (this.#errors.retriesExhausted) {
          const n = this.#errors.retries;
          return fatal(new ToolCallError(`Invalid tool call in ${n} consecutive response(s)`, { rawResponse: JSON.stringify(validation.calls), attempt: n, lastError: first.message }));
        }
      } else {
        // Every call names a known tool: a valid tool call as far as the retry budget goes
        // (seed 000, 3d), so retries start over — the workflow machine does the same.
        this.#errors.resetRetries();
        const f = this.#countToolError(first.tool, first.message);
        if (f) return f;
      }
      const results = validation.rejections.map(({ index, tool, message }) => ({ index, tool, content: message }));
      return { action: "tool_error", toolCalls: validation.calls, results };
    }

    this.#errors.resetRetries();
    const calls = validation.calls;
    const step = this.#steps.check(calls);
    if (!step.needsNudge) {
      const prereq = this.#steps.checkPrerequisites(calls);
      if (prereq.needsNudge) {
        if (prereq.kind === "prerequisite" && prereq.exhausted) {
          const v = prereq.violations[0]!;
          return fatal(new PrerequisiteError(v.tool, prereq.attempts, v.missing));
        }
        return { action: "step_blocked", toolCalls: calls, results: prereq.results, kind: "prerequisite", tier: prereq.tier };
      }
    } else {
      if (step.kind === "step" && step.exhausted) return fatal(new StepEnforcementError(step.terminalTool, step.attempts, step.pending));
      return { action: "step_blocked", toolCalls: calls, results: step.results, kind: "step", tier: step.tier };
    }

    const repeats = findRepeatViolations(calls, this.#callCounts, this.maxToolRepeat);
    if (repeats.length > 0) {
      const offending = new Map(repeats.map((r) => [r.index, loopBreakMessage(r.tool, r.count)] as const));
      const first = repeats[0]!;
      const f = this.#countToolError(first.tool, offending.get(first.index)!);
      if (f) return f;
      return { action: "tool_error", toolCalls: calls, results: blockedBatchResults(calls, offending) };
    }
    return { action: "execute", toolCalls: calls };
  }

  /**
   * Report what happened to the executed calls. Successful calls become completed steps; a fully
   * successful batch resets the tool-error, premature and prerequisite counters.
   */
  record(results: readonly ExecutedResult[]): { done: boolean; fatal?: ForgeError } {
    const outcome = batchOutcome(results, this.#steps.terminalTools);
    this.#callCounts = countCalls(this.#callCounts, results);
    for (const s of outcome.steps) this.#steps.record(s.tool, s.args);
    if (outcome.hadError && outcome.lastFailure) {
      const { tool, error } = outcome.lastFailure;
      this.#errors.recordResult(false);
      if (this.#errors.toolErrorsExhausted) {
        const message = error instanceof Error ? error.message : String(error);
        return { done: false, fatal: new ToolExecutionError(tool, message, this.#errors.toolErrors, { cause: error }) };
      }
    } else {
      this.#errors.resetErrors();
      this.#steps.resetPremature();
      this.#steps.resetPrereqViolations();
    }
    return { done: outcome.terminalSucceeded };
  }

  /** Current counters, shaped like the workflow machine's `counters`. */
  get counters(): { retries: number; toolErrors: number; premature: number; prereq: number } {
    return {
      retries: this.#errors.retries,
      toolErrors: this.#errors.toolErrors,
      premature: this.#steps.prematureAttempts,
      prereq: this.#steps.prereqViolations,
    };
  }

  get completedSteps(): CompletedStep[] {
    return this.#steps.completedSteps;
  }

  get callCounts(): Record<string, number> {
    return { ...this.#callCounts };
  }

  pending(): string[] {
    return this.#steps.pending();
  }

  summaryHint(): string {
    return this.#steps.summaryHint();
  }

  #countToolError(tool: string, message: string): GuardrailDecision | undefined {
    this.#errors.recordResult(false);
    if (!this.#errors.toolErrorsExhausted) return undefined;
    return fatal(new ToolExecutionError(tool, message, this.#errors.toolErrors));
  }
}

function fatal(error: ForgeError): GuardrailDecision {
  return { action: "fatal", error };
}
