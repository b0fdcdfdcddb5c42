/**
 * WorkflowRunner: builds the workflow statechart with its services (inference, compaction,
 * tool execution), runs it, and turns its final state into a result or a typed error.
 * Runs can be snapshotted at any moment and resumed in a new actor or process.
 */
import { createActor, type Actor, type InspectionEvent, type Observer, type Snapshot } from "xstate";
import { createWorkflowMachine, type WorkflowMachine } from "../machines/workflow.machine.js";
import type { ContextManager } from "./context/context-manager.js";
import { CallbackError, InvalidArgumentError, WorkflowCancelledError, reviveError, type CallbackName } from "./core/errors.js";
import type { LLMClient, StreamChunk } from "./core/llm.js";
import { createMessage, isPlainObject, jsonIssue, MessageSchema, MessageType, type Message, type ReasoningReplay } from "./core/messages.js";
import { MAX_TIMER_MS } from "./core/tool.js";
import type { Workflow } from "./core/workflow.js";
import { DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE, MACHINE_VERSION, type WorkflowContext, type WorkflowInput } from "./loop/context.js";
import { previewValue } from "./core/response-contract.js";
import { runStatsFrom, type RunStats } from "./loop/run-stats.js";
import { assertRestorable, dehydrate, hydrate, type PersistedRun } from "./persistence/snapshot.js";
import { DEFAULT_MAX_TOOL_REPEAT } from "./guardrails/loop-break.js";
import { createServices } from "./services.js";
import { stateName } from "./loop/state-name.js";

export interface WorkflowRunnerOptions {
  client: LLMClient;
  contextManager: ContextManager;
  /** Hard ceiling on LLM calls per run (retries count). Default 10. */
  maxIterations?: number;
  /** Consecutive bad responses (bare text, unknown tool, bad args) tolerated. 0 = first one is fatal. Default 3. */
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
   * Passed to createActor: attach @statelyai/inspect or any inspection observer. Sees the run's
   * events until `run()` settles; a throw fails the run with CallbackError.
   */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Clock for wall-clock budgets (tests inject one). */
  now?: () => number;
}

export interface RunOptions {
  promptVars?: Record<string, string>;
  /** Seed history (multi-turn); the new user message is appended after it unless empty. */
  initialMessages?: Message[];
  /** Continue the conversation of a finished run's snapshot (its messages seed this turn). */
  from?: PersistedRun;
  signal?: AbortSignal;
  runId?: string;
}

type WorkflowActor = Actor<WorkflowMachine>;
type Inspector = NonNullable<WorkflowRunnerOptions["inspect"]>;

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

/**
 * @example
 * const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }) });
 * const quote = await runner.run(workflow, "Quote 500 units of PN-1001", { promptVars: { company: "Acme" } });
 */
export class WorkflowRunner {
  readonly options: Readonly<WorkflowRunnerOptions>;
  #actor: WorkflowActor | undefined;
  #stats: RunStats | undefined;
  #stopRun: ((error: Error) => void) | undefined;
  readonly #machines = new WeakMap<Workflow, WorkflowMachine>();
  #stoppedAt: PersistedRun | undefined;
  /** Set when a callback failed the current run: services started in that same step do no I/O. */
  #haltedBy: Error | undefined;

