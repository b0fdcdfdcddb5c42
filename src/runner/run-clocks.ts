/**
 * A run's timers while it runs in-process: the wall-clock budget and the wait for a person.
 * Each re-checks the run's clock when it fires (an injected `now` decides, and setTimeout caps
 * long delays) and returns its canceller.
 */
import type { Actor } from "xstate";
import type { WorkflowMachine } from "../../machines/workflow.machine.js";
import { MAX_TIMER_MS } from "../core/tool.js";
import type { WorkflowContext } from "../loop/context.js";
import { pendingRequests } from "../loop/human.js";
import { stateName, WorkflowState } from "../loop/state-name.js";

type WorkflowActor = Actor<WorkflowMachine>;

/**
 * The wall-clock budget as a timer, so it also ends a model call or tool that is still in
 * flight (the machine's own check runs only between steps).
 */
export function armWallClock(actor: WorkflowActor, now: () => number): () => void {
  const { budget, startedAt } = actor.getSnapshot().context.run;
  const limit = budget.maxWallClockMs;
  if (limit === undefined) return () => undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    const at = now();
    const remaining = startedAt + limit - at;
    if (remaining > 0) timer = setTimeout(check, Math.min(Math.ceil(remaining), MAX_TIMER_MS));
    else actor.send({ type: "workflow.timeout", now: at });
  };
  check();
  return () => clearTimeout(timer);
}

/** The wait for a person as a timer, re-armed whenever the pending requests change; `timeOut` takes it when it runs out. */
export function armWaitClock(actor: WorkflowActor, now: () => number, timeOut: (now: number) => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let armedFor: number | undefined;
  const sub = actor.subscribe((snapshot) => {
    const deadline = stateName(snapshot.value) === WorkflowState.awaitingHuman ? waitDeadline(snapshot.context) : undefined;
    if (deadline === armedFor) return;
    clearTimeout(timer);
    armedFor = deadline;
    if (deadline === undefined) return;
    const fire = () => {
      const at = now();
      if (at < deadline) timer = setTimeout(fire, Math.min(Math.ceil(deadline - at), MAX_TIMER_MS));
      else timeOut(at);
    };
    fire();
  });
  return () => {
    clearTimeout(timer);
    sub.unsubscribe();
  };
}

/** The runner's side of `maxWaitMs` while a person is asked in-process: re-checked when it fires. */
export function waitDeadline(ctx: WorkflowContext): number | undefined {
  const max = ctx.run.budget.maxWaitMs;
  const pending = pendingRequests(ctx);
  if (max === undefined || pending.length === 0) return undefined;
  return Math.min(...pending.map((r) => r.askedAt)) + max;
}
