/**
 * The workflow machine's actions as pure functions: each takes the context (and the event's
 * data) and returns the context patch plus the messages it appended, which the machine
 * assigns and emits. No I/O, no clock, no randomness: the same context gives the same patch.
 */
import { createMessage, MessageType, type Message, type ToolCallInfo } from "../core/messages.js";
import type { ToolCall } from "../core/llm.js";
import {
  batchSkippedMessage,
  loopBreakMessage,
  prerequisiteMessage,
  stepNudgeMessage,
  toolErrorMessage,
  toolResolutionMessage,
} from "../guardrails/nudges.js";
import { callKey, isRepeatExceeded } from "../guardrails/loop-break.js";
import { stepTier } from "../guardrails/step-enforcer.js";
import { ToolResolutionError } from "../core/errors.js";
import type { PlannedCall, ToolResultStatus, WorkflowContext } from "./context.js";
import { prematureTerminal, prerequisiteViolations, validatedCalls } from "./guards.js";

export interface ActionResult {
  patch: Partial<WorkflowContext>;
  appended: Message[];
}

function append(ctx: WorkflowContext, appended: Message[], patch: Partial<WorkflowContext> = {}): ActionResult {
  return { patch: { ...patch, messages: [...ctx.messages, ...appended] }, appended };
}

/**
 * Call ids are generated, not taken from the model: some models reuse ids across turns
 * ("functions.x:0") and Mistral templates insist on 9 alphanumeric characters. Derived from
 * run, iteration and index so a restored snapshot produces the same ids.
 */
