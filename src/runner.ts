/**
 * WorkflowRunner: builds the workflow statechart with its services (inference, compaction,
 * tool execution), runs it, and turns its final state into a result or a typed error.
 * Runs can be snapshotted at any moment and resumed in a new actor or process.
 *
 * The parts live in src/runner/: option checks (options.ts), the machine input and snapshot
 * restore (run-input.ts), one run from start to settled promise (session.ts), and the guard
 * around user callbacks (callback-guard.ts).
 */
import { context as otelContext, type Context } from "@opentelemetry/api";
import { createActor, type InspectionEvent } from "xstate";
import { ForgeError, InvalidArgumentError, RunWaitingError, StoreError } from "./core/errors.js";
import { stateName, WorkflowState } from "./loop/state-name.js";
import { RunTrace } from "./telemetry/run-trace.js";
import { spanRefIn, withoutSpanRef, type SpanRef } from "./telemetry/span-ref.js";
import { runTracer } from "./telemetry/telemetry-options.js";
import type { StreamChunk } from "./core/llm.js";
import type { Workflow } from "./core/workflow.js";
import { MACHINE_VERSION, type WorkflowInput } from "./loop/context.js";
import type { RunStats } from "./loop/run-stats.js";
import type { PersistedRun } from "./persistence/snapshot.js";
import { createServices, type WorkflowServices } from "./runner/services.js";
import { CallbackGuard } from "./runner/callback-guard.js";
import { CheckpointWriter, runExistsError, sessionSeed, type RunRecord } from "./runner/checkpoints.js";
import type { Checkpoint, RunEvent, RunStore } from "./persistence/run-store.js";
import {
  assertResumeOptions,
  assertRunnerOptions,
  assertRunOptions,
  assertWorkflow,
  type ResumeOptions,
  type RunOptions,
  type WorkflowRunnerOptions,
} from "./runner/options.js";
import { machineFor, restorableRun, runInput } from "./runner/run-input.js";
import { RunSession, type DriveResult, type WorkflowActor } from "./runner/session.js";
import { recordDecision, type DecisionInput, type DecisionReceipt } from "./runner/decisions.js";
import type { HumanDecisionEvent, HumanRequest } from "./loop/human.js";
import { forkRun, type ForkOptions, type ForkResult } from "./runner/fork.js";
import { runChildWorkflow } from "./runner/child-run.js";
import { redactionMapOf, type RedactionMap } from "./telemetry/redact-run.js";
import { clientName } from "./core/response-contract.js";
import { countTakeover, startRunLeg, type RunLegOutcome } from "./telemetry/run-metrics.js";

export type { RunOptions, WorkflowRunnerOptions } from "./runner/options.js";

/**
 * @example
 * const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }) });
 * const quote = await runner.run(workflow, "Quote 500 units of PN-1001", { promptVars: { company: "Acme" } });
 */
export class WorkflowRunner {
  readonly options: Readonly<WorkflowRunnerOptions>;
  #session: RunSession | undefined;
  /** The current run's lock and checkpoint writer, when the runner has a store. */
  #record: RunRecord | undefined;
  /** A run or resume is between its call and its actor (reading the store, taking the lock). */
  #starting = false;
  /** Child runs started by the current run's tool calls and not yet settled (see child-run.ts). */
  readonly #children = new Set<Promise<unknown>>();
  /** The current run attempt's spans (undefined when tracing is off). */
  #trace: RunTrace | undefined;
  /** This runner's services per workflow (the machine itself is shared: see machineFor). */
  readonly #services = new WeakMap<Workflow, WorkflowServices>();

  constructor(options: WorkflowRunnerOptions) {
    assertRunnerOptions(options);
    this.options = Object.freeze({ ...options });
  }

  /** The live actor of the current (or last) run: subscribe, inspect, send `workflow.cancel`. */
  get actor(): WorkflowActor | undefined {
    return this.#session?.actor;
  }

  /** Figures of the last run that settled (success or failure). */
  get lastRunStats(): RunStats | undefined {
    return this.#session?.stats;
  }

