/**
 * What a WorkflowRunner and its runs accept, and the checks that turn a wrong value into an
 * InvalidArgumentError naming the option (rather than a TypeError deep inside a run).
 * Longer than our ~300-line aim on purpose: it is the runner's documented option reference
 * (each option's doc comment is what an editor shows), kept beside the one check of each.
 */
import { deprecate } from "node:util";
import type { Context } from "@opentelemetry/api";
import type { InspectionEvent, Observer } from "xstate";
import { assertTelemetryOptions, type TelemetryOptions } from "../telemetry/telemetry-options.js";
import { CLIENT_OWNED_FIELDS } from "../clients/request-overrides.js";
import type { ContextManager } from "../context/context-manager.js";
import { InvalidArgumentError } from "../core/errors.js";
import type { LLMClient, RequestOverrides, StreamChunk } from "../core/llm.js";
import { MessageSchema, type Message } from "../core/messages.js";
import type { ReasoningReplay } from "../core/wire-messages.js";
import { isPlainObject, jsonIssue } from "../core/json-value.js";
import { previewValue } from "../core/response-contract.js";
import { MAX_TIMER_MS } from "../core/tool.js";
import type { Workflow } from "../core/workflow.js";
import type { WorkflowContext } from "../loop/context.js";
import type { HumanDecision, HumanRequest } from "../loop/human.js";
import { maxResultCharsProblem } from "../loop/result-cap.js";
import type { PersistedRun } from "../persistence/snapshot.js";
import { isRunId, type ParentLink, type RunLaunch, type RunStore } from "../persistence/run-store.js";
import type { ForgeMetrics } from "../telemetry/metrics.js";

/** An inspection observer that may also take streamed chunks and be flushed (see `inspect`). */
export interface InspectionSink extends Observer<InspectionEvent> {
  chunk?(runId: string, chunk: StreamChunk): void;
  flush?(): Promise<void>;
}

/** Once per process, as Node's own deprecations. */
const warnMaxRetriesPerStep = deprecate(() => undefined, "forge-ts: WorkflowRunner option maxRetriesPerStep is deprecated; use maxRetries", "FORGE_DEP_MAX_RETRIES_PER_STEP");

