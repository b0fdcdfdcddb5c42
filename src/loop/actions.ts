/**
 * The workflow machine's actions as pure functions: each takes the context (and the event's
 * data) and returns the context patch plus the messages it appended, which the machine
 * assigns and emits. No I/O, no clock, no randomness: the same context gives the same patch.
 */
import { createMessage, MessageType, type Message, type ToolCallInfo } from "../core/messages.js";
import { blockedBatchResults, type BlockedResult } from "../guardrails/blocked-batch.js";
import { loopBreakMessage, rejectedMessage, toolErrorMessage, toolResolutionMessage } from "../guardrails/nudges.js";
import { rejectionBudget } from "../guardrails/response-validator.js";
import { prerequisiteBlock, stepBlock, summaryHint } from "../guardrails/step-enforcer.js";
import { ToolResolutionError } from "../core/errors.js";
import { estimateMessageTokensChars4 } from "../context/token-estimator.js";
import { addCalls } from "./call-counts.js";
import type { PlannedCall, ToolResultStatus, WorkflowContext } from "./context.js";
import { settlingDecision, type HumanRequest } from "./human.js";
import { RecordedToolError, type ToolOutput } from "./tool-output.js";
import { prematureTerminal, prerequisiteViolations, repeatViolations, validatedCalls } from "./guards.js";
import { batchTools, rescueFact, type NudgeFactKind, type WorkflowFact } from "./facts.js";

/** A context patch, the messages it appended, and the guardrail facts it reports (the machine emits both). */
export interface ActionResult {
  patch: Partial<WorkflowContext>;
  appended: Message[];
  facts?: WorkflowFact[];
}

/** The history grows by `appended`; its running token total grows by their estimates only. */
function append(ctx: WorkflowContext, appended: Message[], patch: Partial<WorkflowContext> = {}, facts: WorkflowFact[] = []): ActionResult {
  let tokens = ctx.historyTokens;
  for (const m of appended) tokens += estimateMessageTokensChars4(m);
  patch.messages = ctx.messages.concat(appended);
  patch.historyTokens = tokens;
  return facts.length > 0 ? { patch, appended, facts } : { patch, appended };
}

/** A nudge fact for this iteration. */
const nudge = (ctx: WorkflowContext, kind: NudgeFactKind, reason: string, tools: string[] = []): WorkflowFact => ({ type: "guardrail.nudge", iteration: ctx.iteration, kind, reason, tools });

/**
 * The step hint the compaction service gets (`summaryHint` of the completed steps), from the
 * distinct completed tools: its size is the number of tools, not of steps run.
 */
export function compactionHint(ctx: WorkflowContext): string {
  return summaryHint(ctx.steps.completedTools.map((tool) => ({ tool, args: null })));
}

/**
 * Call ids are generated, not taken from the model: some models reuse ids across turns
 * ("functions.x:0") and Mistral templates insist on 9 alphanumeric characters. Derived from
 * run, iteration and index so a restored snapshot produces the same ids.
 */
export function makeCallId(runId: string, iteration: number, index: number): string {
  // FNV-1a of `${runId}:${iteration}:${index}`, continued from the run id's (hashed once per run).
  const h = fnv1a(`${iteration}:${index}`, runPrefixHash(runId));
  return (h.toString(36) + iteration.toString(36) + index.toString(36)).padStart(9, "0").slice(-9);
}

