/**
 * Every error forge-ts throws, in one file (undici's lib/core/errors.js is the model).
 *
 * Each class has a stable literal `code`, structured context fields and an optional `cause`.
 * `isInstance()` checks the code-branded symbol instead of the prototype chain, so checks
 * survive two copies of forge-ts in one process. `toJSON()` keeps errors JSON-safe for the
 * machine context and persisted snapshots.
 */

const kForgeError = Symbol.for("forge-ts.error");

export interface ErrorJSON {
  name: string;
  code: string;
  message: string;
  data: Record<string, unknown>;
}

export class ForgeError extends Error {
  readonly code: string = "FORGE_ERROR";
  readonly [kForgeError] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** Structured context fields (JSON-safe); subclasses add theirs. */
  get data(): Record<string, unknown> {
    return {};
  }

  toJSON(): ErrorJSON {
    return { name: this.name, code: this.code, message: this.message, data: this.data };
  }

  static isInstance(value: unknown): value is ForgeError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[kForgeError] === true;
  }
}

/** Options of the constructor are validated up front; a bad one names itself and what to use. */
export class InvalidArgumentError extends ForgeError {
  override readonly code = "FORGE_INVALID_ARGUMENT";
  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`Invalid ${argument}: ${message}`);
  }
  override get data() {
    return { argument: this.argument };
  }
}

/** A Workflow failed its construction-time checks. */
export class WorkflowDefinitionError extends ForgeError {
  override readonly code = "FORGE_WORKFLOW_DEFINITION";
  constructor(
    message: string,
    readonly workflow?: string,
  ) {
    super(workflow ? `Workflow "${workflow}": ${message}` : message);
  }
  override get data() {
    return { workflow: this.workflow };
  }
}

/** A tool definition is unusable (malformed schema, missing name, ...). */
export class ToolDefinitionError extends ForgeError {
  override readonly code = "FORGE_TOOL_DEFINITION";
  constructor(
    readonly toolName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`Tool "${toolName}": ${message}`, options);
  }
  override get data() {
    return { toolName: this.toolName };
  }
}

/** The model failed to produce a valid tool call within the retry budget. */
export class ToolCallError extends ForgeError {
  override readonly code = "FORGE_TOOL_CALL";
  readonly rawResponse: string | undefined;
  readonly attempt: number | undefined;
  readonly lastError: string | undefined;
  constructor(
    message: string,
    fields: { rawResponse?: string; attempt?: number; lastError?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: fields.cause });
    this.rawResponse = fields.rawResponse;
    this.attempt = fields.attempt;
    this.lastError = fields.lastError;
  }
  override get data() {
    return { rawResponse: this.rawResponse, attempt: this.attempt, lastError: this.lastError };
  }
}

/** A tool kept throwing and the model did not self-correct within maxToolErrors. */
export class ToolExecutionError extends ForgeError {
  override readonly code = "FORGE_TOOL_EXECUTION";
  constructor(
    readonly toolName: string,
    readonly lastError: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(`Tool "${toolName}" failed ${attempts} consecutive time(s); last error: ${lastError}`, options);
  }
  override get data() {
    return { toolName: this.toolName, lastError: this.lastError, attempts: this.attempts };
  }
}

/**
 * Thrown by tool authors: the arguments were valid but the data did not resolve
 * (unknown id, empty search). Not a ForgeError: the loop feeds it back to the model
 * without counting it as a tool error and without recording the step.
 */
export class ToolResolutionError extends Error {
  readonly code = "FORGE_TOOL_RESOLUTION";
  constructor(
    message: string,
    readonly toolName?: string,
  ) {
    super(message);
    this.name = "ToolResolutionError";
  }
  static isInstance(value: unknown): value is ToolResolutionError {
    if (!(value instanceof Error)) return false;
    try {
      return (value as { code?: unknown }).code === "FORGE_TOOL_RESOLUTION";
    } catch {
      return false; // a throwing `code` getter is not ours
    }
  }
}

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