export interface WorkflowRunnerOptions {
  client: LLMClient;
  contextManager: ContextManager;
  /** Hard ceiling on LLM calls per run (retries count). Default 10. */
  maxIterations?: number;
  /**
   * Consecutive unusable responses (bare text, an unknown tool) tolerated: the retry budget, the
   * name `Guardrails`, `forgeGuardrails` and the proxy give it too. 0 = the first is fatal. Default 3.
   */
  maxRetries?: number;
  /** @deprecated The old name of `maxRetries` (a warning on first use); removed in 0.3.0. */
  maxRetriesPerStep?: number;
  /** Consecutive batches with a tool exception tolerated. 0 = first one is fatal. Default 2. */
  maxToolErrors?: number;
  maxPrematureAttempts?: number;
  maxPrereqViolations?: number;
  /** Same tool + same args executed more than this many times gets a loop-break error instead. Default 3. */
  maxToolRepeat?: number;
  /** Total tokens (input + output over all calls) before the run fails with BudgetExhaustedError. */
  maxTotalTokens?: number;
  /**
   * Wall-clock milliseconds before the run fails with BudgetExhaustedError(wall_clock). Enforced
   * by a timer: an in-flight model call or tool is aborted (its `signal`) when it runs out.
   */
  maxWallClockMs?: number;
  /** Deadline in ms for one tool call when the tool sets no `timeoutMs`; past it the call fails as a tool error. */
  toolTimeoutMs?: number;
  /**
   * What the model sees of a tool result, in characters, when the tool sets no `maxResultChars`:
   * longer results are cut with a marker stating the true size. The run's result and `toolEnd`
   * events keep the whole text.
   */
  maxResultChars?: number;
  /**
   * Answers the run's requests for a person in-process (like the Claude Agent SDK's
   * `canUseTool`): called once per pending approval or question; its decision is recorded in
   * the run's log before it is acted on. Without it a run that needs a person stops `waiting`.
   * A throw, a rejection or an invalid decision fails the run (CallbackError / HumanDecisionError).
   */
  onHumanRequest?: (request: HumanRequest) => HumanDecision | Promise<HumanDecision>;
  /** How long a request may wait for a person, in ms (from when it was asked). Unset: forever. */
  maxWaitMs?: number;
  /** What a wait past `maxWaitMs` does: reject the undecided calls (the model is told), or fail the run (HumanWaitTimeoutError). Default "reject". */
  onWaitTimeout?: "reject" | "fail";
  /** More tool calls than this in one response: none run, the model gets a retry nudge (retry budget). Default 64. */
  maxToolCallsPerResponse?: number;
  /** Use client.sendStream; chunks go to onChunk, the loop acts on FINAL only. */
  stream?: boolean;
  /** Awaited for every stream chunk. A throw or rejection fails the run with CallbackError. */
  onChunk?: (chunk: StreamChunk) => void | Promise<void>;
  /** Every message appended during the run (not replayed history). A throw or rejection fails the run with CallbackError. */
  onMessage?: (message: Message) => void;
  /** Every state the machine enters, with its context (read-only). A throw or rejection fails the run with CallbackError. */
  onStateChange?: (state: string, context: Readonly<WorkflowContext>) => void;
  rescueEnabled?: boolean;
  /** false turns off premature-terminal and prerequisite enforcement (ablation). */
  stepEnforcement?: boolean;
  reasoningReplay?: ReasoningReplay;
  /**
   * Sent with every model call of this runner's runs (child runs included): `toolChoice`
   * ("required" forces a tool call where the backend has tool_choice) and `body` fields in
   * OpenAI chat-completions names (temperature, top_p, reasoning_effort, Ollama `options`, ...),
   * which each client maps to its backend the way it maps a proxy caller's. Fields the client
   * sets itself (model, messages, tools, tool_choice, stream) are refused in `body`.
   */
  request?: RequestOverrides;
  /**
   * Passed to createActor: attach @statelyai/inspect or any inspection observer. Sees the run's
   * events until `run()` settles; a throw fails the run with CallbackError. An observer that
   * also has `chunk(runId, chunk)` gets the streamed chunks, and one with `flush()` is flushed
   * before `run()`/`resume()` settle (visualizerInspector has both).
   */
  inspect?: InspectionSink | ((event: InspectionEvent) => void);
  /** Clock for wall-clock budgets (tests inject one). */
  now?: () => number;
  /**
   * Durable runs: every step is checkpointed here (a finished tool never re-runs after a crash),
   * runs resume by id (`resume(runId, workflow)`), and `sessionId` continues a conversation.
   */
  store?: RunStore;
  /**
   * OpenTelemetry tracing of runs (`invoke_agent` / `chat` / `execute_tool` spans on
   * `@opentelemetry/api`; no-op unless an SDK is registered). `{ enabled: false }` turns it off,
   * `tracerProvider` / `tracer` bypass the global registration, `recordContent: true` puts
   * messages, (redacted) tool arguments and results on spans.
   */
  telemetry?: TelemetryOptions;
  /**
   * Mask the arguments named by the tools' `redact` in the store's reported copies: the event
   * log's model responses and seed messages, and the checkpoint's `lastResponse` and
   * `terminal.args`. The state a resume continues from (the model's history, calls in flight,
   * steps and loop-break counts) keeps the real values, so runs still resume; a run whose log
   * was masked cannot be replayed (`replayRun` throws RunNotReplayableError). Default false.
   */
  redactStoredLogs?: boolean;
  /**
   * Count this runner's runs in a shared metric set (createForgeMetrics): runs by outcome, their
   * duration, active runs, and each ended run's nudges, rescues, spent budget and tokens; with a
   * store, leases taken over from a holder that never released them. Serve it with serveMetrics.
   */
  metrics?: ForgeMetrics;
}

export interface RunOptions {
  promptVars?: Record<string, string>;
  /** Seed history (multi-turn); the new user message is appended after it unless empty. */
  initialMessages?: Message[];
  /** Continue the conversation of a finished run's snapshot (its messages seed this turn). */
  from?: PersistedRun;
  signal?: AbortSignal;
  runId?: string;
  /** Continue this session's conversation from the runner's store, and record the turn in it. */
  sessionId?: string;
  /**
   * This run is a child of another run's tool call (`workflowTool` sets it): recorded in its
   * start event, so `forge-ts runs show` links the two.
   */
  parent?: ParentLink;
  /**
   * How the run was launched (module path, backend, model), recorded in its start event with a
   * store: `forge-ts runs resume|retry|replay <runId>` then need no `--workflow`, `--backend` or
   * `--model`. `forge-ts run` and the demo set it; never put a credential in it.
   */
  launch?: RunLaunch;
  /** The OpenTelemetry context the run span continues (default: the active context). */
  traceContext?: Context;
}