function fnv1a(s: string, from: number): number {
  let h = from;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** FNV-1a state after `${runId}:` — the same for every call of a run, so kept for the last run id seen. */
let lastRun = { id: "", hash: fnv1a(":", 0x811c9dc5) };
function runPrefixHash(runId: string): number {
  if (lastRun.id !== runId) lastRun = { id: runId, hash: fnv1a(`${runId}:`, 0x811c9dc5) };
  return lastRun.hash;
}

function reasoningMessages(ctx: WorkflowContext): Message[] {
  const reasoning = ctx.lastResponse?.reasoning;
  return reasoning ? [createMessage("assistant", reasoning, MessageType.REASONING, { stepIndex: ctx.iteration })] : [];
}

function toolCallMessage(ctx: WorkflowContext, calls: readonly { tool: string; args: unknown }[]): { message: Message; ids: string[] } {
  const ids = calls.map((_, i) => makeCallId(ctx.run.id, ctx.iteration, i));
  const toolCalls: ToolCallInfo[] = calls.map((c, i) => ({ name: c.tool, args: c.args, callId: ids[i]! }));
  return { message: createMessage("assistant", "", MessageType.TOOL_CALL, { stepIndex: ctx.iteration, toolCalls }), ids };
}

function toolMessage(ctx: WorkflowContext, tool: string, callId: string, content: string, type: MessageType): Message {
  return createMessage("tool", content, type, { stepIndex: ctx.iteration, toolName: tool, toolCallId: callId });
}

/** Bare text with nothing rescuable: keep the text, nudge on the user channel. */
export function recordRetry(ctx: WorkflowContext): ActionResult {
  if (ctx.validation?.kind !== "retry") throw new Error("recordRetry needs a retry validation");
  const text = createMessage("assistant", ctx.validation.raw, MessageType.TEXT_RESPONSE, { stepIndex: ctx.iteration });
  const nudgeMessage = createMessage("user", ctx.validation.nudge.content, MessageType.RETRY_NUDGE, { stepIndex: ctx.iteration });
  return append(
    ctx,
    [...reasoningMessages(ctx), text, nudgeMessage],
    {
      counters: { ...ctx.counters, retries: ctx.counters.retries + 1 },
      stats: { ...ctx.stats, retryNudges: ctx.stats.retryNudges + 1 },
    },
    [nudge(ctx, "retry", ctx.validation.nudge.kind)],
  );
}

/**
 * Unknown tool or bad arguments: the batch is answered on the tool channel, nothing runs.
 * An unknown tool draws on the retry budget, bad arguments on the tool-error budget
 * (`rejectionBudget`, shared with the Guardrails facade).
 */
export function recordRejectedBatch(ctx: WorkflowContext): ActionResult {
  if (ctx.validation?.kind !== "rejected") throw new Error("recordRejectedBatch needs a rejected validation");
  const { calls, rejections } = ctx.validation;
  const { message, ids } = toolCallMessage(ctx, calls);
  const results = rejections.map((r) => toolMessage(ctx, r.tool, ids[r.index]!, r.message, MessageType.RETRY_NUDGE));
  const onRetries = rejectionBudget(rejections) === "retries";
  const reason = [...new Set(rejections.map((r) => r.kind))].join(",");
  return append(
    ctx,
    [...reasoningMessages(ctx), message, ...results],
    {
      counters: onRetries
        ? { ...ctx.counters, retries: ctx.counters.retries + 1 }
        : { ...ctx.counters, retries: 0, toolErrors: ctx.counters.toolErrors + 1 },
      stats: {
        ...ctx.stats,
        retryNudges: ctx.stats.retryNudges + 1,
        rescues: ctx.stats.rescues + (ctx.validation.rescued ? 1 : 0),
      },
    },
    [...rescueFact(ctx.validation, ctx.iteration), nudge(ctx, "retry", reason)],
  );
}

/** A valid batch: the consecutive-retry counter starts over. */
export function acceptCalls(ctx: WorkflowContext): ActionResult {
  const rescued = ctx.validation?.kind === "calls" && ctx.validation.rescued;
  // No streak to end and nothing to count: an empty patch (the machine assigns nothing).
  if (!rescued && ctx.counters.retries === 0) return { patch: {}, appended: [] };
  return {
    patch: { counters: { ...ctx.counters, retries: 0 }, stats: { ...ctx.stats, rescues: ctx.stats.rescues + (rescued ? 1 : 0) } },
    appended: [],
    ...(rescued ? { facts: rescueFact(ctx.validation, ctx.iteration) } : {}),
  };
}

/** One TOOL_CALL message for the blocked batch, then its tool-channel answers. */
function blockBatch(ctx: WorkflowContext, results: readonly BlockedResult[], type: MessageType): Message[] {
  const calls = validatedCalls(ctx);
  const { message, ids } = toolCallMessage(ctx, calls);
  return [...reasoningMessages(ctx), message, ...results.map((r) => toolMessage(ctx, r.tool, ids[r.index]!, r.content, type))];
}

/** A blocked batch: answered on the tool channel, one budget counter and one stat up, one nudge fact. */
function blocked(
  ctx: WorkflowContext,
  results: readonly BlockedResult[],
  type: MessageType,
  counter: keyof WorkflowContext["counters"],
  stat: "stepNudges" | "prereqNudges" | "loopBreaks",
  kind: NudgeFactKind,
  reason: string,
): ActionResult {
  const patch = { counters: { ...ctx.counters, [counter]: ctx.counters[counter] + 1 }, stats: { ...ctx.stats, [stat]: ctx.stats[stat] + 1 } };
  return append(ctx, blockBatch(ctx, results, type), patch, [nudge(ctx, kind, reason, batchTools(validatedCalls(ctx)))]);
}

/** Terminal tool called with required steps pending: escalating step nudge (tiers 1/2/3). */
export function recordPrematureTerminal(ctx: WorkflowContext): ActionResult {
  const premature = prematureTerminal(ctx);
  if (!premature) throw new Error("recordPrematureTerminal needs a premature terminal call");
  const block = stepBlock(validatedCalls(ctx), premature, ctx.counters.premature + 1, ctx.run.budget.maxPremature);
  return blocked(ctx, block.results, MessageType.STEP_NUDGE, "premature", "stepNudges", "step", "premature_terminal");
}

/** A call whose prerequisites have not run: the whole batch is blocked (pre-batch state). */
export function recordPrereqViolation(ctx: WorkflowContext): ActionResult {
  const block = prerequisiteBlock(validatedCalls(ctx), prerequisiteViolations(ctx), ctx.counters.prereq + 1, ctx.run.budget.maxPrereq);
  return blocked(ctx, block.results, MessageType.PREREQUISITE_NUDGE, "prereq", "prereqNudges", "prerequisite", "prerequisite_missing");
}

/**
 * The same call (tool + canonical args) repeated beyond maxToolRepeat: the batch is blocked
 * with a loop-break answer and counts as one tool error.
 */
export function recordLoopBreak(ctx: WorkflowContext): ActionResult {
  const offending = new Map(repeatViolations(ctx).map((v) => [v.index, loopBreakMessage(v.tool, v.count)] as const));
  return blocked(ctx, blockedBatchResults(validatedCalls(ctx), offending), MessageType.TOOL_RESULT, "toolErrors", "loopBreaks", "loop_break", "repeated_call");
}

/**
 * Plan the batch: every call will run, in order; loop-break counts include this batch.
 * `human` (from the toolbox's needsApproval / humanInput) lists the calls a person decides first.
 */
export function startBatch(ctx: WorkflowContext, human: (ctx: WorkflowContext, calls: PlannedCall[]) => HumanRequest[] = () => []): ActionResult {
  const calls = validatedCalls(ctx);
  const { message, ids } = toolCallMessage(ctx, calls);
  const planned: PlannedCall[] = calls.map((c, i) => ({ tool: c.tool, args: c.args, callId: ids[i]! }));
  const requests = human(ctx, planned);
  return append(
    ctx,
    [...reasoningMessages(ctx), message],
    {
      callCounts: addCalls(ctx.callCounts, calls),
      batch: requests.length > 0 ? { calls: planned, done: [], human: requests } : { calls: planned, done: [] },
    },
    requests.length > 0 ? [{ type: "human.wait", iteration: ctx.iteration, requests: requests.length, tools: requests.map((r) => r.tool) }] : [],
  );
}

/**
 * The outcome of a call a person settled without running it: a rejection goes back on the
 * tool-error channel with the person's reason (not counted as a tool failure: nothing failed);
 * an answer is the call's result.
 */
export function humanOutcome(ctx: WorkflowContext): ToolOutcome {
  const settled = settlingDecision(ctx);
  if (!settled) throw new Error("humanOutcome needs a call settled by a person");
  const { request, decision } = settled;
  if (decision.type === "reject") return { status: "resolution", content: rejectedMessage(request.tool, decision.reason) };
  const content = typeof decision.answer === "string" ? decision.answer : JSON.stringify(decision.answer);
  return { status: "ok", content, result: decision.answer };
}

export interface ToolOutcome {
  status: ToolResultStatus;
  content: string;
  result?: unknown;
  /** The whole result text when `content` (what the model sees) was cut to `maxResultChars`. */
  fullContent?: string;
}

/** A successful call; the service already reduced its result to JSON (`toolOutput`). */
export const outcomeFromOutput = (output: ToolOutput): ToolOutcome => ({
  status: "ok",
  content: output.content,
  result: output.result,
  ...(output.fullContent !== undefined ? { fullContent: output.fullContent } : {}),
});

/** ToolResolutionError is the tool author's "valid args, no data": fed back, not counted. */
export function outcomeFromError(tool: string, error: unknown): ToolOutcome {
  if (error instanceof RecordedToolError) return { status: error.status, content: error.content };
  if (ToolResolutionError.isInstance(error)) return { status: "resolution", content: toolResolutionMessage(tool, error) };
  return { status: "error", content: toolErrorMessage(tool, error) };
}

export function nextCall(ctx: WorkflowContext): PlannedCall & { index: number } {
  const index = ctx.batch?.done.length ?? 0;
  const call = ctx.batch?.calls[index];
  if (!call) throw new Error("no pending call in the batch");
  return { ...call, index };
}

/** What the executeTool service gets for one call (the machine's invoke input, as persisted). */
export interface ExecuteToolInput {
  runId: string;
  tool: string;
  args: Record<string, unknown>;
  callId: string;
  index: number;
  iteration: number;
  idempotencyKey: string;
}

/**
 * The `${runId}:${iteration}:${index}` key a tool sees (ToolExecuteContext.idempotencyKey): the
 * same after a restore or a resume, another in a fork (its own run id).
 */
export function idempotencyKey(runId: string, iteration: number, index: number): string {
  return `${runId}:${iteration}:${index}`;
}

/**
 * The batch's next call as the executeTool service's input: the one place it is built (the
 * machine invokes with it; a restored snapshot's in-flight input is checked against it).
 */
export function nextToolInput(ctx: WorkflowContext): ExecuteToolInput {
  const call = nextCall(ctx);
  return { runId: ctx.run.id, tool: call.tool, args: call.args, callId: call.callId, index: call.index, iteration: ctx.iteration, idempotencyKey: idempotencyKey(ctx.run.id, ctx.iteration, call.index) };
}

/** Commit one finished call before the next starts, so a snapshot never loses it. */
export function commitToolOutcome(ctx: WorkflowContext, outcome: ToolOutcome): ActionResult {
  const call = nextCall(ctx);
  const batch = ctx.batch!;
  const record = { index: call.index, tool: call.tool, callId: call.callId, status: outcome.status, content: outcome.content };
  const patch: Partial<WorkflowContext> = {
    batch: { ...batch, done: [...batch.done, record] },
    stats: {
      ...ctx.stats,
      toolCalls: ctx.stats.toolCalls + 1,
      toolErrors: ctx.stats.toolErrors + (outcome.status === "error" ? 1 : 0),
    },
  };
  if (outcome.status === "ok") {
    const { completedTools } = ctx.steps;
    patch.steps = {
      required: ctx.steps.required,
      completed: ctx.steps.completed.concat([{ tool: call.tool, args: call.args }]),
      completedTools: completedTools.includes(call.tool) ? completedTools : completedTools.concat([call.tool]),
    };
    if (ctx.run.terminalTools.includes(call.tool) && ctx.terminal === undefined) {
      patch.terminal = { tool: call.tool, args: call.args, result: outcome.result };
    }
  }
  return append(ctx, [toolMessage(ctx, call.tool, call.callId, outcome.content, MessageType.TOOL_RESULT)], patch);
}

/** Post-batch bookkeeping: an error counts once per batch; a clean batch resets the streaks. */
export function finishBatch(ctx: WorkflowContext): ActionResult {
  const done = ctx.batch?.done ?? [];
  const hadError = done.some((r) => r.status === "error");
  const allOk = done.length > 0 && done.every((r) => r.status === "ok");
  const counters = hadError
    ? { ...ctx.counters, toolErrors: ctx.counters.toolErrors + 1 }
    : allOk
      ? { ...ctx.counters, toolErrors: 0, premature: 0, prereq: 0 }
      : ctx.counters;
  return { patch: { counters, batch: undefined }, appended: [] };
}