  constructor(options: WorkflowRunnerOptions) {
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
    for (const key of ["stream", "rescueEnabled", "stepEnforcement"] as const) {
      if (options[key] !== undefined && typeof options[key] !== "boolean") {
        throw new InvalidArgumentError(key, `expected a boolean, got ${previewValue(options[key])}`);
      }
    }
    if (options.stream && typeof client.sendStream !== "function") {
      throw new InvalidArgumentError("stream", "the client has no sendStream; use stream: false");
    }
    for (const key of ["maxIterations", "maxRetriesPerStep", "maxToolErrors", "maxPrematureAttempts", "maxPrereqViolations", "maxToolRepeat"] as const) {
      if (options[key] !== undefined) nonNegativeInt(key, options[key]);
    }
    if (options.maxIterations === 0) throw new InvalidArgumentError("maxIterations", "must be at least 1");
    for (const key of ["maxTotalTokens", "maxWallClockMs"] as const) {
      if (options[key] !== undefined && !(typeof options[key] === "number" && options[key] > 0)) {
        throw new InvalidArgumentError(key, "expected a positive number");
      }
    }
    const toolTimeout: unknown = options.toolTimeoutMs;
    if (toolTimeout !== undefined && !(typeof toolTimeout === "number" && toolTimeout > 0 && toolTimeout <= MAX_TIMER_MS)) {
      throw new InvalidArgumentError("toolTimeoutMs", `expected a number of milliseconds in (0, ${MAX_TIMER_MS}], got ${previewValue(toolTimeout)}`);
    }
    if (options.maxToolCallsPerResponse !== undefined && nonNegativeInt("maxToolCallsPerResponse", options.maxToolCallsPerResponse) === 0) {
      throw new InvalidArgumentError("maxToolCallsPerResponse", "must be at least 1");
    }
    const replay = options.reasoningReplay ?? "none";
    if (!["none", "keep-last", "full"].includes(replay)) throw new InvalidArgumentError("reasoningReplay", 'use "none", "keep-last" or "full"');
    this.options = Object.freeze({ ...options });
  }

  /** The live actor of the current (or last) run: subscribe, inspect, send `workflow.cancel`. */
  get actor(): WorkflowActor | undefined {
    return this.#actor;
  }

  /** Figures of the last run that settled (success or failure). */
  get lastRunStats(): RunStats | undefined {
    return this.#stats;
  }

