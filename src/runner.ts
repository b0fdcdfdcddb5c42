/**
 * WorkflowRunner: builds the workflow statechart with its services (inference, compaction,
 * tool execution), runs it, and turns its final state into a result or a typed error.
 * Runs can be snapshotted at any moment and resumed in a new actor or process.
 *
 * The parts live in src/runner/: option checks (options.ts), the machine input and snapshot
 * restore (run-input.ts), the run's record in the store (run-record.ts), one attempt's wiring of
 * trace, services and session (attempt.ts), one run from start to settled promise (session.ts),
 * and the guard around user callbacks (callback-guard.ts).
 */
import { createActor } from "xstate";
import { InvalidArgumentError, RunWaitingError } from "./core/errors.js";
import type { WorkflowMachine } from "../machines/workflow.machine.js";
import { spanRefIn, withoutSpanRef } from "./telemetry/span-ref.js";
import type { Workflow } from "./core/workflow.js";
import { MACHINE_VERSION, type WorkflowInput } from "./loop/context.js";
import type { RunStats } from "./loop/run-stats.js";
import type { PersistedRun } from "./persistence/snapshot.js";
import type { WorkflowServices } from "./runner/services.js";
import { CallbackGuard, guardedInspect } from "./runner/callback-guard.js";
import {
  assertResumeOptions,
  assertRunnerOptions,
  assertRunOptions,
  assertWorkflow,
  type ResumeOptions,
  type RunOptions,
  type WorkflowRunnerOptions,
} from "./runner/options.js";
import { machineWith, restorableRun, runInput } from "./runner/run-input.js";
import type { DriveResult, WorkflowActor } from "./runner/session.js";
import { recordDecision, type DecisionInput, type DecisionReceipt } from "./runner/decisions.js";
import type { HumanRequest } from "./loop/human.js";
import { forkRun, type ForkOptions, type ForkResult } from "./runner/fork.js";
import { openNewRun, openSnapshotRun, openStoredRun, recordSetup, sessionSeed, type RunRecord } from "./runner/run-record.js";
import { Attempt, type AttemptTracing } from "./runner/attempt.js";
import type { RunLegOutcome } from "./telemetry/run-metrics.js";

export type { RunOptions, WorkflowRunnerOptions } from "./runner/options.js";

/**
 * @example
 * const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }) });
 * const quote = await runner.run(workflow, "Quote 500 units of PN-1001", { promptVars: { company: "Acme" } });
 */
export class WorkflowRunner {
  readonly options: Readonly<WorkflowRunnerOptions>;
  /** The current (or last) run attempt: its session, its services. */
  #attempt: Attempt | undefined;
  /** A run or resume is between its call and its actor (reading the store, taking the lock). */
  #starting = false;
  /** The statechart per workflow, its service actors running the current attempt's services. */
  readonly #machines = new WeakMap<Workflow, WorkflowMachine>();

  constructor(options: WorkflowRunnerOptions) {
    assertRunnerOptions(options);
    this.options = Object.freeze({ ...options });
  }

  /** The live actor of the current (or last) run: subscribe, inspect, send `workflow.cancel`. */
  get actor(): WorkflowActor | undefined {
    return this.#attempt?.session.actor;
  }

  /** Figures of the last run that settled (success or failure). */
  get lastRunStats(): RunStats | undefined {
    return this.#attempt?.session.stats;
  }

