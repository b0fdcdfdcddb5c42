/**
 * A person in the loop, as plain data on the batch: which calls need an approval or an answer,
 * and what was decided. The workflow machine waits in `awaitingHuman` while any request is
 * undecided; decisions arrive as `human.decide` events, checked here against the pending list
 * and the tool's schema. Pure: the same context and event give the same patch.
 */
import { isPlainObject } from "../core/json-value.js";
import type { AnyToolDef, ApprovalContext } from "../core/tool.js";
import type { PlannedCall, WorkflowContext } from "./context.js";
import type { HumanDecision, HumanDecisionEvent, HumanKind, HumanRequest } from "./human-request.js";

// The data shapes live in human-request.ts (the context embeds them, so context.ts imports
// them without a cycle through this file); re-exported for one import point.
export type { HumanDecision, HumanDecisionEvent, HumanKind, HumanRequest };

/** Why a decision cannot be taken; the code is stable (HumanDecisionError carries it). */
export type DecisionProblem = {
  code: "not_waiting" | "unknown_call" | "already_decided" | "wrong_kind" | "invalid_args" | "invalid_decision";
  message: string;
};

/**
 * The requests a batch raises: a human-input tool always asks; a tool with `needsApproval`
 * asks when it says so for these arguments. A `needsApproval` function that throws asks too:
 * an approval that cannot be decided is not waived.
 *
 * @example
 * humanRequestsFor(calls, tools, ctx); // [{ callId, tool: "refund", kind: "approval", ... }]
 */
export function humanRequestsFor(calls: readonly PlannedCall[], tools: Readonly<Record<string, AnyToolDef>>, ctx: WorkflowContext): HumanRequest[] {
  const asked: ApprovalContext = { runId: ctx.run.id, iteration: ctx.iteration };
  const out: HumanRequest[] = [];
  calls.forEach((call, index) => {
    const def = tools[call.tool];
    const kind = def ? humanKind(def, call.args, asked) : undefined;
    if (kind) out.push({ callId: call.callId, index, tool: call.tool, args: call.args, kind, askedAt: ctx.now, parameters: def!.spec.parameters });
  });
  return out;
}

/**
 * What a tool's definition asks of a person for these arguments, if anything.
 *
 * @example
 * humanKind(refund, { amount: 500 }, { runId: "r", iteration: 1 }); // "approval"
 */
export function humanKind(def: AnyToolDef, args: Record<string, unknown>, asked: ApprovalContext): HumanKind | undefined {
  if (def.humanInput === true) return "input";
  const rule = def.needsApproval;
  if (rule === undefined || rule === false) return undefined;
  if (rule === true) return "approval";
  try {
    return rule(args, asked) === true ? "approval" : undefined;
  } catch {
    return "approval";
  }
}

/** Does any of these calls need a person? (The guard before `awaitingHuman`.) */
export function needsHuman(calls: readonly { tool: string; args: Record<string, unknown> }[], tools: Readonly<Record<string, AnyToolDef>>, ctx: WorkflowContext): boolean {
  const asked: ApprovalContext = { runId: ctx.run.id, iteration: ctx.iteration };
  return calls.some((c) => {
    const def = tools[c.tool];
    return def !== undefined && humanKind(def, c.args, asked) !== undefined;
  });
}

/** Requests of the current batch still waiting for a decision. */
export function pendingRequests(ctx: WorkflowContext): HumanRequest[] {
  return (ctx.batch?.human ?? []).filter((r) => r.decision === undefined);
}

/** Every request of the batch is decided: the batch can run. */
export function isBatchDecided(ctx: WorkflowContext): boolean {
  return (ctx.batch?.human ?? []).every((r) => r.decision !== undefined);
}

/**
 * Why this decision cannot be taken now, or undefined when it can. Edited args are checked
 * against the tool's schema (the workflow's own validator when given, else nothing here: the
 * caller without the workflow checks `parameters`).
 *
 * @example
 * decisionProblem(ctx, { type: "human.decide", callId: "x", decision: { type: "approve" }, at: 0 }); // { code: "unknown_call", ... }
 */
