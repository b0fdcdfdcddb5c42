/**
 * One run on a WorkflowRunner, from `actor.start()` to a settled promise: the actor, the user's
 * callbacks behind their guard, cancellation (signal, `stop()`), the wall-clock timer, and
 * what remains afterwards (stats, the snapshot taken before stopping).
 */
import type { Actor } from "xstate";
import type { WorkflowMachine } from "../../machines/workflow.machine.js";
import { CallbackError, HumanDecisionError, reviveError, WorkflowCancelledError, type ForgeError } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import type { AnyToolDef } from "../core/tool.js";
import type { WorkflowContext } from "../loop/context.js";
import { decisionProblem, expiredDecisions, isWaitExpiredAt, pendingRequests, type HumanDecision, type HumanDecisionEvent, type HumanRequest } from "../loop/human.js";
import { runStatsFrom, type RunStats } from "../loop/run-stats.js";
import { stateName, WorkflowState } from "../loop/state-name.js";
import { dehydrate, type PersistedRun } from "../persistence/snapshot.js";
import type { WorkflowFact } from "../loop/facts.js";
import type { CallbackGuard } from "./callback-guard.js";
import { armWaitClock, armWallClock } from "./run-clocks.js";
import type { CheckpointWriter } from "./checkpoints.js";
import { withSpanRef, type SpanRef } from "../telemetry/span-ref.js";

export type WorkflowActor = Actor<WorkflowMachine>;

/** How a drive ended without an error: the run finished, or it waits for a person. */
export type DriveResult = { kind: "done"; result: unknown } | { kind: "waiting"; requests: HumanRequest[] };

export interface SessionHooks {
  now: () => number;
  /** The workflow's tools: edited args in a decision are checked against their schemas. */
  tools: Readonly<Record<string, AnyToolDef>>;
  /** Answers requests for a person in-process; without it the run stops `waiting`. */
  onHumanRequest?: ((request: HumanRequest) => HumanDecision | Promise<HumanDecision>) | undefined;
  /** Decisions already in the run's log (a resumed waiting run): applied first, never re-recorded. */
  decisions?: readonly HumanDecisionEvent[] | undefined;
  /** The run's durable record, when the runner has a store. */
  checkpoints?: CheckpointWriter | undefined;
  onMessage?: ((message: Message) => void) | undefined;
  onStateChange?: ((state: string, context: Readonly<WorkflowContext>) => void) | undefined;
  /** This attempt's run span, noted in every snapshot it saves or hands out (a later attempt links to it). */
  traceRef?: SpanRef | undefined;
  /** The run's trace and metrics: each fact as the machine emits it, then each step's state. */
  observers?: readonly FactObserver[] | undefined;
}

/** Who reads a run's facts besides its log (src/telemetry: the trace, the metrics). */
export interface FactObserver {
  fact(fact: WorkflowFact): void;
  /** After each step (the facts it emitted came first), with the state it ended in. */
  step(state: string): void;
}

export class RunSession {
  readonly actor: WorkflowActor;
  /** Figures of the run once it settled (success or failure). */
  stats: RunStats | undefined;
  /** Set when a callback failed the run: services started in that same step do no I/O. */
  haltedBy: Error | undefined;
  readonly #callbacks: CallbackGuard;
  readonly #hooks: SessionHooks;
  #stoppedAt: PersistedRun | undefined;
  #stopRun: ((error: Error) => void) | undefined;
  /** The actor snapshot last handed to the checkpoint writer (each is saved once). */
  #saved: ReturnType<WorkflowActor["getSnapshot"]> | undefined;

  constructor(actor: WorkflowActor, callbacks: CallbackGuard, hooks: SessionHooks) {
    this.actor = actor;
    this.#callbacks = callbacks;
    this.#hooks = hooks;
  }

  get active(): boolean {
    return this.actor.getSnapshot().status === "active";
  }