  /**
   * JSON-safe persisted snapshot of the current run, at any moment. After `stop()` it is the
   * snapshot taken just before stopping (a stopped actor has dropped its in-flight service).
   */
  snapshot(): PersistedRun {
    if (!this.#attempt) throw new InvalidArgumentError("snapshot", "no run has started on this runner");
    return this.#attempt.session.snapshot();
  }

  /** Stop the current actor (its in-flight service gets an aborted signal); the run's promise rejects. */
  stop(reason = "runner stopped"): void {
    this.#attempt?.session.stop(reason);
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
    return this.#launch(workflow, { input }, record, options.signal, { parent: options.traceContext, sessionId: options.sessionId });
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

  /**
   * Run a failed or cancelled run again from its store, from its last state before it ended (the
   * commit before its final one): a backend that was down, a budget raised since. The run keeps
   * its id and its log grows; the failure stays in the log's history.
   */
  async retry(runId: string, workflow: Workflow, options: ResumeOptions = {}): Promise<unknown> {
    if (typeof runId !== "string") throw new InvalidArgumentError("runId", "expected the id of a run in the runner's store");
    return resultOf(await this.#continue(runId, workflow, options, { retry: true }));
  }

  async #continue(from: PersistedRun | string, workflow: Workflow, options: ResumeOptions, how: { retry?: boolean } = {}): Promise<Driven> {
    assertWorkflow(workflow);
    assertResumeOptions(options);
    const { restorable, record } =
      this.options.store === undefined && typeof from !== "string"
        ? (this.#assertIdle(), { restorable: restorableRun(from, workflow, this.options.contextManager), record: undefined })
        : await this.#prepare(() => this.#restore(from, workflow, how));
    const start = { snapshot: withoutSpanRef(restorable.persisted), input: restorable.input };
    return this.#launch(workflow, start, record, options.signal, { parent: options.traceContext, previous: spanRefIn(restorable.persisted) });
  }

  /** A new run's input with its store record: the session's history as seed, the run leased and new. */
  async #storedStart(workflow: Workflow, userMessage: string, options: RunOptions): Promise<{ input: WorkflowInput; record: RunRecord | undefined }> {
    const setup = recordSetup(this.options, workflow, () => this.#now());
    const seed = options.sessionId === undefined ? { from: options.from } : await sessionSeed(setup?.store, options.sessionId, options);
    const input = runInput(this.options, workflow, userMessage, { ...options, ...(seed.from ? { from: seed.from } : {}) }, this.#now());
    return { input, record: setup ? await openNewRun(setup, input, { ...options, notBefore: "notBefore" in seed ? seed.notBefore : undefined }) : undefined };
  }

  /** The snapshot to resume (from the store when given a run id), checked, with the run's store record. */
  async #restore(from: PersistedRun | string, workflow: Workflow, how: { retry?: boolean }): Promise<{ restorable: ReturnType<typeof restorableRun>; record: RunRecord | undefined }> {
    const setup = recordSetup(this.options, workflow, () => this.#now());
    let snapshot: PersistedRun;
    let record: RunRecord | undefined;
    if (typeof from === "string") {
      if (!setup) throw new InvalidArgumentError("runId", "resuming a run by id needs a runner with a store (new WorkflowRunner({ ..., store }))");
      ({ snapshot, record } = await openStoredRun(setup, from, how));
    } else snapshot = from;
    let restorable: ReturnType<typeof restorableRun>;
    try {
      restorable = restorableRun(snapshot, workflow, this.options.contextManager);
    } catch (error) {
      await record?.lease.release();
      throw error;
    }
    // A snapshot object resumed on a runner with a store: recorded under its own run id.
    if (!record && setup) record = await openSnapshotRun(setup, restorable.input);
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


  /** The statechart for a workflow with this runner's service actors, built once per workflow. */
  #machineFor(workflow: Workflow): WorkflowMachine {
    let machine = this.#machines.get(workflow);
    if (!machine) this.#machines.set(workflow, (machine = machineWith(workflow, () => this.#services())));
    return machine;
  }

  #services(): WorkflowServices {
    if (!this.#attempt) throw new Error("no run is active on this runner");
    return this.#attempt.services;
  }


  #assertIdle(): void {
    if (this.#attempt?.session.active || this.#starting) {
      throw new InvalidArgumentError("run", "a run is already active on this runner (one run at a time: use another runner, or stop() it)");
    }
  }

  /** One attempt: the actor (new, or from a snapshot), its trace, services and session; driven to its end or wait. */
  async #launch(workflow: Workflow, start: { input: WorkflowInput; snapshot?: unknown }, record: RunRecord | undefined, signal: AbortSignal | undefined, tracing: AttemptTracing): Promise<Driven> {
    const callbacks = new CallbackGuard();
    const actor: WorkflowActor = createActor(this.#machineFor(workflow), { ...start, ...guardedInspect(this.options.inspect, callbacks) } as never);
    const newRunner = (options: WorkflowRunnerOptions) => new WorkflowRunner(options);
    const attempt = new Attempt({ options: this.options, workflow, actor, callbacks, record, tracing, now: () => this.#now(), newRunner });
    this.#attempt = attempt;
    let outcome: RunLegOutcome | undefined;
    try {
      const driven = await attempt.drive(signal);
      outcome = driven.kind === "done" ? "done" : "waiting";
      return { runId: actor.getSnapshot().context.run.id, ...driven };
    } finally {
      await attempt.close(outcome);
    }
  }
}

export { MACHINE_VERSION };

type Driven = DriveResult & { runId: string };

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
