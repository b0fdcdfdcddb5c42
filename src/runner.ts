/**
 * WorkflowRunner: builds the workflow statechart with its services (inference, compaction,
 * tool execution), runs it, and turns its final state into a result or a typed error.
 * Runs can be snapshotted at any moment and resumed in a new actor or process.
 */
import { createActor, type Actor, type InspectionEvent, type Observer, type Snapshot } from "xstate";
import { createWorkflowMachine, type WorkflowMachine } from "../machines/workflow.machine.js";
import type { ContextManager } from "./context/context-manager.js";
import { InvalidArgumentError, WorkflowCancelledError, reviveError } from "./core/errors.js";
import type { LLMClient, StreamChunk } from "./core/llm.js";
import { createMessage, MessageType, type Message, type ReasoningReplay } from "./core/messages.js";
import type { Workflow } from "./core/workflow.js";
import { MACHINE_VERSION, type WorkflowContext, type WorkflowInput } from "./loop/context.js";
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
  /** Wall-clock milliseconds before the run fails with BudgetExhaustedError. */
  maxWallClockMs?: number;
  /** Use client.sendStream; chunks go to onChunk, the loop acts on FINAL only. */
  stream?: boolean;
  onChunk?: (chunk: StreamChunk) => void | Promise<void>;
  /** Every message appended during the run (not replayed history). */
  onMessage?: (message: Message) => void;
  /** Every state the machine enters, with its context (read-only). */
  onStateChange?: (state: string, context: Readonly<WorkflowContext>) => void;
  rescueEnabled?: boolean;
  /** false turns off premature-terminal and prerequisite enforcement (ablation). */
  stepEnforcement?: boolean;
  reasoningReplay?: ReasoningReplay;
  /** Passed to createActor: attach @statelyai/inspect or any inspection observer. */
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

const nonNegativeInt = (name: string, value: unknown): number => {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(name, `expected a non-negative integer, got ${String(value)}`);
  }
  return value;
};

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

  constructor(options: WorkflowRunnerOptions) {
    if (!options || typeof options !== "object") throw new InvalidArgumentError("options", "expected an options object");
    const { client, contextManager } = options;
    if (!client || typeof client.send !== "function") throw new InvalidArgumentError("client", "expected an LLMClient");
    if (!contextManager || typeof contextManager.compact !== "function") {
      throw new InvalidArgumentError("contextManager", "expected a ContextManager (new ContextManager({ budgetTokens }))");
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
    if (typeof userMessage !== "string") throw new InvalidArgumentError("userMessage", "expected a string");
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
      },
      switches: { rescueEnabled: this.options.rescueEnabled ?? true, stepEnforcement: this.options.stepEnforcement ?? true },
      startedAt: now,
    };
    const actor = createActor(this.#machine(workflow), { input, ...this.#inspectOption() });
    return this.#drive(actor, options.signal);
  }

  /**
   * Continue a persisted run in a new actor (a new process even). A service that was in
   * flight is re-run with its persisted input; finished tool results are already in context.
   */
  async resume(snapshot: PersistedRun, workflow: Workflow, options: { signal?: AbortSignal } = {}): Promise<unknown> {
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
    const actor: WorkflowActor = createActor(machine, { snapshot: persisted, input, ...this.#inspectOption() });
    return this.#drive(actor, options.signal);
  }

  #now(): number {
    return (this.options.now ?? Date.now)();
  }

  #inspectOption() {
    const inspect = this.options.inspect;
    return inspect ? { inspect } : {};
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
      now: () => this.#now(),
    });
    const machine = baseMachine(workflow).provide({ actors: services });
    this.#machines.set(workflow, machine);
    return machine;
  }

  #drive(actor: WorkflowActor, signal: AbortSignal | undefined): Promise<unknown> {
    if (this.#actor?.getSnapshot().status === "active") {
      throw new InvalidArgumentError("run", "a run is already active on this runner (one run at a time: use another runner, or stop() it)");
    }
    this.#actor = actor;
    this.#stoppedAt = undefined;
    this.#stats = undefined;
    const { onMessage, onStateChange } = this.options;
    return new Promise<unknown>((resolve, reject) => {
      const cleanup: (() => void)[] = [];
      const settle = (fn: () => void) => {
        for (const c of cleanup.splice(0)) c();
        this.#stopRun = undefined;
        fn();
      };
      this.#stopRun = (error) => settle(() => reject(error));
      if (onMessage) cleanup.push(actor.on("message", (e) => onMessage(e.message)).unsubscribe);
      let serviceError: unknown;
      cleanup.push(actor.on("serviceError", (e) => (serviceError = e.error)).unsubscribe);
      let lastState = "";
      const sub = actor.subscribe({
        next: (snapshot) => {
          const state = stateName(snapshot.value);
          if (state !== lastState) {
            lastState = state;
            onStateChange?.(state, snapshot.context);
          }
          if (snapshot.status !== "done") return;
          this.#stats = runStatsFrom(snapshot.context, state, this.#now());
          const ctx = snapshot.context;
          if (state === "done") return settle(() => resolve(ctx.terminal?.result));
          const json = ctx.error;
          const origin = json?.origin;
          // A failed service's live error carries more than its JSON form (cause, stack).
          const live = (origin === "infer" || origin === "compact") && serviceError instanceof Error ? serviceError : undefined;
          const error = live ?? (json ? reviveError(json) : new Error(`workflow ended in state "${state}" without an error`));
          settle(() => reject(error));
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
    });
  }
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