/** Options of `WorkflowRunner.resume`. */
export interface ResumeOptions {
  signal?: AbortSignal;
  /** The OpenTelemetry context the resumed attempt's run span continues (default: the active context). */
  traceContext?: Context;
}

const nonNegativeInt = (name: string, value: unknown): number => {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(name, `expected a non-negative integer, got ${previewValue(value)}`);
  }
  return value;
};

const isAbortSignal = (value: unknown): value is AbortSignal =>
  value instanceof AbortSignal ||
  (isPlainObjectLike(value) &&
    typeof value.aborted === "boolean" &&
    typeof value.addEventListener === "function" &&
    typeof value.removeEventListener === "function");

function isPlainObjectLike(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

const isWorkflow = (value: unknown): value is Workflow =>
  isPlainObjectLike(value) && typeof value.name === "string" && isPlainObject(value.tools) && typeof value.getToolSpecs === "function";

/** Throws InvalidArgumentError naming the first option that is wrong. */
export function assertRunnerOptions(options: WorkflowRunnerOptions): void {
  if (!options || typeof options !== "object") throw new InvalidArgumentError("options", "expected an options object");
  const { client, contextManager } = options;
  if (!client || typeof client.send !== "function") throw new InvalidArgumentError("client", "expected an LLMClient");
  if (client.apiFormat !== "ollama" && client.apiFormat !== "openai") {
    throw new InvalidArgumentError("client", `client.apiFormat must be "ollama" or "openai", got ${previewValue(client.apiFormat)}`);
  }
  if (!contextManager || typeof contextManager.compact !== "function" || typeof contextManager.estimateTokens !== "function") {
    throw new InvalidArgumentError("contextManager", "expected a ContextManager (new ContextManager({ budgetTokens }))");
  }
  for (const key of ["onChunk", "onMessage", "onStateChange", "now"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new InvalidArgumentError(key, `expected a function, got ${previewValue(options[key])}`);
    }
  }
  const inspect: unknown = options.inspect;
  if (inspect !== undefined && typeof inspect !== "function" && !(isPlainObjectLike(inspect) && typeof inspect.next === "function")) {
    throw new InvalidArgumentError("inspect", "expected a function or an observer with a next(event) method");
  }
  for (const key of ["stream", "rescueEnabled", "stepEnforcement", "redactStoredLogs"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "boolean") {
      throw new InvalidArgumentError(key, `expected a boolean, got ${previewValue(options[key])}`);
    }
  }
  const metrics: unknown = options.metrics;
  if (metrics !== undefined && !(isPlainObjectLike(metrics) && typeof metrics.label === "function" && typeof (metrics.runs as { inc?: unknown } | undefined)?.inc === "function")) {
    throw new InvalidArgumentError("metrics", "expected a metric set made by createForgeMetrics()");
  }
  if (options.stream && typeof client.sendStream !== "function") {
    throw new InvalidArgumentError("stream", "the client has no sendStream; use stream: false");
  }
  if (options.maxRetriesPerStep !== undefined) {
    if (options.maxRetries !== undefined) throw new InvalidArgumentError("maxRetries", "give maxRetries only: maxRetriesPerStep is its deprecated old name");
    warnMaxRetriesPerStep();
  }
  for (const key of ["maxIterations", "maxRetries", "maxRetriesPerStep", "maxToolErrors", "maxPrematureAttempts", "maxPrereqViolations", "maxToolRepeat"] as const) {
    if (options[key] !== undefined) nonNegativeInt(key, options[key]);
  }
  if (options.maxIterations === 0) throw new InvalidArgumentError("maxIterations", "must be at least 1");
  if (options.onHumanRequest !== undefined && typeof options.onHumanRequest !== "function") {
    throw new InvalidArgumentError("onHumanRequest", "expected a function (request) => decision");
  }
  if (options.onWaitTimeout !== undefined && options.onWaitTimeout !== "reject" && options.onWaitTimeout !== "fail") {
    throw new InvalidArgumentError("onWaitTimeout", `expected "reject" or "fail", got ${previewValue(options.onWaitTimeout)}`);
  }
  for (const key of ["maxTotalTokens", "maxWallClockMs", "maxWaitMs"] as const) {
    if (options[key] !== undefined && !(typeof options[key] === "number" && options[key] > 0)) {
      throw new InvalidArgumentError(key, "expected a positive number");
    }
  }
  const store: unknown = options.store;
  const toolTimeout: unknown = options.toolTimeoutMs;
  if (toolTimeout !== undefined && !(typeof toolTimeout === "number" && toolTimeout > 0 && toolTimeout <= MAX_TIMER_MS)) {
    throw new InvalidArgumentError("toolTimeoutMs", `expected a number of milliseconds in (0, ${MAX_TIMER_MS}], got ${previewValue(toolTimeout)}`);
  }
  if (options.redactStoredLogs && store === undefined) {
    throw new InvalidArgumentError("redactStoredLogs", "masks what the runner writes to its store: give a store too (new WorkflowRunner({ ..., store }))");
  }
  if (options.maxResultChars !== undefined) {
    const problem = maxResultCharsProblem(options.maxResultChars);
    if (problem) throw new InvalidArgumentError("maxResultChars", problem);
  }
  if (options.maxToolCallsPerResponse !== undefined && nonNegativeInt("maxToolCallsPerResponse", options.maxToolCallsPerResponse) === 0) {
    throw new InvalidArgumentError("maxToolCallsPerResponse", "must be at least 1");
  }
  if (store !== undefined) {
    const methods = ["commit", "latest", "events", "listRuns", "listSessions", "history", "lock", "deleteRun"];
    const missing = methods.filter((m) => !isPlainObjectLike(store) || typeof store[m] !== "function");
    if (missing.length > 0) throw new InvalidArgumentError("store", `expected a RunStore (new FileRunStore({ dir })); missing ${missing.join(", ")}`);
  }
  assertTelemetryOptions(options.telemetry);
  assertRequestDefaults(options.request);
  const replay = options.reasoningReplay ?? "none";
  if (!["none", "keep-last", "full"].includes(replay)) throw new InvalidArgumentError("reasoningReplay", 'use "none", "keep-last" or "full"');
}


const isToolChoice = (value: unknown): boolean =>
  value === "none" ||
  value === "auto" ||
  value === "required" ||
  (isPlainObject(value) && value.type === "function" && isPlainObject(value.function) && typeof value.function.name === "string" && value.function.name.length > 0);

/** `request`: the RequestOverrides every model call carries; checked field by field. */
function assertRequestDefaults(request: unknown): void {
  if (request === undefined) return;
  if (!isPlainObject(request)) throw new InvalidArgumentError("request", `expected { toolChoice?, body?, model?, apiKey? }, got ${previewValue(request)}`);
  const unknown = Object.keys(request).filter((k) => !["toolChoice", "body", "model", "apiKey"].includes(k));
  if (unknown.length > 0) throw new InvalidArgumentError("request", `unknown field(s) ${unknown.join(", ")}; use toolChoice, body, model or apiKey`);
  if (request.toolChoice !== undefined && !isToolChoice(request.toolChoice)) {
    throw new InvalidArgumentError("request.toolChoice", `use "none", "auto", "required" or { type: "function", function: { name } }, got ${previewValue(request.toolChoice)}`);
  }
  for (const key of ["model", "apiKey"] as const) {
    const value = request[key];
    if (value !== undefined && !(typeof value === "string" && value.length > 0)) throw new InvalidArgumentError(`request.${key}`, `expected a non-empty string, got ${previewValue(value)}`);
  }
  const body = request.body;
  if (body === undefined) return;
  if (!isPlainObject(body)) throw new InvalidArgumentError("request.body", `expected an object of request fields, got ${previewValue(body)}`);
  const owned = Object.keys(body).filter((k) => CLIENT_OWNED_FIELDS.has(k));
  if (owned.length > 0) throw new InvalidArgumentError("request.body", `${owned.join(", ")} ${owned.length === 1 ? "is" : "are"} set by the client (use request.model / request.toolChoice)`);
  const problem = jsonIssue(body);
  if (problem) throw new InvalidArgumentError("request.body", `must be plain JSON: ${problem}`);
}

export function assertWorkflow(workflow: unknown): asserts workflow is Workflow {
  if (!isWorkflow(workflow)) throw new InvalidArgumentError("workflow", `expected a Workflow (new Workflow({ ... })), got ${previewValue(workflow)}`);
}

export function assertRunOptions(options: unknown): asserts options is RunOptions {
  if (!isPlainObject(options)) throw new InvalidArgumentError("options", `expected an options object, got ${previewValue(options)}`);
  const { promptVars, initialMessages, from, signal, runId, sessionId } = options as RunOptions;
  if (sessionId !== undefined && !(typeof sessionId === "string" && sessionId.length > 0)) throw new InvalidArgumentError("sessionId", "expected a non-empty string");
  if (promptVars !== undefined && !(isPlainObject(promptVars) && Object.values(promptVars).every((v) => typeof v === "string"))) {
    throw new InvalidArgumentError("promptVars", "expected an object of strings");
  }
  if (initialMessages !== undefined) {
    if (!Array.isArray(initialMessages)) throw new InvalidArgumentError("initialMessages", "expected an array of messages");
    initialMessages.forEach((message: unknown, i) => {
      const parsed = MessageSchema.safeParse(message);
      const problem = parsed.success ? jsonIssue(message) : parsed.error.issues.map((x) => `${x.path.join(".") || "(message)"}: ${x.message}`).join("; ");
      if (problem) throw new InvalidArgumentError("initialMessages", `entry ${i} is not a message (${problem}): ${previewValue(message)}`);
    });
  }
  if (from !== undefined && initialMessages !== undefined) throw new InvalidArgumentError("from", "give from or initialMessages, not both");
  if (signal !== undefined && !isAbortSignal(signal)) throw new InvalidArgumentError("signal", `expected an AbortSignal, got ${previewValue(signal)}`);
  if (runId !== undefined && !(typeof runId === "string" && runId.length > 0)) throw new InvalidArgumentError("runId", "expected a non-empty string");
  const parent: unknown = (options as RunOptions).parent;
  if (parent !== undefined && !(isPlainObject(parent) && isRunId(parent.runId) && typeof parent.callId === "string")) {
    throw new InvalidArgumentError("parent", `expected { runId, callId } naming the calling run and its tool call, got ${previewValue(parent)}`);
  }
  assertRunLaunch((options as RunOptions).launch);
  assertTraceContext((options as RunOptions).traceContext);
}

const LAUNCH_FIELDS: Record<keyof RunLaunch, (v: unknown) => boolean> = {
  module: (v) => typeof v === "string" && v.length > 0,
  backend: (v) => typeof v === "string" && v.length > 0,
  model: (v) => typeof v === "string" && v.length > 0,
  baseUrl: (v) => typeof v === "string",
  mode: (v) => typeof v === "string",
  think: (v) => typeof v === "boolean",
  recommendedSampling: (v) => v === true,
};

/** A launch record (RunOptions.launch): plain JSON with its own fields only, since it is stored as given. */
export function assertRunLaunch(launch: unknown): asserts launch is RunLaunch | undefined {
  if (launch === undefined) return;
  const fields = isPlainObject(launch) ? launch : {};
  const missing = (["module", "backend", "model"] as const).filter((k) => !(k in fields));
  const wrong = Object.entries(fields).filter(([k, v]) => !(Object.hasOwn(LAUNCH_FIELDS, k) && LAUNCH_FIELDS[k as keyof RunLaunch](v)));
  if (!isPlainObject(launch) || missing.length > 0 || wrong.length > 0) {
    const shape = "{ module, backend, model (non-empty strings), baseUrl?, mode? (strings), think? (boolean), recommendedSampling?: true }";
    throw new InvalidArgumentError("launch", `expected ${shape}, got ${previewValue(launch)}`);
  }
}

function assertTraceContext(value: unknown): void {
  if (value !== undefined && !(isPlainObjectLike(value) && typeof value.getValue === "function" && typeof value.setValue === "function")) {
    throw new InvalidArgumentError("traceContext", `expected an OpenTelemetry Context (context.active(), propagation.extract(...)), got ${previewValue(value)}`);
  }
}

export function assertResumeOptions(options: unknown): asserts options is ResumeOptions {
  if (!isPlainObject(options)) throw new InvalidArgumentError("options", "expected an options object");
  const { signal } = options as ResumeOptions;
  if (signal !== undefined && !isAbortSignal(signal)) throw new InvalidArgumentError("signal", "expected an AbortSignal");
  assertTraceContext((options as ResumeOptions).traceContext);
}