export function makeCallId(runId: string, iteration: number, index: number): string {
  let h = 0x811c9dc5;
  const s = `${runId}:${iteration}:${index}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h.toString(36) + iteration.toString(36) + index.toString(36)).padStart(9, "0").slice(-9);
}

function reasoningMessages(ctx: WorkflowContext): Message[] {
  const reasoning = ctx.lastResponse?.reasoning;
  return reasoning ? [createMessage("assistant", reasoning, MessageType.REASONING, { stepIndex: ctx.iteration })] : [];
}

function toolCallMessage(ctx: WorkflowContext, calls: readonly { tool: string; args: unknown }[]): { message: Message; ids: string[] } {
  const ids = calls.map((_, i) => makeCallId(ctx.runId, ctx.iteration, i));
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
  const nudge = createMessage("user", ctx.validation.nudge.content, MessageType.RETRY_NUDGE, { stepIndex: ctx.iteration });
  return append(ctx, [...reasoningMessages(ctx), text, nudge], {
    counters: { ...ctx.counters, retries: ctx.counters.retries + 1 },
    stats: { ...ctx.stats, retryNudges: ctx.stats.retryNudges + 1 },
  });
}

/** Unknown tool or bad arguments: the batch is answered on the tool channel, nothing runs. */
export function recordRejectedBatch(ctx: WorkflowContext): ActionResult {
  if (ctx.validation?.kind !== "rejected") throw new Error("recordRejectedBatch needs a rejected validation");
  const { calls, rejections } = ctx.validation;
  const { message, ids } = toolCallMessage(ctx, calls);
  const results = rejections.map((r) => toolMessage(ctx, r.tool, ids[r.index]!, r.message, MessageType.RETRY_NUDGE));
  return append(ctx, [...reasoningMessages(ctx), message, ...results], {
    counters: { ...ctx.counters, retries: ctx.counters.retries + 1 },
    stats: {
      ...ctx.stats,
      retryNudges: ctx.stats.retryNudges + 1,
      rescues: ctx.stats.rescues + (ctx.validation.rescued ? 1 : 0),
    },
  });
}

/** A valid batch: the consecutive-retry counter starts over. */
export function acceptCalls(ctx: WorkflowContext): ActionResult {
  const rescued = ctx.validation?.kind === "calls" && ctx.validation.rescued;
  return {
    patch: { counters: { ...ctx.counters, retries: 0 }, stats: { ...ctx.stats, rescues: ctx.stats.rescues + (rescued ? 1 : 0) } },
    appended: [],
  };
}

function blockBatch(ctx: WorkflowContext, blockedMessage: (call: ToolCall, index: number) => string | undefined, type: MessageType) {
  const calls = validatedCalls(ctx);
  const { message, ids } = toolCallMessage(ctx, calls);
  const results = calls.map((c, i) => toolMessage(ctx, c.tool, ids[i]!, blockedMessage(c, i) ?? batchSkippedMessage(c.tool), type));
  return [...reasoningMessages(ctx), message, ...results];
}

/** Terminal tool called with required steps pending: escalating step nudge (tiers 1/2/3). */
export function recordPrematureTerminal(ctx: WorkflowContext): ActionResult {
  const premature = prematureTerminal(ctx);
  if (!premature) throw new Error("recordPrematureTerminal needs a premature terminal call");
  const tier = stepTier(ctx.counters.premature + 1);
  const appended = blockBatch(
    ctx,
    (c) => (c.tool === premature.terminalTool ? stepNudgeMessage(premature.terminalTool, premature.pending, tier) : undefined),
    MessageType.STEP_NUDGE,
  );
  return append(ctx, appended, {
    counters: { ...ctx.counters, premature: ctx.counters.premature + 1 },
    stats: { ...ctx.stats, stepNudges: ctx.stats.stepNudges + 1 },
  });
}

/** A call whose prerequisites have not run: the whole batch is blocked (pre-batch state). */
export function recordPrereqViolation(ctx: WorkflowContext): ActionResult {
  const violations = prerequisiteViolations(ctx);
  const byIndex = new Map(violations.map((v) => [v.index, v]));
  const appended = blockBatch(
    ctx,
    (c, i) => {
      const v = byIndex.get(i);
      return v ? prerequisiteMessage(c.tool, v.missing) : undefined;
    },
    MessageType.PREREQUISITE_NUDGE,
  );
  return append(ctx, appended, {
    counters: { ...ctx.counters, prereq: ctx.counters.prereq + 1 },
    stats: { ...ctx.stats, prereqNudges: ctx.stats.prereqNudges + 1 },
  });
}

/** Plan the batch (loop-break decided up front, identical calls inside one batch count too). */
export function startBatch(ctx: WorkflowContext): ActionResult {
  const calls = validatedCalls(ctx);
  const { message, ids } = toolCallMessage(ctx, calls);
  const callCounts = { ...ctx.callCounts };
  const planned: PlannedCall[] = calls.map((c, i) => {
    const key = callKey(c.tool, c.args);
    const base: PlannedCall = { tool: c.tool, args: c.args, callId: ids[i]! };
    if (isRepeatExceeded(callCounts, key, ctx.budget.maxToolRepeat)) {
      return { ...base, blocked: loopBreakMessage(c.tool, (callCounts[key] ?? 0) + 1) };
    }
    callCounts[key] = (callCounts[key] ?? 0) + 1;
    return base;
  });
  return append(ctx, [...reasoningMessages(ctx), message], { callCounts, batch: { calls: planned, done: [] } });
}

export interface ToolOutcome {
  status: ToolResultStatus;
  content: string;
  result?: unknown;
}

export function stringifyResult(result: unknown): string {
  if (typeof result === "string") return result;
  if (result === undefined) return "";
  return JSON.stringify(result) ?? String(result);
}

export const outcomeFromResult = (result: unknown): ToolOutcome => ({ status: "ok", content: stringifyResult(result), result });

/** ToolResolutionError is the tool author's "valid args, no data": fed back, not counted. */
export function outcomeFromError(tool: string, error: unknown): ToolOutcome {
  if (ToolResolutionError.isInstance(error)) return { status: "resolution", content: toolResolutionMessage(tool, error) };
  return { status: "error", content: toolErrorMessage(tool, error) };
}

export function nextCall(ctx: WorkflowContext): PlannedCall & { index: number } {
  const index = ctx.batch?.done.length ?? 0;
  const call = ctx.batch?.calls[index];
  if (!call) throw new Error("no pending call in the batch");
  return { ...call, index };
}

/** Commit one finished call before the next starts, so a snapshot never loses it. */
export function commitToolOutcome(ctx: WorkflowContext, outcome: ToolOutcome): ActionResult {
  const call = nextCall(ctx);
  const batch = ctx.batch!;
  const record = { index: call.index, tool: call.tool, callId: call.callId, status: outcome.status, content: outcome.content };
  const patch: Partial<WorkflowContext> = {
    batch: { calls: batch.calls, done: [...batch.done, record] },
    stats: {
      ...ctx.stats,
      toolCalls: ctx.stats.toolCalls + (outcome.status === "blocked" ? 0 : 1),
      toolErrors: ctx.stats.toolErrors + (outcome.status === "error" ? 1 : 0),
      loopBreaks: ctx.stats.loopBreaks + (outcome.status === "blocked" ? 1 : 0),
    },
  };
  if (outcome.status === "ok") {
    patch.steps = { required: ctx.steps.required, completed: [...ctx.steps.completed, { tool: call.tool, args: call.args }] };
    if (ctx.terminalTools.includes(call.tool) && ctx.terminal === undefined) {
      patch.terminal = { tool: call.tool, args: call.args, result: outcome.result };
    }
  }
  return append(ctx, [toolMessage(ctx, call.tool, call.callId, outcome.content, MessageType.TOOL_RESULT)], patch);
}

export function commitBlockedCall(ctx: WorkflowContext): ActionResult {
  const call = nextCall(ctx);
  return commitToolOutcome(ctx, { status: "blocked", content: call.blocked ?? loopBreakMessage(call.tool, 0) });
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