  /**
   * JSON-safe persisted snapshot of the current run, at any moment. After `stop()` it is the
   * snapshot taken just before stopping (a stopped actor has dropped its in-flight service).
   */
  snapshot(): PersistedRun {
    if (!this.#actor) throw new InvalidArgumentError("snapshot", "no run has started on this runner");
    if (this.#stoppedAt) return this.#stoppedAt;
    return dehydrate(this.#actor.getPersistedSnapshot() as unknown as PersistedRun);
  }

  /** Stop the current actor (its in-flight service gets an aborted signal); the run's promise rejects. */
  stop(reason = "runner stopped"): void {
    const actor = this.#actor;
    if (!actor || actor.getSnapshot().status !== "active") return;
    const ctx = actor.getSnapshot().context;
    this.#stoppedAt = this.snapshot();
    actor.stop();
    this.#stopRun?.(new WorkflowCancelledError(ctx.messages, [...new Set(ctx.steps.completed.map((s) => s.tool))], ctx.iteration, reason));
  }

  async run(workflow: Workflow, userMessage: string, options: RunOptions = {}): Promise<unknown> {
    assertWorkflow(workflow);
    if (typeof userMessage !== "string") throw new InvalidArgumentError("userMessage", "expected a string");
    assertRunOptions(options);
    const seed = options.from ? assertRestorable(options.from, workflow).context.messages : options.initialMessages;
    const messages: Message[] = seed
      ? [...seed]
      : [createMessage("system", this.#systemPrompt(workflow, options.promptVars), MessageType.SYSTEM_PROMPT)];
    if (userMessage.length > 0 || !seed) messages.push(createMessage("user", userMessage, MessageType.USER_INPUT));
    const now = this.#now();
    const input: WorkflowInput = {
      runId: options.runId ?? globalThis.crypto.randomUUID(),
      workflow: workflow.name,
      messages,
      toolNames: workflow.toolNames,
      terminalTools: [...workflow.terminalTools],
      requiredSteps: [...workflow.requiredSteps],
      prerequisites: Object.fromEntries(Object.values(workflow.tools).map((t) => [t.name, [...t.prerequisites]])),
      budget: {
        maxIterations: this.options.maxIterations ?? 10,
        maxRetries: this.options.maxRetriesPerStep ?? 3,
        maxToolErrors: this.options.maxToolErrors ?? 2,
        maxPremature: this.options.maxPrematureAttempts ?? 3,
        maxPrereq: this.options.maxPrereqViolations ?? 2,
        maxToolRepeat: this.options.maxToolRepeat ?? DEFAULT_MAX_TOOL_REPEAT,
        ...(this.options.maxTotalTokens !== undefined ? { maxTotalTokens: this.options.maxTotalTokens } : {}),
        ...(this.options.maxWallClockMs !== undefined ? { maxWallClockMs: this.options.maxWallClockMs } : {}),
        maxToolCallsPerResponse: this.options.maxToolCallsPerResponse ?? DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE,
      },
      switches: { rescueEnabled: this.options.rescueEnabled ?? true, stepEnforcement: this.options.stepEnforcement ?? true },
      startedAt: now,
    };
    const callbacks = new CallbackGuard();
    const actor = createActor(this.#machine(workflow), { input, ...this.#inspectOption(callbacks) });
    return this.#drive(actor, options.signal, callbacks);
  }

  /**
   * Continue a persisted run in a new actor (a new process even). A service that was in
   * flight is re-run with its persisted input; finished tool results are already in context.
   */
  async resume(snapshot: PersistedRun, workflow: Workflow, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    assertWorkflow(workflow);
    if (!isPlainObject(options)) throw new InvalidArgumentError("options", "expected an options object");
    if (options.signal !== undefined && !isAbortSignal(options.signal)) throw new InvalidArgumentError("signal", "expected an AbortSignal");
    const restorable = hydrate(assertRestorable(snapshot, workflow));
    const machine = this.#machine(workflow);
    // Shape was checked by assertRestorable; XState's snapshot type is opaque here.
    const persisted = restorable as unknown as Snapshot<unknown>;
    // XState ignores `input` when a snapshot is given; the context's own copy keeps types honest.
    const ctx = restorable.context;
    const input: WorkflowInput = {
      runId: ctx.runId,
      workflow: ctx.workflow,
      messages: ctx.messages,
      toolNames: ctx.toolNames,
      terminalTools: ctx.terminalTools,
      requiredSteps: ctx.steps.required,
      prerequisites: ctx.prerequisites,
      budget: ctx.budget,
      switches: ctx.switches,
      startedAt: ctx.startedAt,
    };
    const callbacks = new CallbackGuard();
    const actor: WorkflowActor = createActor(machine, { snapshot: persisted, input, ...this.#inspectOption(callbacks) });
    return this.#drive(actor, options.signal, callbacks);
  }

  #now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The user's inspector behind the callback guard (XState would call it unprotected, mid-transition). */
  #inspectOption(callbacks: CallbackGuard): { inspect?: (event: InspectionEvent) => void } {
    const inspect: Inspector | undefined = this.options.inspect;
    if (!inspect) return {};
    const deliver = typeof inspect === "function" ? inspect : (event: InspectionEvent) => inspect.next!(event);
    return { inspect: (event) => callbacks.call("inspect", deliver, event) };
  }

  #systemPrompt(workflow: Workflow, vars: Record<string, string> | undefined): string {
    const rendered = workflow.buildSystemPrompt(vars ?? {});
    if (rendered.length > 0) return rendered;
    // An empty template still needs a system message: compaction protects messages[0].
    return `You complete the "${workflow.name}" workflow by calling its tools.${workflow.description ? ` ${workflow.description}` : ""}`;
  }

  /** One machine per workflow per runner: building and providing it costs more than a short run. */
  #machine(workflow: Workflow): WorkflowMachine {
    const cached = this.#machines.get(workflow);
    if (cached) return cached;
    const o = this.options;
    const services = createServices({
      workflow,
      client: o.client,
      contextManager: o.contextManager,
      reasoningReplay: o.reasoningReplay ?? "none",
      stream: o.stream ?? false,
      ...(o.onChunk ? { onChunk: o.onChunk } : {}),
      ...(o.toolTimeoutMs !== undefined ? { toolTimeoutMs: o.toolTimeoutMs } : {}),
      now: () => this.#now(),
      haltedBy: () => this.#haltedBy,
    });
    const machine = baseMachine(workflow).provide({ actors: services });
    this.#machines.set(workflow, machine);
    return machine;
  }

  #drive(actor: WorkflowActor, signal: AbortSignal | undefined, callbacks: CallbackGuard): Promise<unknown> {
    if (this.#actor?.getSnapshot().status === "active") {
      throw new InvalidArgumentError("run", "a run is already active on this runner (one run at a time: use another runner, or stop() it)");
    }
    this.#actor = actor;
    this.#stoppedAt = undefined;
    this.#stats = undefined;
    this.#haltedBy = undefined;
    const { onMessage, onStateChange } = this.options;
    return new Promise<unknown>((resolve, reject) => {
      const cleanup: (() => void)[] = [];
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        for (const c of cleanup.splice(0)) c();
        callbacks.close();
        this.#stopRun = undefined;
        fn();
      };
      this.#stopRun = (error) => settle(() => reject(error));
      // A callback threw or rejected: stop the actor here (its in-flight service is aborted) and
      // fail the run with the typed error, rather than let XState rethrow it on a timer.
      callbacks.onFailure((error) => {
        if (settled) return;
        this.#haltedBy = error;
        const snapshot = actor.getSnapshot();
        if (snapshot.status === "active") {
          this.#stoppedAt = this.snapshot();
          actor.stop();
        }
        this.#stats = { ...runStatsFrom(snapshot.context, "failed", this.#now()), error: { name: error.name, code: error.code, message: error.message } };
        settle(() => reject(error));
      });
      if (settled) return; // the inspector already failed the run while the actor was created
      if (onMessage) cleanup.push(actor.on("message", (e) => callbacks.call("onMessage", onMessage, e.message)).unsubscribe);
      let serviceError: unknown;
      cleanup.push(actor.on("serviceError", (e) => (serviceError = e.error)).unsubscribe);
      let lastState = "";
      const finish = (snapshot: ReturnType<WorkflowActor["getSnapshot"]>, state: string) => {
        if (settled) return; // a callback failed the run in the meantime
        if (this.#actor === actor) this.#stats = runStatsFrom(snapshot.context, state, this.#now());
        const ctx = snapshot.context;
        if (state === "done") return settle(() => resolve(ctx.terminal?.result));
        const json = ctx.error;
        const origin = json?.origin;
        // A failed service's live error carries more than its JSON form (cause, stack).
        const live = (origin === "infer" || origin === "compact") && serviceError instanceof Error ? serviceError : undefined;
        const error = live ?? (json ? reviveError(json) : new Error(`workflow ended in state "${state}" without an error`));
        settle(() => reject(error));
      };
      const sub = actor.subscribe({
        next: (snapshot) => {
          const state = stateName(snapshot.value);
          if (state !== lastState) {
            lastState = state;
            callbacks.call("onStateChange", onStateChange, state, snapshot.context);
          }
          if (snapshot.status !== "done") return;
          // Settled a microtask later at the earliest: inspection events of this same step, and
          // callbacks still running asynchronously, may yet fail the run.
          void callbacks
            .idle()
            .then(() => finish(snapshot, state))
            .catch((error: unknown) => settle(() => reject(error)));
        },
        error: (err) => settle(() => reject(err)),
      });
      cleanup.push(() => sub.unsubscribe());
      if (signal) {
        const onAbort = () => actor.send({ type: "workflow.cancel", reason: abortReason(signal) });
        if (signal.aborted) queueMicrotask(onAbort);
        else {
          signal.addEventListener("abort", onAbort, { once: true });
          cleanup.push(() => signal.removeEventListener("abort", onAbort));
        }
      }
      actor.start();
      if (!settled && actor.getSnapshot().status === "active") cleanup.push(this.#armWallClock(actor));
    });
  }

  /**
   * The wall-clock budget as a timer, so it also ends a model call or tool that is still in
   * flight (the machine's own check runs only between steps). Re-checks the run's clock when it
   * fires (an injected `now` decides, and setTimeout caps long delays). Returns its canceller.
   */
  #armWallClock(actor: WorkflowActor): () => void {
    const { budget, startedAt } = actor.getSnapshot().context;
    const limit = budget.maxWallClockMs;
    if (limit === undefined) return () => undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = () => {
      const now = this.#now();
      const remaining = startedAt + limit - now;
      if (remaining > 0) timer = setTimeout(check, Math.min(Math.ceil(remaining), MAX_TIMER_MS));
      else actor.send({ type: "workflow.timeout", now });
    };
    check();
    return () => clearTimeout(timer);
  }
}

/**
 * Calls user callbacks so that nothing they do escapes: a throw, or a promise they return that
 * rejects, becomes one CallbackError handed to the run (the first one wins). Promises still
 * pending are awaited before a finished run settles.
 */
class CallbackGuard {
  readonly #pending = new Set<Promise<void>>();
  #failure: CallbackError | undefined;
  #onFailure: ((error: CallbackError) => void) | undefined;
  #closed = false;

  call<TArgs extends unknown[]>(name: CallbackName, fn: ((...args: TArgs) => unknown) | undefined, ...args: TArgs): void {
    if (!fn || this.#closed) return;
    let returned: unknown;
    try {
      returned = fn(...args);
    } catch (error) {
      return this.#fail(new CallbackError(name, error));
    }
    if (!isThenable(returned)) return;
    const watched = Promise.resolve(returned).then(
      () => undefined,
      (error: unknown) => this.#fail(new CallbackError(name, error)),
    );
    this.#pending.add(watched);
    void watched.then(() => this.#pending.delete(watched));
  }

  onFailure(handler: (error: CallbackError) => void): void {
    this.#onFailure = handler;
    if (this.#failure) handler(this.#failure);
  }

  /** Resolves once every callback promise so far has settled (at least one microtask from now). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** The run settled: later callbacks are not called (a failure could no longer be reported). */
  close(): void {
    this.#closed = true;
  }

  #fail(error: CallbackError): void {
    if (this.#failure || this.#closed) return;
    this.#failure = error;
    this.#onFailure?.(error);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  if ((typeof value !== "object" || value === null) && typeof value !== "function") return false;
  try {
    return typeof (value as { then?: unknown }).then === "function";
  } catch {
    return false; // a throwing `then` getter: not something to await
  }
}

function assertWorkflow(workflow: unknown): asserts workflow is Workflow {
  if (!isWorkflow(workflow)) throw new InvalidArgumentError("workflow", `expected a Workflow (new Workflow({ ... })), got ${previewValue(workflow)}`);
}

function assertRunOptions(options: unknown): asserts options is RunOptions {
  if (!isPlainObject(options)) throw new InvalidArgumentError("options", `expected an options object, got ${previewValue(options)}`);
  const { promptVars, initialMessages, from, signal, runId } = options as RunOptions;
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
}

/** The statechart with a workflow's tools, built once per workflow (services come per runner). */
const baseMachines = new WeakMap<Workflow, WorkflowMachine>();
function baseMachine(workflow: Workflow): WorkflowMachine {
  let machine = baseMachines.get(workflow);
  if (!machine) {
    machine = createWorkflowMachine({ tools: workflow.tools });
    baseMachines.set(workflow, machine);
  }
  return machine;
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r.message;
  return r === undefined ? "aborted" : String(r);
}

export { MACHINE_VERSION };