  /**
   * JSON-safe persisted snapshot of the current run, at any moment. After `stop()` it is the
   * snapshot taken just before stopping (a stopped actor has dropped its in-flight service).
   */
  snapshot(): PersistedRun {
    if (!this.#session) throw new InvalidArgumentError("snapshot", "no run has started on this runner");
    return this.#session.snapshot();
  }

  /** Stop the current actor (its in-flight service gets an aborted signal); the run's promise rejects. */
  stop(reason = "runner stopped"): void {
    this.#session?.stop(reason);
  }

  /**
   * Run `workflow` on `userMessage`. With a store, the run is checkpointed as it goes (resume it
   * by id after a crash) and `sessionId` continues that session's conversation. A run that
   * needs a person (and no `onHumanRequest` answers) rejects with RunWaitingError; `start()`
   * returns that as a value instead.
   */
  async run(workflow: Workflow, userMessage: string, options: RunOptions = {}): Promise<unknown> {
    return resultOf(await this.#begin(workflow, userMessage, options));
  }

  /**
   * Like `run()`, but a run that waits for a person is an outcome, not an error:
   * `{ status: "done", runId, result }` or `{ status: "waiting", runId, requests }`.
   *
   * @example
   * const outcome = await runner.start(workflow, "Refund order 42");
   * if (outcome.status === "waiting") await runner.decide(outcome.runId, { callId: outcome.requests[0].callId, decision: { type: "approve" } });
   */
  async start(workflow: Workflow, userMessage: string, options: RunOptions = {}): Promise<RunOutcome> {
    return outcomeOf(await this.#begin(workflow, userMessage, options));
  }

  async #begin(workflow: Workflow, userMessage: string, options: RunOptions): Promise<Driven> {
    assertWorkflow(workflow);
    if (typeof userMessage !== "string") throw new InvalidArgumentError("userMessage", "expected a string");
    assertRunOptions(options);
    // Without a store nothing is awaited before the actor exists (runner.actor right after run()).
    const { input, record } =
      this.options.store === undefined && options.sessionId === undefined
        ? (this.#assertIdle(), { input: runInput(this.options, workflow, userMessage, options, this.#now()), record: undefined })
        : await this.#prepare(() => this.#storedStart(workflow, userMessage, options));
    const callbacks = new CallbackGuard();
    const actor = createActor(machineFor(workflow), { input, ...this.#inspectOption(callbacks) });
    return this.#drive(workflow, actor, options.signal, callbacks, record, { parent: options.traceContext, sessionId: options.sessionId });
  }

  /**
   * Continue a run the way `resume()` does, with its wait for a person as an outcome: a waiting
   * run takes the decisions recorded since (`decide()`, `forge-ts runs approve`, ...) and goes
   * on, or is still waiting.
   */
  async proceed(from: PersistedRun | string, workflow: Workflow, options: ResumeOptions = {}): Promise<RunOutcome> {
    return outcomeOf(await this.#continue(from, workflow, options));
  }

  /**
   * Record a person's decision on a waiting run in the runner's store (from any process; the
   * run itself need not be loaded). Checked against the pending requests; a repeat of the same
   * decision is a no-op (`duplicate: true`), a different one for a decided call a
   * HumanDecisionError. `proceed(runId, workflow)` then continues the run.
   */
  async decide(runId: string, decision: DecisionInput): Promise<DecisionReceipt> {
    const store = this.options.store;
    if (!store) throw new InvalidArgumentError("store", "decide() records in the runner's store: new WorkflowRunner({ ..., store })");
    return recordDecision(store, runId, decision, this.#now());
  }

  /**
   * A new run in the runner's store starting from commit `at` of run `runId` (time travel),
   * optionally patched: a reworded message, edited args of a call not yet run. The parent is not
   * modified; the fork has its own id (also inside its state, so its tool calls get their own
   * idempotency keys) and is continued with `resume(fork.runId, workflow)` or `proceed`.
   *
   * @example
   * const fork = await runner.fork("quote-1", { at: 2, patch: { messages: (m) => m.map((x, i) => (i === 1 ? { ...x, content: "Quote 900 units" } : x)) } });
   * await runner.resume(fork.runId, workflow);
   */
  async fork(runId: string, options: ForkOptions): Promise<ForkResult> {
    const store = this.options.store;
    if (!store) throw new InvalidArgumentError("store", "fork() copies a run within the runner's store: new WorkflowRunner({ ..., store })");
    return forkRun(store, runId, options, this.#now());
  }

  /**
   * Continue a persisted run in a new actor (a new process even): from a snapshot object, or by
   * run id from the runner's store (its latest checkpoint). A service that was in flight is
   * re-run with its persisted input; finished tool results are already in the context.
   */
  async resume(from: PersistedRun | string, workflow: Workflow, options: ResumeOptions = {}): Promise<unknown> {
    return resultOf(await this.#continue(from, workflow, options));
  }

  async #continue(from: PersistedRun | string, workflow: Workflow, options: ResumeOptions): Promise<Driven> {
    assertWorkflow(workflow);
    assertResumeOptions(options);
    const { restorable, record } =
      this.options.store === undefined && typeof from !== "string"
        ? (this.#assertIdle(), { restorable: restorableRun(from, workflow, this.options.contextManager), record: undefined })
        : await this.#prepare(() => this.#restore(from, workflow));
    const callbacks = new CallbackGuard();
    const actor: WorkflowActor = createActor(machineFor(workflow), { snapshot: withoutSpanRef(restorable.persisted), input: restorable.input, ...this.#inspectOption(callbacks) });
    return this.#drive(workflow, actor, options.signal, callbacks, record, { parent: options.traceContext, previous: spanRefIn(restorable.persisted) });
  }

  /**
   * Run a failed or cancelled run again from its store, from its last state before it ended (the
   * commit before its final one): a backend that was down, a budget raised since. The run keeps
   * its id and its log grows; the failure stays in the log's history.
   */
  async retry(runId: string, workflow: Workflow, options: ResumeOptions = {}): Promise<unknown> {
    assertWorkflow(workflow);
    assertResumeOptions(options);
    if (typeof runId !== "string") throw new InvalidArgumentError("runId", "expected the id of a run in the runner's store");
    const { restorable, record } = await this.#prepare(() => this.#restore(runId, workflow, { retry: true }));
    const callbacks = new CallbackGuard();
    const actor: WorkflowActor = createActor(machineFor(workflow), { snapshot: withoutSpanRef(restorable.persisted), input: restorable.input, ...this.#inspectOption(callbacks) });
    return resultOf(await this.#drive(workflow, actor, options.signal, callbacks, record, { parent: options.traceContext, previous: spanRefIn(restorable.persisted) }));
  }

  /** A new run's input with its store record: the session's history as seed, the run leased and new. */
  async #storedStart(workflow: Workflow, userMessage: string, options: RunOptions): Promise<{ input: WorkflowInput; record: RunRecord | undefined }> {
    const store = this.options.store;
    const sessionId = options.sessionId;
    const from = sessionId === undefined ? options.from : await sessionSeed(store, sessionId, options);
    const startedAt = this.#now();
    const input = runInput(this.options, workflow, userMessage, { ...options, ...(from ? { from } : {}) }, startedAt);
    if (!store) return { input, record: undefined };
    const lease = await store.lock(input.runId);
    if (this.options.metrics) countTakeover(this.options.metrics, clientName(store), lease);
    const existing = await store.latest(input.runId).catch(async (error: unknown) => {
      await lease.release();
      throw error;
    });
    if (existing) {
      await lease.release();
      throw runExistsError(input.runId);
    }
    const meta = { runId: input.runId, workflow: workflow.name, sessionId, createdAt: startedAt, seq: 0, state: "start", status: "active" as const };
    const writer = new CheckpointWriter(store, lease, meta, () => this.#now(), this.#storedRedaction(workflow));
    writer.record({
      type: "start",
      input,
      ...(options.parent ? { parent: { runId: options.parent.runId, callId: options.parent.callId } } : {}),
      ...(options.launch ? { launch: { ...options.launch } } : {}),
    });
    return { input, record: { lease, writer, recorded: new Map() } };
  }

  /** The snapshot to resume (from the store when given a run id), checked, with the run's store record. */
  async #restore(from: PersistedRun | string, workflow: Workflow, how: { retry?: boolean } = {}): Promise<{ restorable: ReturnType<typeof restorableRun>; record: RunRecord | undefined }> {
    const store = this.options.store;
    let snapshot: PersistedRun;
    let record: RunRecord | undefined;
    if (typeof from === "string") {
      if (!store) throw new InvalidArgumentError("runId", "resuming a run by id needs a runner with a store (new WorkflowRunner({ ..., store }))");
      const lease = await store.lock(from);
      if (this.options.metrics) countTakeover(this.options.metrics, clientName(store), lease);
      try {
        const last = await store.latest(from);
        if (!last) throw new StoreError(`the store has no run ${from}`, from, "store");
        const checkpoint = how.retry ? await beforeTheEnd(store, last) : last;
        snapshot = checkpoint.snapshot;
        const { workflow: name, sessionId, createdAt, state, status } = checkpoint;
        const seq = last.seq;
        record = {
          lease,
          writer: new CheckpointWriter(store, lease, { runId: from, workflow: name, sessionId, createdAt, seq, state, status }, () => this.#now(), this.#storedRedaction(workflow)),
          recorded: state === WorkflowState.executingToolsRunning ? await recordedOutcomes(store, from) : new Map(),
          decisions: state === WorkflowState.awaitingHuman && !how.retry ? await recordedDecisions(store, from) : [],
        };
      } catch (error) {
        await lease.release();
        throw error;
      }
    } else {
      snapshot = from;
    }
    let restorable: ReturnType<typeof restorableRun>;
    try {
      restorable = restorableRun(snapshot, workflow, this.options.contextManager);
    } catch (error) {
      await record?.lease.release();
      throw error;
    }
    if (!record && store) {
      // A snapshot object resumed on a runner with a store: recorded under its own run id.
      const runId = restorable.input.runId;
      const lease = await store.lock(runId);
      if (this.options.metrics) countTakeover(this.options.metrics, clientName(store), lease);
      const previous = await store.latest(runId).catch(async (error: unknown) => {
        await lease.release();
        throw error;
      });
      const meta = {
        runId,
        workflow: workflow.name,
        sessionId: previous?.sessionId,
        createdAt: previous?.createdAt ?? restorable.input.startedAt,
        seq: previous?.seq ?? 0,
        state: previous?.state ?? "start",
        status: previous?.status ?? ("active" as const),
      };
      record = { lease, writer: new CheckpointWriter(store, lease, meta, () => this.#now(), this.#storedRedaction(workflow)), recorded: new Map() };
    }
    return { restorable, record };
  }

  /** Preparation before a run starts (store reads, locks): one at a time, like runs. */
  async #prepare<T>(prepare: () => Promise<T>): Promise<T> {
    this.#assertIdle();
    this.#starting = true;
    try {
      return await prepare();
    } finally {
      this.#starting = false;
    }
  }

  #now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** What the checkpoint writer masks: the workflow's `redact` names, with `redactStoredLogs` only. */
  #storedRedaction(workflow: Workflow): { redact?: RedactionMap } {
    const map = this.options.redactStoredLogs ? redactionMapOf(workflow.tools) : undefined;
    return map ? { redact: map } : {};
  }

  /** The user's inspector behind the callback guard (XState would call it unprotected, mid-transition). */
  #inspectOption(callbacks: CallbackGuard): { inspect?: (event: InspectionEvent) => void } {
    const inspect = this.options.inspect;
    if (!inspect) return {};
    const deliver = typeof inspect === "function" ? inspect : (event: InspectionEvent) => inspect.next!(event);
    return { inspect: (event) => callbacks.call("inspect", deliver, event) };
  }

  /** This runner's services for a workflow, made once (they keep the history's wire form between calls). */
  #servicesFor(workflow: Workflow): WorkflowServices {
    const cached = this.#services.get(workflow);
    if (cached) return cached;
    const o = this.options;
    // Chunks also go to an inspector that takes them (the visualizer shows the text as it streams).
    const sink = typeof o.inspect === "object" && typeof o.inspect.chunk === "function" ? o.inspect : undefined;
    const onChunk =
      sink && o.stream
        ? (chunk: StreamChunk) => {
            const runId = this.#session?.actor.getSnapshot().context.run.id;
            if (runId) sink.chunk!(runId, chunk);
            return o.onChunk?.(chunk);
          }
        : o.onChunk;
    const services = createServices({
      workflow,
      client: o.client,
      contextManager: o.contextManager,
      reasoningReplay: o.reasoningReplay ?? "none",
      ...(o.request ? { request: o.request } : {}),
      stream: o.stream ?? false,
      ...(onChunk ? { onChunk } : {}),
      ...(o.toolTimeoutMs !== undefined ? { toolTimeoutMs: o.toolTimeoutMs } : {}),
      ...(o.maxResultChars !== undefined ? { maxResultChars: o.maxResultChars } : {}),
      now: () => this.#now(),
      haltedBy: () => this.#session?.haltedBy,
      trace: () => this.#trace,
      beforeTool: () => this.#record?.writer.barrier() ?? Promise.resolve(),
      recordedOutcome: (key) => this.#record?.recorded.get(key),
      ...(o.store ? { afterTool: (outcome: OutcomeEvent) => this.#record?.writer.recordOutcome(outcome) ?? Promise.resolve() } : {}),
      runChild: (call, child, message, options) => {
        const context = this.#session?.actor.getSnapshot().context;
        if (!context) return Promise.reject(new InvalidArgumentError("runChild", "no run is active on this runner"));
        const caller = { options: o, context, now: this.#now(), runner: (options: WorkflowRunnerOptions) => new WorkflowRunner(options) };
        const running = runChildWorkflow(caller, call, child, message, options);
        this.#children.add(running);
        void running.catch(() => undefined).finally(() => this.#children.delete(running));
        return running;
      },
    });
    this.#services.set(workflow, services);
    return services;
  }

  /** This attempt's spans, or undefined when tracing is off. The run span's parent is the caller's context (or the active one). */
  #startTrace(workflow: Workflow, actor: WorkflowActor, record: RunRecord | undefined, tracing: AttemptTracing): RunTrace | undefined {
    const telemetry = this.options.telemetry;
    const tracer = runTracer(telemetry);
    if (!tracer) return undefined;
    const sessionId = tracing.sessionId ?? record?.writer.sessionId;
    const trace = new RunTrace({
      tracer,
      recordContent: telemetry?.recordContent ?? false,
      workflow,
      client: this.options.client,
      runId: actor.getSnapshot().context.run.id,
      sessionId,
      parent: tracing.parent ?? otelContext.active(),
      previous: tracing.previous,
    });
    // The no-op API with nothing to continue: a chat or tool span per step would be an invalid
    // no-op span too, so the run does without them (what every user without an SDK pays).
    return trace.inert ? undefined : trace;
  }

  #assertIdle(): void {
    if (this.#session?.active || this.#starting) {
      throw new InvalidArgumentError("run", "a run is already active on this runner (one run at a time: use another runner, or stop() it)");
    }
  }

  async #drive(
    workflow: Workflow,
    actor: WorkflowActor,
    signal: AbortSignal | undefined,
    callbacks: CallbackGuard,
    record: RunRecord | undefined,
    tracing: AttemptTracing,
  ): Promise<Driven> {
    const { onMessage, onStateChange, inspect, onHumanRequest } = this.options;
    this.#record = record;
    const trace = this.#startTrace(workflow, actor, record, tracing);
    this.#trace = trace;
    this.#session = new RunSession(actor, callbacks, {
      now: () => this.#now(),
      tools: workflow.tools,
      onHumanRequest,
      decisions: record?.decisions,
      onMessage,
      onStateChange,
      checkpoints: record?.writer,
      traceRef: trace?.ref,
    });
    const runId = actor.getSnapshot().context.run.id;
    const flush = typeof inspect === "object" && typeof inspect.flush === "function" ? () => inspect.flush!() : undefined;
    const leg = this.options.metrics ? startRunLeg(this.options.metrics, { workflow: workflow.name, client: this.options.client }) : undefined;
    const observing = trace || leg ? observeSteps(actor, [trace, leg]) : undefined;
    let outcome: RunLegOutcome | undefined;
    try {
      const driven = await this.#session.drive(this.#servicesFor(workflow), signal);
      outcome = driven.kind === "done" ? "done" : "waiting";
      trace?.end(outcome, stateName(actor.getSnapshot().value), actor.getSnapshot().context);
      return { runId, ...driven };
    } catch (error) {
      trace?.end(ForgeError.isInstance(error) && (error as ForgeError).code === "FORGE_WORKFLOW_CANCELLED" ? "cancelled" : "failed", stateName(actor.getSnapshot().value), actor.getSnapshot().context, error);
      throw error;
    } finally {
      observing?.unsubscribe();
      leg?.end(outcome ?? this.#session.stats?.outcome ?? "failed", this.#session.stats);
      // A run that ended while a tool ran a child run (cancelled, stopped, failed) aborted that
      // call's signal: the child is cancelled and durable as such before this run settles.
      if (this.#children.size > 0) await Promise.allSettled([...this.#children]);
      // Whatever ended the run, its last checkpoint is written (or its write failure already
      // failed the run) and the run is unlocked for the next runner.
      if (record) {
        await record.writer.settled().catch(() => undefined);
        await record.lease.release();
      }
      // The inspector has the run's last events on their way before the caller goes on (or exits).
      await flush?.();
    }
  }
}

export { MACHINE_VERSION };

type OutcomeEvent = Extract<RunEvent, { type: "outcome" }>;

type Driven = DriveResult & { runId: string };

/** Where an attempt's run span belongs: its parent context, the earlier attempt it links to, the session. */
interface AttemptTracing {
  parent?: Context | undefined;
  previous?: SpanRef | undefined;
  sessionId?: string | undefined;
}

/** Feeds each machine step to the attempt's spans (interventions as events), from the state the actor starts in. */
/** Feeds each step (the contexts and states before and after it) to the run's trace and metrics. */
function observeSteps(actor: WorkflowActor, observers: (Pick<RunTrace, "observe"> | undefined)[]): { unsubscribe(): void } {
  let prev = actor.getSnapshot();
  let prevState = stateName(prev.value);
  return actor.subscribe({
    next: (snapshot) => {
      const state = stateName(snapshot.value);
      for (const o of observers) o?.observe(prev.context, snapshot.context, prevState, state);
      prev = snapshot;
      prevState = state;
    },
    // The session's own subscription reports actor errors; this one only watches.
    error: () => undefined,
  });
}

/** How `start()` / `proceed()` end without an error: done, or waiting for a person. */
export type RunOutcome = { status: "done"; runId: string; result: unknown } | { status: "waiting"; runId: string; requests: HumanRequest[] };

function outcomeOf(d: Driven): RunOutcome {
  return d.kind === "done" ? { status: "done", runId: d.runId, result: d.result } : { status: "waiting", runId: d.runId, requests: d.requests };
}

function resultOf(d: Driven): unknown {
  if (d.kind === "done") return d.result;
  throw new RunWaitingError(
    d.runId,
    d.requests.map(({ callId, tool, args, kind, askedAt }) => ({ callId, tool, args, kind, askedAt })),
  );
}

/** The decisions recorded in a run's log, in order, as machine events. */
async function recordedDecisions(store: RunStore, runId: string): Promise<HumanDecisionEvent[]> {
  const out: HumanDecisionEvent[] = [];
  for (const e of await store.events(runId)) if (e.type === "decision") out.push({ type: "human.decide", callId: e.callId, decision: e.decision, at: e.at });
  return out;
}

/** A failed or cancelled run's checkpoint just before its end, or an error saying why there is none to retry. */
async function beforeTheEnd(store: RunStore, last: Checkpoint): Promise<Checkpoint> {
  const { runId, state } = last;
  if (state !== WorkflowState.failed && state !== WorkflowState.cancelled) {
    throw new InvalidArgumentError("runId", `run ${runId} is ${last.status === "active" ? `still active (${state}): resume it` : state}; only a failed or cancelled run can be retried`);
  }
  const before = last.seq > 1 ? await store.latest(runId, { seq: last.seq - 1 }) : undefined;
  if (!before || before.status !== "active") throw new InvalidArgumentError("runId", `run ${runId} ended in its first commit: there is no earlier state to retry from`);
  return before;
}

/** The outcomes written ahead in a run's log, by idempotency key (the latest for a key wins). */
async function recordedOutcomes(store: RunStore, runId: string): Promise<Map<string, OutcomeEvent>> {
  const recorded = new Map<string, OutcomeEvent>();
  for (const event of await store.events(runId)) if (event.type === "outcome") recorded.set(event.key, event);
  return recorded;
}
