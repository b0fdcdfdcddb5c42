/**
 * A person's decision on a waiting run, recorded in its store from any process — a library
 * call, `forge-ts runs approve|reject|answer`, the visualizer, a webhook. It needs the store
 * only, not the workflow: the pending requests (with each tool's JSON Schema for edited args)
 * are in the run's last checkpoint. The run's lease makes concurrent deciders take turns; the
 * decision becomes one `decision` event in the log, which the run applies when it continues.
 */
import { HumanDecisionError, InvalidArgumentError, StoreError } from "../core/errors.js";
import { compileJsonSchema } from "../core/tool.js";
import { canonicalJson } from "../guardrails/canonical-json.js";
import type { WorkflowContext } from "../loop/context.js";
import { decisionProblem, type HumanDecision, type HumanDecisionEvent, type HumanRequest } from "../loop/human.js";
import type { RunStore } from "../persistence/run-store.js";

/** What to decide: the call (optional when exactly one request is pending) and the decision. */
export interface DecisionInput {
  callId?: string;
  decision: HumanDecision;
}

export interface DecisionReceipt {
  runId: string;
  callId: string;
  tool: string;
  /** The same decision was already recorded (a retried webhook, a double click): nothing new was written. */
  duplicate: boolean;
  /** Requests of the run still undecided after this one. */
  pending: HumanRequest[];
}

/**
 * The run's requests with the decisions its log already holds folded in (a decision recorded
 * while the run was parked is in the log, not yet in the checkpoint's context).
 *
 * @example
 * requestsWithLog(ctx, events).filter((r) => !r.decision); // still pending
 */
export function requestsWithLog(ctx: WorkflowContext, decisions: readonly HumanDecisionEvent[]): HumanRequest[] {
  const requests = ctx.batch?.human ?? [];
  return requests.map((r) => {
    if (r.decision) return r;
    const logged = decisions.find((d) => d.callId === r.callId);
    return logged ? { ...r, decision: { ...logged.decision, at: logged.at } } : r;
  });
}

/**
 * @example
 * await recordDecision(store, runId, { decision: { type: "approve" } }, Date.now());
 */
export async function recordDecision(store: RunStore, runId: string, input: DecisionInput, now: number): Promise<DecisionReceipt> {
  if (typeof runId !== "string" || runId === "") throw new InvalidArgumentError("runId", "expected the id of a waiting run");
  if (typeof input !== "object" || input === null) throw new InvalidArgumentError("decision", "expected { callId?, decision }");
  const lease = await store.lock(runId);
  try {
    const last = await store.latest(runId);
    if (!last) throw new StoreError(`the store has no run ${runId}`, runId, "store");
    const ctx = last.snapshot.context as unknown as WorkflowContext;
    const logged: HumanDecisionEvent[] = [];
    for (const e of await store.events(runId)) if (e.type === "decision") logged.push({ type: "human.decide", callId: e.callId, decision: e.decision, at: e.at });
    const requests = last.status === "waiting" ? requestsWithLog(ctx, logged) : [];
    const pending = requests.filter((r) => !r.decision);
    const callId = input.callId ?? onlyPending(runId, pending);
    const event: HumanDecisionEvent = { type: "human.decide", callId, decision: input.decision, at: now };
    const request = requests.find((r) => r.callId === callId);
    if (request?.decision) {
      const { at: _at, ...earlier } = request.decision;
      if (canonicalJson(earlier) === canonicalJson(input.decision)) return { runId, callId, tool: request.tool, duplicate: true, pending };
    }
    const folded = { ...ctx, batch: ctx.batch ? { ...ctx.batch, human: requests } : undefined } as WorkflowContext;
    const problem = last.status === "waiting" ? decisionProblem(folded, event) : { code: "not_waiting" as const, message: `run ${runId} is ${last.status} (${last.state}), not waiting for a person` };
    if (problem) throw new HumanDecisionError(runId, callId, problem.code, problem.message);
    const edited = input.decision.type === "approve" ? input.decision.args : undefined;
    if (edited !== undefined) {
      const checked = compileJsonSchema(request!.parameters)(edited);
      if (!checked.ok) throw new HumanDecisionError(runId, callId, "invalid_args", `edited args for ${request!.tool}: ${checked.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`);
    }
    await store.commit({
      runId,
      fence: lease.fence,
      seq: last.seq + 1,
      workflow: last.workflow,
      ...(last.sessionId !== undefined ? { sessionId: last.sessionId } : {}),
      state: last.state,
      status: last.status,
      createdAt: last.createdAt,
      savedAt: now,
      events: [{ type: "decision", callId, decision: input.decision, at: now }],
    });
    return { runId, callId, tool: request!.tool, duplicate: false, pending: pending.filter((r) => r.callId !== callId) };
  } finally {
    await lease.release();
  }
}

function onlyPending(runId: string, pending: readonly HumanRequest[]): string {
  if (pending.length === 1) return pending[0]!.callId;
  const which = pending.map((r) => `${r.callId} (${r.tool})`).join(", ");
  throw new HumanDecisionError(runId, "", pending.length === 0 ? "not_waiting" : "unknown_call", pending.length === 0 ? `run ${runId} has no pending request` : `run ${runId} has ${pending.length} pending requests: name one of ${which}`);
}