  /** JSON-safe persisted snapshot; after a stop, the one taken just before stopping. */
  snapshot(): PersistedRun {
    if (this.#stoppedAt) return this.#stoppedAt;
    return dehydrate(withSpanRef(this.actor.getPersistedSnapshot() as unknown as PersistedRun, this.#hooks.traceRef));
  }

  /** Stop the actor (its in-flight service gets an aborted signal); the run's promise rejects. */
  stop(reason: string): void {
    if (!this.active) return;
    const ctx = this.actor.getSnapshot().context;
    this.#stoppedAt = this.snapshot();
    this.actor.stop();
    this.#stopRun?.(new WorkflowCancelledError(ctx.messages, ctx.steps.completedTools, ctx.iteration, reason));
  }

  /**
   * Before a tool starts (the executeTool service asks): the state it starts from, with every
   * finished result, is durable, and the lease is still ours (a process paused past it must
   * not start the tool). The service starts inside the step, after XState has set the step's
   * snapshot: that snapshot is handed to the writer here, not awaited from the subscription.
   */
  async checkpointNow(): Promise<void> {
    const { checkpoints } = this.#hooks;
    if (!checkpoints) return;
    this.#save(this.actor.getSnapshot());
    await checkpoints.settled();
    checkpoints.assertLeaseHeld();
  }

  #save(snapshot: ReturnType<WorkflowActor["getSnapshot"]>): void {
    if (snapshot === this.#saved) return;
    this.#saved = snapshot;
    this.#hooks.checkpoints!.save(withSpanRef(this.actor.getPersistedSnapshot() as unknown as PersistedRun, this.#hooks.traceRef), stateName(snapshot.value));
  }

  /** Start the actor; settles with the run's result (or its wait) or typed error. */
  drive(signal: AbortSignal | undefined): Promise<DriveResult> {
    const { actor } = this;
    const callbacks = this.#callbacks;
    const { now, onMessage, onStateChange, observers = [] } = this.#hooks;
    return new Promise<DriveResult>((resolve, reject) => {
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
      // A callback threw or rejected, or the store could not write: stop the actor here (its
      // in-flight service is aborted) and fail the run with the typed error, rather than let
      // XState rethrow it on a timer or run on without a durable record.
      const fail = (error: ForgeError) => {
        if (settled) return;
        this.haltedBy = error;
        const snapshot = actor.getSnapshot();
        if (snapshot.status === "active") {
          this.#stoppedAt = this.snapshot();
          actor.stop();
        }
        this.stats = { ...runStatsFrom(snapshot.context, "failed", now()), error: { name: error.name, code: error.code, message: error.message } };
        settle(() => reject(error));
      };
      callbacks.onFailure(fail);
      const { checkpoints } = this.#hooks;
      checkpoints?.onFailure(fail);
      if (settled) return; // the inspector already failed the run while the actor was created
      let serviceError: unknown;
      // The one reader of the run's facts: its log, the user's onMessage, the trace and metrics.
      const take = (fact: WorkflowFact) => {
        if (fact.type === "history.message") {
          if (onMessage) callbacks.call("onMessage", onMessage, fact.message);
        } else if (fact.type === "llm.response") {
          // The log keeps the run's token totals (a replay derives each call's usage from them).
          const { iteration, response, totals, now: at } = fact;
          checkpoints?.record({ type: "response", iteration, response, usage: totals, now: at });
        } else if (fact.type === "tool.outcome") {
          const { type: _type, ...end } = fact;
          checkpoints?.record({ type: "toolEnd", ...end });
        } else if (fact.type === "service.error") {
          serviceError = fact.error;
        }
        for (const o of observers) o.fact(fact);
      };
      cleanup.push(actor.on("*", take).unsubscribe);
      let lastState = "";
      const finish = (snapshot: ReturnType<WorkflowActor["getSnapshot"]>, state: string) => {
        if (settled) return; // a callback failed the run in the meantime
        this.stats = runStatsFrom(snapshot.context, state, now());
        const ctx = snapshot.context;
        if (state === WorkflowState.done) return settle(() => resolve({ kind: "done", result: ctx.terminal?.result }));
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
          if (checkpoints) {
            const ctx = snapshot.context;
            if (snapshot.status === "done") checkpoints.record({ type: "end", state, ...(ctx.error ? { error: ctx.error } : {}) });
            this.#save(snapshot);
          }
          for (const o of observers) o.step(state);
          if (state !== lastState) {
            lastState = state;
            callbacks.call("onStateChange", onStateChange, state, snapshot.context);
          }
          if (state === WorkflowState.awaitingHuman) return wait(snapshot.context);
          if (snapshot.status !== "done") return;
          // Settled a microtask later at the earliest: inspection events of this same step, and
          // callbacks still running asynchronously, may yet fail the run. With a store, the final
          // checkpoint is on disk before the run's promise settles.
          void callbacks
            .idle()
            .then(() => checkpoints?.settled())
            .then(() => finish(snapshot, state))
            .catch((error: unknown) => settle(() => reject(error)));
        },
        error: (err) => settle(() => reject(err)),
      });
      cleanup.push(() => sub.unsubscribe());
      // A person's decision: checked here (an invalid one would be ignored by the machine and
      // leave the run waiting), recorded in the log, then sent.
      const decide = (callId: string, decision: HumanDecision, record: boolean) => {
        if (settled) return;
        const event: HumanDecisionEvent = { type: "human.decide", callId, decision, at: now() };
        const problem = decisionProblem(actor.getSnapshot().context, event, this.#hooks.tools);
        if (problem) return fail(new HumanDecisionError(actor.getSnapshot().context.run.id, callId, problem.code, problem.message));
        if (record) checkpoints?.record({ type: "decision", callId, decision, at: event.at });
        actor.send(event);
      };
      const asked = new Set<string>();
      let parking = false;
      // A resumed waiting run takes the decisions already in its log before anyone is asked.
      let holding = stateName(actor.getSnapshot().value) === WorkflowState.awaitingHuman;
      const wait = (ctx: WorkflowContext) => {
        if (holding) return;
        const pending = pendingRequests(ctx);
        const { onHumanRequest } = this.#hooks;
        if (onHumanRequest) {
          for (const request of pending) {
            if (asked.has(request.callId)) continue;
            asked.add(request.callId);
            // Not through the callback guard's pending set: a person may never answer, and a run
            // that ends meanwhile (timeout, cancel) must not wait for them.
            let answer: Promise<HumanDecision>;
            try {
              answer = Promise.resolve(onHumanRequest(request));
            } catch (error) {
              answer = Promise.reject(error);
            }
            answer.then(
              (decision) => decide(request.callId, decision, true),
              (error: unknown) => fail(new CallbackError("onHumanRequest", error)),
            );
          }
          return;
        }
        if (parking) return;
        parking = true;
        // No one to ask here: the run parks, durable as `waiting`, and is resumed once decided.
        void callbacks
          .idle()
          .then(() => checkpoints?.settled())
          .then(() => {
            if (settled) return;
            this.#stoppedAt = this.snapshot();
            const last = actor.getSnapshot();
            this.stats = runStatsFrom(last.context, WorkflowState.awaitingHuman, now());
            actor.stop();
            settle(() => resolve({ kind: "waiting", requests: pendingRequests(last.context) }));
          })
          .catch((error: unknown) => settle(() => reject(error)));
      };
      if (signal) {
        const onAbort = () => actor.send({ type: "workflow.cancel", reason: abortReason(signal) });
        if (signal.aborted) queueMicrotask(onAbort);
        else {
          signal.addEventListener("abort", onAbort, { once: true });
          cleanup.push(() => signal.removeEventListener("abort", onAbort));
        }
      }
      actor.start();
      if (holding && !settled) {
        for (const d of this.#hooks.decisions ?? []) {
          if (pendingRequests(actor.getSnapshot().context).some((r) => r.callId === d.callId)) actor.send(d);
        }
        // A wait that ran out while no process was watching ends now, as the run says.
        this.#timeOut(now());
        holding = false;
        const snapshot = actor.getSnapshot();
        if (snapshot.status === "active" && stateName(snapshot.value) === WorkflowState.awaitingHuman) wait(snapshot.context);
      }
      if (!settled && actor.getSnapshot().status === "active") cleanup.push(armWallClock(actor, now), armWaitClock(actor, now, (at) => this.#timeOut(at)));
    });
  }

  /**
   * The wait timer fired: a run set to reject records the rejections in its log first (as a
   * person's decisions are), then the machine takes the timeout.
   */
  #timeOut(now: number): void {
    const ctx = this.actor.getSnapshot().context;
    if (isWaitExpiredAt(ctx, now) && ctx.run.budget.onWaitTimeout !== "fail") {
      for (const e of expiredDecisions(ctx, now)) this.#hooks.checkpoints?.record({ type: "decision", callId: e.callId, decision: e.decision, at: e.at });
    }
    this.actor.send({ type: "human.timeout", now });
  }
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r.message;
  return r === undefined ? "aborted" : String(r);
}
