/**
 * How a run ends short of its answer: budgets, step and prerequisite enforcement, cancellation,
 * callbacks, child workflows.
 */
import { describeError } from "./describe-error.js";
import { ForgeError } from "./forge-error.js";

export class MaxIterationsError extends ForgeError {
  override readonly code = "FORGE_MAX_ITERATIONS";
  readonly reason = "max_iterations";
  constructor(
    readonly iterations: number,
    readonly completedSteps: string[],
    readonly pendingSteps: string[],
  ) {
    super(
      `Workflow exceeded ${iterations} iteration(s) without calling a terminal tool ` +
        `(completed: [${completedSteps.join(", ")}], pending: [${pendingSteps.join(", ")}])`,
    );
  }
  override get data() {
    return { iterations: this.iterations, completedSteps: this.completedSteps, pendingSteps: this.pendingSteps };
  }
}

export type BudgetReason = "token_budget" | "wall_clock";

/** A run budget beside iterations (total tokens, wall clock) ran out. */
export class BudgetExhaustedError extends ForgeError {
  override readonly code = "FORGE_BUDGET_EXHAUSTED";
  constructor(
    readonly reason: BudgetReason,
    readonly used: number,
    readonly limit: number,
    readonly completedSteps: string[] = [],
  ) {
    super(`Run budget exhausted (${reason}): used ${used} of ${limit}`);
  }
  override get data() {
    return { reason: this.reason, used: this.used, limit: this.limit, completedSteps: this.completedSteps };
  }
}

/** The model kept calling a terminal tool before the required steps were done. */
export class StepEnforcementError extends ForgeError {
  override readonly code = "FORGE_STEP_ENFORCEMENT";
  constructor(
    readonly terminalTool: string,
    readonly attempts: number,
    readonly pendingSteps: string[],
  ) {
    super(
      `Model called terminal tool "${terminalTool}" prematurely ${attempts} time(s); ` +
        `pending steps: [${pendingSteps.join(", ")}]`,
    );
  }
  override get data() {
    return { terminalTool: this.terminalTool, attempts: this.attempts, pendingSteps: this.pendingSteps };
  }
}

/** The model kept calling a tool whose prerequisites were not met. */
export class PrerequisiteError extends ForgeError {
  override readonly code = "FORGE_PREREQUISITE";
  constructor(
    readonly toolName: string,
    readonly violations: number,
    readonly missingPrereqs: string[],
  ) {
    super(
      `Model called "${toolName}" ${violations} time(s) without its prerequisites: [${missingPrereqs.join(", ")}]`,
    );
  }
  override get data() {
    return { toolName: this.toolName, violations: this.violations, missingPrereqs: this.missingPrereqs };
  }
}

export class WorkflowCancelledError extends ForgeError {
  override readonly code = "FORGE_WORKFLOW_CANCELLED";
  constructor(
    readonly messages: unknown[],
    readonly completedSteps: string[],
    readonly iteration: number,
    readonly reason?: string,
  ) {
    super(`Workflow cancelled at iteration ${iteration}${reason ? `: ${reason}` : ""}`);
  }
  override get data() {
    return {
      messages: this.messages,
      completedSteps: this.completedSteps,
      iteration: this.iteration,
      reason: this.reason,
    };
  }
}

/** Still over the context budget after the strongest compaction phase. */
export class ContextBudgetExceeded extends ForgeError {
  override readonly code = "FORGE_CONTEXT_BUDGET_EXCEEDED";
  constructor(
    readonly estimatedTokens: number,
    readonly budgetTokens: number,
    readonly phaseReached?: number,
  ) {
    super(
      `Context of ~${estimatedTokens} tokens exceeds the budget of ${budgetTokens} even after compaction` +
        (phaseReached !== undefined ? ` (phase ${phaseReached})` : ""),
    );
  }
  override get data() {
    return { estimatedTokens: this.estimatedTokens, budgetTokens: this.budgetTokens, phaseReached: this.phaseReached };
  }
}

/** The user callbacks the runner isolates; a throw in any of them fails the run with {@link CallbackError}. */
export type CallbackName = "onStateChange" | "onMessage" | "onChunk" | "inspect" | "onHumanRequest" | "onCompact";

/**
 * A runner callback (`onStateChange`, `onMessage`, `onChunk`, `inspect`) threw or rejected.
 * The run is stopped and fails with this error instead of crashing the process or hanging;
 * the callback's own error is the `cause`.
 */
export class CallbackError extends ForgeError {
  override readonly code = "FORGE_CALLBACK";
  readonly error: string;
  constructor(
    readonly callback: CallbackName,
    cause: unknown,
  ) {
    const error = describeError(cause);
    super(`The ${callback} callback failed (${error}); the run was stopped`, { cause });
    this.error = error;
  }
  override get data() {
    return { callback: this.callback, error: this.error };
  }
}

/**
 * A workflow run as another workflow's tool (`workflowTool`) did not give a result: it failed
 * (`reason: "failed"`, its error's code and message here), waits for a person (`"waiting"`:
 * decide it under `runId`), or could not start because the calling run has no budget left
 * (`"no_budget"`). Thrown inside the calling run's tool call, so its model sees it on the
 * tool-error channel; `runId` is the child run's id in the store.
 */
export class ChildWorkflowError extends ForgeError {
  override readonly code = "FORGE_CHILD_WORKFLOW";
  constructor(
    readonly workflow: string,
    readonly runId: string,
    readonly reason: "failed" | "waiting" | "no_budget",
    readonly detail: string,
    readonly childCode?: string,
    options?: { cause?: unknown },
  ) {
    super(
      reason === "failed"
        ? `workflow "${workflow}" (run ${runId}) failed: ${detail}`
        : reason === "waiting"
          ? `workflow "${workflow}" (run ${runId}) is waiting for a person: ${detail}`
          : `workflow "${workflow}" (run ${runId}) did not start: ${detail}`,
      options,
    );
  }
  override get data() {
    return { workflow: this.workflow, runId: this.runId, reason: this.reason, detail: this.detail, childCode: this.childCode ?? null };
  }
}
