/**
 * WorkflowRunner: builds the workflow statechart with its services (inference, compaction,
 * tool execution), runs it, and turns its final state into a result or a typed error.
 * Runs can be snapshotted at any moment and resumed in a new actor or process.
 *
 * The parts live in src/runner/: option checks (options.ts), the machine input and snapshot
 * restore (run-input.ts), one run from start to settled promise (session.ts), and the guard
 * around user callbacks (callback-guard.ts).
 */
import { createActor, type InspectionEvent } from "xstate";
import { InvalidArgumentError } from "./core/errors.js";
import type { Workflow } from "./core/workflow.js";
import { MACHINE_VERSION } from "./loop/context.js";
import type { RunStats } from "./loop/run-stats.js";
import type { PersistedRun } from "./persistence/snapshot.js";
import { createServices, type WorkflowServices } from "./services.js";
import { CallbackGuard } from "./runner/callback-guard.js";
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
import { RunSession, type WorkflowActor } from "./runner/session.js";

export type { RunOptions, WorkflowRunnerOptions } from "./runner/options.js";

/**
 * @example
 * const runner = new WorkflowRunner({ client, contextManager: new ContextManager({ budgetTokens: 8192 }) });
 * const quote = await runner.run(workflow, "Quote 500 units of PN-1001", { promptVars: { company: "Acme" } });
 */
export class WorkflowRunner {
  readonly options: Readonly<WorkflowRunnerOptions>;
  #session: RunSession | undefined;
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

  async run(workflow: Workflow, userMessage: string, options: RunOptions = {}): Promise<unknown> {
    assertWorkflow(workflow);
    if (typeof userMessage !== "string") throw new InvalidArgumentError("userMessage", "expected a string");
    assertRunOptions(options);
    const input = runInput(this.options, workflow, userMessage, options, this.#now());
    const callbacks = new CallbackGuard();
    const actor = createActor(machineFor(workflow), { input, ...this.#inspectOption(callbacks) });
    return this.#drive(workflow, actor, options.signal, callbacks);
  }

  /**
   * Continue a persisted run in a new actor (a new process even). A service that was in
   * flight is re-run with its persisted input; finished tool results are already in context.
   */
  async resume(snapshot: PersistedRun, workflow: Workflow, options: ResumeOptions = {}): Promise<unknown> {
    assertWorkflow(workflow);
    assertResumeOptions(options);
    const { persisted, input } = restorableRun(snapshot, workflow, this.options.contextManager);
    const callbacks = new CallbackGuard();
    const actor: WorkflowActor = createActor(machineFor(workflow), { snapshot: persisted, input, ...this.#inspectOption(callbacks) });
    return this.#drive(workflow, actor, options.signal, callbacks);
  }

  #now(): number {
    return (this.options.now ?? Date.now)();
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
    const services = createServices({
      workflow,
      client: o.client,
      contextManager: o.contextManager,
      reasoningReplay: o.reasoningReplay ?? "none",
      stream: o.stream ?? false,
      ...(o.onChunk ? { onChunk: o.onChunk } : {}),
      ...(o.toolTimeoutMs !== undefined ? { toolTimeoutMs: o.toolTimeoutMs } : {}),
      now: () => this.#now(),
      haltedBy: () => this.#session?.haltedBy,
    });
    this.#services.set(workflow, services);
    return services;
  }

  #drive(workflow: Workflow, actor: WorkflowActor, signal: AbortSignal | undefined, callbacks: CallbackGuard): Promise<unknown> {
    if (this.#session?.active) {
      throw new InvalidArgumentError("run", "a run is already active on this runner (one run at a time: use another runner, or stop() it)");
    }
    const { onMessage, onStateChange } = this.options;
    this.#session = new RunSession(actor, callbacks, { now: () => this.#now(), onMessage, onStateChange });
    return this.#session.drive(this.#servicesFor(workflow), signal);
  }
}

export { MACHINE_VERSION };