export class BudgetResolutionError extends ForgeError {
  override readonly code = "FORGE_BUDGET_RESOLUTION";
  constructor(message = "No context budget could be determined from any source", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** nvidia-smi answered, but its output could not be parsed. */
export class HardwareDetectionError extends ForgeError {
  override readonly code = "FORGE_HARDWARE_DETECTION";
  constructor(
    message: string,
    readonly output: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  override get data() {
    return { output: this.output };
  }
}

/** The backend's context-length answer could not be parsed. */
export class ContextDiscoveryError extends ForgeError {
  override readonly code = "FORGE_CONTEXT_DISCOVERY";
  constructor(
    message: string,
    readonly body: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  override get data() {
    return { body: this.body };
  }
}

/** An unexpected HTTP answer (or read timeout, as 408) from the LLM backend. */
export class BackendError extends ForgeError {
  override readonly code: string = "FORGE_BACKEND";
  constructor(
    readonly statusCode: number,
    readonly body: string,
    message?: string,
    options?: { cause?: unknown },
  ) {
    super(message ?? `Backend answered HTTP ${statusCode}: ${body.slice(0, 500)}`, options);
  }
  override get data() {
    return { statusCode: this.statusCode, body: this.body };
  }
}

export class ThinkingNotSupportedError extends BackendError {
  override readonly code = "FORGE_THINKING_NOT_SUPPORTED";
  constructor(
    readonly model: string,
    statusCode = 400,
    body = "",
  ) {
    super(statusCode, body, `Model "${model}" does not support thinking, but think=true was requested`);
  }
  override get data() {
    return { model: this.model, statusCode: this.statusCode, body: this.body };
  }
}

/** A stream ended without a FINAL chunk, or stayed malformed after its one re-request. */
export class StreamError extends ForgeError {
  override readonly code = "FORGE_STREAM";
  constructor(message = "Stream ended without FINAL chunk", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** recommendedSampling was asked for a model forge-ts has no card values for. */
export class UnsupportedModelError extends ForgeError {
  override readonly code = "FORGE_UNSUPPORTED_MODEL";
  constructor(readonly model: string) {
    super(`No recommended sampling values are known for model "${model}"; pass sampling options explicitly`);
  }
  override get data() {
    return { model: this.model };
  }
}

/** A persisted snapshot cannot be restored (other machine version, unresolvable services). */
export class SnapshotError extends ForgeError {
  override readonly code = "FORGE_SNAPSHOT";
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
  override get data() {
    return this.details;
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
 * An LLMClient broke the `LLMResponse` contract (not an object, unknown `type`, missing
 * `content`, `toolCalls` that are not call objects, values that are not JSON). Names the client
 * and shows (a preview of) what it returned.
 */
export class ClientContractError extends ForgeError {
  override readonly code = "FORGE_CLIENT_CONTRACT";
  constructor(
    readonly client: string,
    readonly issues: string[],
    readonly received: string,
  ) {
    super(`${client} broke the LLMResponse contract: ${issues.join("; ")} (received ${received})`);
  }
  override get data() {
    return { client: this.client, issues: this.issues, received: this.received };
  }
}

/**
 * One model call kept failing the request guardrails (unknown tools, invalid arguments, not
 * the requested JSON) until its budget ran out (`forge-ts/ai-sdk`'s `forgeGuardrails`, which
 * throws instead of handing the caller an answer it would have to re-check).
 */
export class GuardrailsExhaustedError extends ForgeError {
  override readonly code = "FORGE_GUARDRAILS_EXHAUSTED";
  constructor(
    readonly reason: "retries" | "tool_errors",
    readonly attempts: number,
    readonly lastError: string,
  ) {
    super(`The model's answer failed the guardrails ${attempts} time(s) (${reason} budget spent); last: ${lastError}`);
  }
  override get data() {
    return { reason: this.reason, attempts: this.attempts, lastError: this.lastError };
  }
}

/**
 * A tool ran past its deadline (`defineTool({ timeoutMs })` or the runner's `toolTimeoutMs`):
 * its signal was aborted and the call failed as a tool error fed back to the model.
 */
export class ToolTimeoutError extends ForgeError {
  override readonly code = "FORGE_TOOL_TIMEOUT";
  constructor(
    readonly toolName: string,
    readonly timeoutMs: number,
  ) {
    super(`Tool "${toolName}" did not finish within its ${timeoutMs} ms deadline; it was aborted`);
  }
  override get data() {
    return { toolName: this.toolName, timeoutMs: this.timeoutMs };
  }
}

/**
 * A tool returned a value that has no JSON form (BigInt, a cycle, a throwing `toJSON`, a
 * function). Fed back to the model as a tool error; for a terminal tool it fails the run,
 * since its result is what `run()` returns and snapshots must stay JSON.
 */
export class ToolResultError extends ForgeError {
  override readonly code = "FORGE_TOOL_RESULT";
  constructor(
    readonly toolName: string,
    readonly reason: string,
    readonly terminal: boolean,
    options?: { cause?: unknown },
  ) {
    super(`Tool "${toolName}" returned a value that is not JSON-serializable: ${reason}`, options);
  }
  override get data() {
    return { toolName: this.toolName, reason: this.reason, terminal: this.terminal };
  }
}

/** A backend server process could not be started or stopped. */
export class ServerError extends ForgeError {
  override readonly code = "FORGE_SERVER";
  constructor(
    message: string,
    readonly stderrTail: string = "",
    options?: { cause?: unknown },
  ) {
    super(stderrTail ? `${message}\n--- server stderr (tail) ---\n${stderrTail}` : message, options);
  }
  override get data() {
    return { stderrTail: this.stderrTail };
  }
}

/** A run store could not read or write: names the run and the file (or table) involved. */
export class StoreError extends ForgeError {
  override readonly code: string = "FORGE_STORE";
  constructor(
    message: string,
    readonly runId: string | undefined,
    readonly location: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  override get data() {
    return { runId: this.runId ?? null, location: this.location };
  }
}

/**
 * A run's event log cannot re-drive it: call arguments in it were masked when it was written
 * (`WorkflowRunner({ redactStoredLogs: true })`), so a replay would validate and match other
 * calls than the run made. Resume still works (it reads the checkpoints, which keep what it needs).
 */
export class RunNotReplayableError extends StoreError {
  override readonly code = "FORGE_RUN_NOT_REPLAYABLE";
  constructor(
    runId: string,
    readonly reason: string,
  ) {
    super(`run ${runId} cannot be replayed: ${reason}`, runId, "events");
  }
  override get data() {
    return { ...super.data, reason: this.reason };
  }
}

/**
 * Another live runner (this process or another machine) holds the run's lease: two writers would
 * fork its history. `expiresInMs` is how long the lease lasts unless its holder renews it
 * (measured on the store's clock), so a caller knows when to try again.
 */
export class RunLockedError extends StoreError {
  override readonly code = "FORGE_RUN_LOCKED";
  constructor(
    runId: string,
    location: string,
    readonly holder: string,
    readonly expiresInMs: number,
  ) {
    super(
      `run ${runId} is held by ${holder}, whose lease ends in ${(Math.max(0, expiresInMs) / 1000).toFixed(1)} s unless renewed (${location}); stop that runner first, or try again after the lease`,
      runId,
      location,
    );
  }
  override get data() {
    return { ...super.data, holder: this.holder, expiresInMs: this.expiresInMs };
  }
}

/**
 * This runner no longer holds the run: a newer holder took the lease over (ours lapsed while the
 * process was paused, partitioned or too slow to renew), or it could not be renewed in time. The
 * store refused the write carrying our fencing token; the runner stops driving the run and starts
 * no further tool.
 */
export class RunLockLostError extends StoreError {
  override readonly code = "FORGE_LOCK_LOST";
  constructor(
    runId: string,
    location: string,
    readonly fence: number,
    readonly reason: string,
  ) {
    super(`run ${runId}: lease ${fence} is lost (${reason}) (${location}); this runner stopped driving the run`, runId, location);
  }
  override get data() {
    return { ...super.data, fence: this.fence, reason: this.reason };
  }
}

/**
 * A queued session turn that did not run: an earlier turn of the session failed or was
 * cancelled (`failedRunId`, turn `failedTurn`), and this turn was enqueued with
 * `afterFailure: "fail"` (the default). Later turns of the session fail the same way.
 */
export class SessionTurnFailedError extends ForgeError {
  override readonly code = "FORGE_SESSION_TURN_FAILED";
  constructor(
    readonly sessionId: string,
    readonly runId: string,
    readonly turn: number,
    readonly failedRunId: string,
    readonly failedTurn: number,
    readonly outcome: "failed" | "cancelled" = "failed",
  ) {
    super(
      `session ${sessionId}: turn ${turn} (run ${runId}) did not run because turn ${failedTurn} (run ${failedRunId}) ${outcome}; enqueue with afterFailure: "continue" to run later turns anyway`,
    );
  }
  override get data() {
    return { sessionId: this.sessionId, runId: this.runId, turn: this.turn, failedRunId: this.failedRunId, failedTurn: this.failedTurn, outcome: this.outcome };
  }
}

/** One problem in a proxy config file, at the line and column (1-based) of the offending JSON value. */
export interface ProxyConfigIssue {
  line: number;
  column: number;
  /** JSON path of the value, e.g. `backends.gpu0.maxConcurrent` ("" for the whole file). */
  path: string;
  message: string;
}

/**
 * The proxy's fleet config file (`forge-ts proxy --config`) is malformed: not JSON, a value of
 * the wrong type, an unknown key, a model naming a backend that is not defined, an alias used
 * twice. Names the file and every problem's line and column; the first problem's position is
 * also on the error itself.
 */
export class ProxyConfigError extends ForgeError {
  override readonly code = "FORGE_PROXY_CONFIG";
  readonly line: number;
  readonly column: number;
  readonly path: string;
  constructor(
    readonly file: string,
    readonly issues: ProxyConfigIssue[],
  ) {
    super(issues.map((i) => `${file}:${i.line}:${i.column}: ${i.path === "" ? "" : `${i.path}: `}${i.message}`).join("\n"));
    const first = issues[0] ?? { line: 1, column: 1, path: "" };
    this.line = first.line;
    this.column = first.column;
    this.path = first.path;
  }
  override get data() {
    return { file: this.file, line: this.line, column: this.column, path: this.path, issues: this.issues };
  }
}

/**
 * Every backend serving the model was at its `maxConcurrent` and the proxy's wait queue was full
 * (`queue_full`) or the request waited `maxWaitMs` without a free slot (`wait_timeout`). The
 * proxy answers 429 with `Retry-After` (seconds, rounded up from `retryAfterMs`).
 */
export class BackendBusyError extends ForgeError {
  override readonly code = "FORGE_BACKEND_BUSY";
  /** The HTTP status callers get, read by the proxy's error mapping like BackendError's. */
  readonly statusCode = 429;
  constructor(
    readonly model: string,
    readonly reason: "queue_full" | "wait_timeout",
    readonly retryAfterMs: number,
  ) {
    super(
      reason === "queue_full"
        ? `Every backend serving "${model}" is busy and the wait queue is full; retry in ${Math.ceil(retryAfterMs / 1000)} s`
        : `Every backend serving "${model}" stayed busy for as long as a request may wait; retry in ${Math.ceil(retryAfterMs / 1000)} s`,
    );
  }
  override get data() {
    return { model: this.model, reason: this.reason, retryAfterMs: this.retryAfterMs };
  }
}

/** One call waiting for a person, as errors and outcomes report it. */
export interface PendingHumanRequest {
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  kind: "approval" | "input";
  askedAt: number;
}

/**
 * `runner.run()` / `resume()` reached a batch that needs a person and no `onHumanRequest`
 * answers in-process: the run is checkpointed as `waiting` (with a store) and its requests are
 * here. Not a failure; `runner.start()` / `proceed()` return the same as a value instead.
 */
export class RunWaitingError extends ForgeError {
  override readonly code = "FORGE_RUN_WAITING";
  constructor(
    readonly runId: string,
    readonly requests: PendingHumanRequest[],
  ) {
    super(`run ${runId} is waiting for a person: ${requests.map((r) => `${r.kind} of ${r.tool} (call ${r.callId})`).join(", ")}`);
  }
  override get data() {
    return { runId: this.runId, requests: this.requests };
  }
}

/**
 * A decision that cannot be taken: the run is not waiting, the call is unknown or already
 * decided, the decision does not fit the request (answer for an approval), or edited args fail
 * the tool's schema. `problem` is the stable reason.
 */
export class HumanDecisionError extends ForgeError {
  override readonly code = "FORGE_HUMAN_DECISION";
  constructor(
    readonly runId: string,
    readonly callId: string,
    readonly problem: "not_waiting" | "unknown_call" | "already_decided" | "wrong_kind" | "invalid_args" | "invalid_decision",
    message: string,
  ) {
    super(message);
  }
  override get data() {
    return { runId: this.runId, callId: this.callId, problem: this.problem };
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

/** A person did not decide within the workflow's `maxWaitMs` and the run was set to fail then. */
export class HumanWaitTimeoutError extends ForgeError {
  override readonly code = "FORGE_HUMAN_WAIT_TIMEOUT";
  constructor(
    readonly waitedMs: number,
    readonly maxWaitMs: number,
    readonly pending: string[],
  ) {
    super(`no decision on ${pending.join(", ")} within ${maxWaitMs} ms (waited ${waitedMs} ms)`);
  }
  override get data() {
    return { waitedMs: this.waitedMs, maxWaitMs: this.maxWaitMs, pending: this.pending };
  }
}

/**
 * An MCP server (`mcpTools()`, `forge-ts run --mcp`) could not be started or reached, exited or
 * lost its connection, or was already closed. Names the server and ends with the tail of its
 * stderr when it is a process. Thrown by `mcpTools()` at connect time; from a tool call it is a
 * tool error like any throwing tool's.
 */
export class McpServerError extends ForgeError {
  override readonly code = "FORGE_MCP_SERVER";
  constructor(
    readonly server: string,
    readonly reason: string,
    readonly stderrTail: string = "",
    options?: { cause?: unknown },
  ) {
    super(`MCP server "${server}" ${reason}${stderrTail ? `\n--- server stderr (tail) ---\n${stderrTail}` : ""}`, options);
  }
  override get data() {
    return { server: this.server, reason: this.reason, stderrTail: this.stderrTail };
  }
}

/**
 * An MCP tool answered with `isError: true`, or the server refused the call (a JSON-RPC error
 * such as an unknown tool). The message is what the server said; it reaches the model on the
 * tool-error channel. The raw result, when there was one, is on `result` (not in `data`).
 */
export class McpToolError extends ForgeError {
  override readonly code = "FORGE_MCP_TOOL";
  constructor(
    readonly server: string,
    readonly tool: string,
    message: string,
    readonly result?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  override get data() {
    return { server: this.server, tool: this.tool };
  }
}

/**
 * An eval fixture (a resource a scenario family shares across runs, such as an MCP server) was
 * used while not open, or released more often than acquired: a harness bug, never model data.
 */
export class EvalFixtureError extends ForgeError {
  override readonly code = "FORGE_EVAL_FIXTURE";
  constructor(
    readonly fixture: string,
    message: string,
  ) {
    super(`eval fixture "${fixture}": ${message}`);
  }
  override get data() {
    return { fixture: this.fixture };
  }
}

/** Render any thrown value as a short string for feeding back to the model. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${safeProperty(error, "name")}: ${safeProperty(error, "message")}`;
  return safeString(error);
}

/** A string property of a thrown Error; a getter that throws or a non-string still gives text. */
function safeProperty(error: Error, key: "name" | "message"): string {
  try {
    const value: unknown = error[key];
    return typeof value === "string" ? value : safeString(value);
  } catch {
    return `[unreadable ${key}]`;
  }
}

/** String(value), except for values that refuse conversion (e.g. Object.create(null)). */
export function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

type Revivable = (data: Record<string, unknown>, message: string) => Error;
const asStrings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
const asNumber = (v: unknown): number => (typeof v === "number" ? v : 0);
const asText = (v: unknown): string => (typeof v === "string" ? v : "");

const REVIVERS: Record<string, Revivable> = {
  FORGE_TOOL_CALL: (d, m) =>
    new ToolCallError(m, {
      rawResponse: d.rawResponse as string | undefined,
      attempt: d.attempt as number | undefined,
      lastError: d.lastError as string | undefined,
    }),
  FORGE_TOOL_EXECUTION: (d) => new ToolExecutionError(asText(d.toolName), asText(d.lastError), asNumber(d.attempts)),
  FORGE_MAX_ITERATIONS: (d) => new MaxIterationsError(asNumber(d.iterations), asStrings(d.completedSteps), asStrings(d.pendingSteps)),
  FORGE_BUDGET_EXHAUSTED: (d) =>
    new BudgetExhaustedError(d.reason as BudgetReason, asNumber(d.used), asNumber(d.limit), asStrings(d.completedSteps)),
  FORGE_STEP_ENFORCEMENT: (d) => new StepEnforcementError(asText(d.terminalTool), asNumber(d.attempts), asStrings(d.pendingSteps)),
  FORGE_PREREQUISITE: (d) => new PrerequisiteError(asText(d.toolName), asNumber(d.violations), asStrings(d.missingPrereqs)),
  FORGE_WORKFLOW_CANCELLED: (d) =>
    new WorkflowCancelledError(Array.isArray(d.messages) ? d.messages : [], asStrings(d.completedSteps), asNumber(d.iteration), d.reason as string | undefined),
  FORGE_CONTEXT_BUDGET_EXCEEDED: (d) =>
    new ContextBudgetExceeded(asNumber(d.estimatedTokens), asNumber(d.budgetTokens), d.phaseReached as number | undefined),
  FORGE_BACKEND: (d, m) => new BackendError(asNumber(d.statusCode), asText(d.body), m),
  FORGE_THINKING_NOT_SUPPORTED: (d) => new ThinkingNotSupportedError(asText(d.model), asNumber(d.statusCode), asText(d.body)),
  FORGE_STREAM: (_d, m) => new StreamError(m),
  FORGE_CALLBACK: (d) => new CallbackError(d.callback as CallbackName, asText(d.error)),
  FORGE_CLIENT_CONTRACT: (d) => new ClientContractError(asText(d.client), asStrings(d.issues), asText(d.received)),
  FORGE_GUARDRAILS_EXHAUSTED: (d) => new GuardrailsExhaustedError(d.reason === "tool_errors" ? "tool_errors" : "retries", asNumber(d.attempts), asText(d.lastError)),
  FORGE_TOOL_TIMEOUT: (d) => new ToolTimeoutError(asText(d.toolName), asNumber(d.timeoutMs)),
  FORGE_TOOL_RESULT: (d) => new ToolResultError(asText(d.toolName), asText(d.reason), d.terminal === true),
  FORGE_MCP_SERVER: (d) => new McpServerError(asText(d.server), asText(d.reason), asText(d.stderrTail)),
  FORGE_MCP_TOOL: (d, m) => new McpToolError(asText(d.server), asText(d.tool), m),
  FORGE_CHILD_WORKFLOW: (d) =>
    new ChildWorkflowError(asText(d.workflow), asText(d.runId), d.reason as ChildWorkflowError["reason"], asText(d.detail), typeof d.childCode === "string" ? d.childCode : undefined),
  FORGE_HUMAN_WAIT_TIMEOUT: (d) => new HumanWaitTimeoutError(asNumber(d.waitedMs), asNumber(d.maxWaitMs), asStrings(d.pending)),
};

/**
 * Rebuild a typed error from its `toJSON()` form (the machine context and snapshots keep
 * errors as JSON). Unknown codes come back as a plain Error carrying name and message.
 */
export function reviveError(json: ErrorJSON): Error {
  const revive = Object.hasOwn(REVIVERS, json.code) ? REVIVERS[json.code] : undefined;
  if (revive) return revive(json.data ?? {}, json.message);
  const error = new Error(json.message);
  error.name = json.name;
  return error;
}

/** JSON form of any thrown value, ForgeError or not. */
export function errorToJSON(error: unknown): ErrorJSON {
  if (ForgeError.isInstance(error)) return error.toJSON();
  if (error instanceof Error) {
    let raw: unknown;
    try {
      raw = (error as { code?: unknown }).code;
    } catch {
      raw = undefined; // a throwing `code` getter: the error still needs a JSON form
    }
    const code = typeof raw === "string" ? raw : "ERR_UNKNOWN";
    return { name: safeProperty(error, "name"), code, message: safeProperty(error, "message"), data: {} };
  }
  return { name: "Error", code: "ERR_UNKNOWN", message: safeString(error), data: {} };
}
