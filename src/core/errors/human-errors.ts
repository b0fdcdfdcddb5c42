/**
 * Errors of a person in the loop: a run that waits, a decision it refuses, a wait that timed
 * out.
 */
import { ForgeError } from "./forge-error.js";

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
