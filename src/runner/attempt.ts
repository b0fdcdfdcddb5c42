/**
 * One attempt of a run on a WorkflowRunner (a start, a resume, a retry), wired once: its trace
 * and metrics (fact observers), the session that drives the actor, and the services built for
 * this run with its record and trace passed in. `end()` closes what the attempt opened.
 */
import { context as otelContext, type Context } from "@opentelemetry/api";
import { ForgeError } from "../core/errors.js";
import type { StreamChunk } from "../core/llm.js";
import type { Workflow } from "../core/workflow.js";
import { stateName } from "../loop/state-name.js";
import { RunTrace } from "../telemetry/run-trace.js";
import type { SpanRef } from "../telemetry/span-ref.js";
import { runTracer } from "../telemetry/telemetry-options.js";
import { startRunLeg, type RunLeg, type RunLegOutcome } from "../telemetry/run-metrics.js";
import type { CallbackGuard } from "./callback-guard.js";
import type { WorkflowRunnerOptions } from "./options.js";
import type { RunRecord } from "./run-record.js";
import { createServices, type WorkflowServices } from "./services.js";
import { runChildWorkflow, type CallingRun } from "./child-run.js";
import { RunSession, type DriveResult, type WorkflowActor } from "./session.js";

/** Where an attempt's run span belongs: its parent context, the earlier attempt it links to, the session. */
export interface AttemptTracing {
  parent?: Context | undefined;
  previous?: SpanRef | undefined;
  sessionId?: string | undefined;
}

export interface AttemptInit {
  options: Readonly<WorkflowRunnerOptions>;
  workflow: Workflow;
  actor: WorkflowActor;
  callbacks: CallbackGuard;
  record: RunRecord | undefined;
  tracing: AttemptTracing;
  now: () => number;
  /** A runner for a child run (`ctx.runChild`): a fresh one with the caller's settings. */
  newRunner: CallingRun["runner"];
}

export class Attempt {
  readonly session: RunSession;
  readonly services: WorkflowServices;
  readonly #trace: RunTrace | undefined;
  readonly #leg: RunLeg | undefined;
  readonly #record: RunRecord | undefined;
  readonly #flush: (() => unknown) | undefined;
  /** Child runs started by this run's tool calls and not yet settled (see child-run.ts). */
  readonly #children = new Set<Promise<unknown>>();

  constructor(init: AttemptInit) {
    const { options: o, workflow, actor, record, now } = init;
    this.#record = record;
    this.#trace = startTrace(init);
    this.#leg = o.metrics ? startRunLeg(o.metrics, { workflow: workflow.name, client: o.client }) : undefined;
    const inspect = o.inspect;
    this.#flush = typeof inspect === "object" && typeof inspect.flush === "function" ? () => inspect.flush!() : undefined;
    this.session = new RunSession(actor, init.callbacks, {
      now,
      tools: workflow.tools,
      onHumanRequest: o.onHumanRequest,
      decisions: record?.decisions,
      onMessage: o.onMessage,
      onStateChange: o.onStateChange,
      checkpoints: record?.writer,
      traceRef: this.#trace?.ref,
      observers: [this.#trace, this.#leg].filter((x) => x !== undefined),
    });
    const session = this.session;
    const runId = actor.getSnapshot().context.run.id;
    // Chunks also go to an inspector that takes them (the visualizer shows the text as it streams).
    const sink = typeof inspect === "object" && typeof inspect.chunk === "function" ? inspect : undefined;
    const onChunk = sink && o.stream ? (chunk: StreamChunk) => (sink.chunk!(runId, chunk), o.onChunk?.(chunk)) : o.onChunk;
    this.services = createServices({
      workflow,
      client: o.client,
      contextManager: o.contextManager,
      reasoningReplay: o.reasoningReplay ?? "none",
      ...(o.request ? { request: o.request } : {}),
      stream: o.stream ?? false,
      ...(onChunk ? { onChunk } : {}),
      ...(o.toolTimeoutMs !== undefined ? { toolTimeoutMs: o.toolTimeoutMs } : {}),
      ...(o.maxResultChars !== undefined ? { maxResultChars: o.maxResultChars } : {}),
      now,
      haltedBy: () => session.haltedBy,
      ...(this.#trace ? { trace: this.#trace } : {}),
      beforeTool: () => session.checkpointNow(),
      ...(record ? { recorded: record.recorded, afterTool: (outcome) => record.writer.recordOutcome(outcome) } : {}),
      runChild: (call, child, message, options) => {
        const caller = { options: o, context: actor.getSnapshot().context, now: now(), runner: init.newRunner };
        const running = runChildWorkflow(caller, call, child, message, options);
        this.#children.add(running);
        void running.catch(() => undefined).finally(() => this.#children.delete(running));
        return running;
      },
    });
  }

  /** Drive the run to its end (or its wait); the trace ends with it. */
  async drive(signal: AbortSignal | undefined): Promise<DriveResult> {
    const { actor } = this.session;
    const end = (outcome: RunLegOutcome, error?: unknown) => this.#trace?.end(outcome, stateName(actor.getSnapshot().value), actor.getSnapshot().context, error);
    try {
      const driven = await this.session.drive(signal);
      end(driven.kind === "done" ? "done" : "waiting");
      return driven;
    } catch (error) {
      end(ForgeError.isInstance(error) && (error as ForgeError).code === "FORGE_WORKFLOW_CANCELLED" ? "cancelled" : "failed", error);
      throw error;
    }
  }

  /**
   * After the drive: metrics counted, the child runs its calls started settled, the last
   * checkpoint written (or failed), the run unlocked, the inspector flushed.
   */
  async close(outcome: RunLegOutcome | undefined): Promise<void> {
    this.#leg?.end(outcome ?? this.session.stats?.outcome ?? "failed", this.session.stats);
    // A run that ended while a tool ran a child run (cancelled, stopped, failed) aborted that
    // call's signal: the child is cancelled and durable as such before this run settles.
    if (this.#children.size > 0) await Promise.allSettled([...this.#children]);
    // Whatever ended the run, its last checkpoint is written (or its write failure already
    // failed the run) and the run is unlocked for the next runner.
    const record = this.#record;
    if (record) {
      await record.writer.settled().catch(() => undefined);
      await record.lease.release();
    }
    // The inspector has the run's last events on their way before the caller goes on (or exits).
    await this.#flush?.();
  }
}

/** This attempt's spans, or undefined when tracing is off. The run span's parent is the caller's context (or the active one). */
function startTrace({ options, workflow, actor, record, tracing }: AttemptInit): RunTrace | undefined {
  const tracer = runTracer(options.telemetry);
  if (!tracer) return undefined;
  const trace = new RunTrace({
    tracer,
    recordContent: options.telemetry?.recordContent ?? false,
    workflow,
    client: options.client,
    runId: actor.getSnapshot().context.run.id,
    sessionId: tracing.sessionId ?? record?.writer.sessionId,
    parent: tracing.parent ?? otelContext.active(),
    previous: tracing.previous,
  });
  // The no-op API with nothing to continue: a chat or tool span per step would be an invalid
  // no-op span too, so the run does without them (what every user without an SDK pays).
  return trace.inert ? undefined : trace;
}