export function decisionProblem(ctx: WorkflowContext, event: HumanDecisionEvent, tools?: Readonly<Record<string, AnyToolDef>>): DecisionProblem | undefined {
  const shape = decisionShapeProblem(event.decision);
  if (shape) return { code: "invalid_decision", message: shape };
  const requests = ctx.batch?.human ?? [];
  if (requests.length === 0) return { code: "not_waiting", message: `run ${ctx.run.id} is not waiting for a person` };
  const request = requests.find((r) => r.callId === event.callId);
  if (!request) {
    return { code: "unknown_call", message: `run ${ctx.run.id} has no request for call ${event.callId}; pending: ${pendingRequests(ctx).map((r) => `${r.callId} (${r.tool})`).join(", ") || "none"}` };
  }
  if (request.decision) return { code: "already_decided", message: `call ${event.callId} (${request.tool}) was already decided: ${request.decision.type}` };
  const { decision } = event;
  if (request.kind === "input" && decision.type === "approve") return { code: "wrong_kind", message: `call ${event.callId} (${request.tool}) asks a question: answer it (or reject it)` };
  if (request.kind === "approval" && decision.type === "answer") return { code: "wrong_kind", message: `call ${event.callId} (${request.tool}) needs an approval: approve or reject it` };
  if (decision.type === "approve" && decision.args !== undefined) {
    const def = tools?.[request.tool];
    const checked = def?.validateArgs(decision.args);
    if (checked && !checked.ok) {
      return { code: "invalid_args", message: `edited args for ${request.tool}: ${checked.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}` };
    }
  }
  return undefined;
}

function decisionShapeProblem(d: unknown): string | undefined {
  if (!isPlainObject(d)) return "a decision is { type: \"approve\" | \"reject\" | \"answer\", ... }";
  if (d.type === "approve") return d.args === undefined || isPlainObject(d.args) ? undefined : "approve: args must be a JSON object";
  if (d.type === "reject") return typeof d.reason === "string" && d.reason.trim() !== "" ? undefined : "reject: a reason (the model sees it) is required";
  if (d.type === "answer") return d.answer === undefined ? "answer: the answer is required" : undefined;
  return `unknown decision type ${JSON.stringify(d.type)}`;
}

/**
 * Record a valid decision. An approval with edited args replaces the call's args (the schema's
 * parsed value), so the approved call runs exactly as approved.
 */
export function applyDecision(ctx: WorkflowContext, event: HumanDecisionEvent, tools: Readonly<Record<string, AnyToolDef>>): Partial<WorkflowContext> {
  const batch = ctx.batch!;
  const human = batch.human!.map((r) => (r.callId === event.callId ? { ...r, decision: { ...event.decision, at: event.at } } : r));
  const request = human.find((r) => r.callId === event.callId)!;
  let calls = batch.calls;
  if (event.decision.type === "approve" && event.decision.args !== undefined) {
    const checked = tools[request.tool]?.validateArgs(event.decision.args);
    const args = checked?.ok ? (checked.value as Record<string, unknown>) : event.decision.args;
    calls = calls.map((c, i) => (i === request.index ? { ...c, args } : c));
  }
  return { batch: { ...batch, calls, human } };
}

/** The decision that settles the batch's next call without running it (reject, answer), if any. */
export function settlingDecision(ctx: WorkflowContext): { request: HumanRequest; decision: Exclude<HumanDecision, { type: "approve" }> } | undefined {
  const index = ctx.batch?.done.length ?? 0;
  const request = ctx.batch?.human?.find((r) => r.index === index);
  const decision = request?.decision;
  if (!request || !decision || decision.type === "approve") return undefined;
  return { request, decision };
}

/** A request has waited past the run's `maxWaitMs` at `now`. */
export function isWaitExpiredAt(ctx: WorkflowContext, now: number): boolean {
  const max = ctx.run.budget.maxWaitMs;
  return max !== undefined && pendingRequests(ctx).some((r) => now - r.askedAt >= max);
}

/**
 * The rejections a wait past `maxWaitMs` makes (every undecided request; the model is told
 * why), as decision events: the runner records them in the log like a person's, so a replay
 * takes the same path.
 */
export function expiredDecisions(ctx: WorkflowContext, now: number): HumanDecisionEvent[] {
  const reason = `no decision came within ${ctx.run.budget.maxWaitMs} ms`;
  return pendingRequests(ctx).map((r) => ({ type: "human.decide", callId: r.callId, decision: { type: "reject", reason }, at: now }));
}

/** Every undecided request rejected for want of a decision. */
export function expireWaits(ctx: WorkflowContext, now: number): Partial<WorkflowContext> {
  const batch = ctx.batch!;
  const expired = new Map(expiredDecisions(ctx, now).map((e) => [e.callId, { ...e.decision, at: e.at }] as const));
  const human = batch.human!.map((r) => (r.decision === undefined && expired.has(r.callId) ? { ...r, decision: expired.get(r.callId)! } : r));
  return { batch: { ...batch, human } };
}
