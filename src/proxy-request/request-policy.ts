/**
 * Workflow policy without session state. The proxy keeps nothing between requests, so the step
 * record is read from the request's own history: every call the conversation shows, and which
 * of them got a successful result. The decisions are WorkflowRunner's pure guards (pending
 * steps, premature terminal, prerequisites, loop break) with the same nudges; any number of
 * proxy processes behind any load balancer agree, because they all read the same messages.
 */
import { z } from "zod";
import { InvalidArgumentError } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import type { Prerequisite } from "../core/tool.js";
import { blockedBatchResults, type BlockedResult } from "../guardrails/blocked-batch.js";
import { countCalls, DEFAULT_MAX_TOOL_REPEAT, findRepeatViolations } from "../guardrails/loop-break.js";
import { loopBreakMessage, TOOL_ERROR_MARKERS } from "../guardrails/nudges.js";
import { findPrematureTerminal, findPrerequisiteViolations, prerequisiteBlock, stepBlock, type CompletedStep } from "../guardrails/step-enforcer.js";

const prerequisite = z.union([z.string().min(1), z.strictObject({ tool: z.string().min(1), args: z.record(z.string(), z.unknown()).optional() })]);
const budget = z.number().int().min(0);

/** The policy as written in a `--policy` file or passed to `createProxy({ policy })`. */
export const proxyPolicySchema = z.strictObject({
  requiredSteps: z.array(z.string().min(1)).default([]),
  terminalTool: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
  prerequisites: z.record(z.string(), z.array(prerequisite)).default({}),
  maxToolRepeat: budget.default(DEFAULT_MAX_TOOL_REPEAT),
  maxPrematureAttempts: budget.default(3),
  maxPrereqViolations: budget.default(2),
});

export type ProxyPolicyInput = z.input<typeof proxyPolicySchema>;

/** A checked policy (plain JSON: it travels in the proxy-request machine's context). */
export interface ProxyPolicy {
  requiredSteps: string[];
  terminalTools: string[];
  prerequisites: Record<string, Prerequisite[]>;
  maxToolRepeat: number;
  maxPrematureAttempts: number;
  maxPrereqViolations: number;
}

/**
 * @example
 * parsePolicy({ requiredSteps: ["search"], terminalTool: "answer" }).terminalTools; // ["answer"]
 */
export function parsePolicy(value: unknown, where = "policy"): ProxyPolicy {
  const parsed = proxyPolicySchema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    throw new InvalidArgumentError(where, `${first.path.length > 0 ? `${first.path.join(".")}: ` : ""}${first.message}`);
  }
  const p = parsed.data;
  const terminalTools = p.terminalTool === undefined ? [] : typeof p.terminalTool === "string" ? [p.terminalTool] : p.terminalTool;
  const both = terminalTools.filter((t) => p.requiredSteps.includes(t));
  if (both.length > 0) throw new InvalidArgumentError(where, `${both.join(", ")} cannot be both a required step and a terminal tool`);
  if (p.requiredSteps.length > 0 && terminalTools.length === 0) {
    throw new InvalidArgumentError(where, "requiredSteps need a terminalTool: the call they must come before");
  }
  return { requiredSteps: p.requiredSteps, terminalTools, prerequisites: p.prerequisites as Record<string, Prerequisite[]>, maxToolRepeat: p.maxToolRepeat, maxPrematureAttempts: p.maxPrematureAttempts, maxPrereqViolations: p.maxPrereqViolations };
}

/**
 * One line for logs and the CLI.
 *
 * @example
 * describePolicy(parsePolicy({ requiredSteps: ["search"], terminalTool: "answer" }));
 * // 'search before answer; loop break after 3 identical calls'
 */
export function describePolicy(p: ProxyPolicy): string {
  const parts: string[] = [];
  if (p.terminalTools.length > 0 && p.requiredSteps.length > 0) parts.push(`${p.requiredSteps.join(", ")} before ${p.terminalTools.join(" / ")}`);
  for (const [tool, list] of Object.entries(p.prerequisites)) {
    parts.push(`${tool} needs ${list.map((x) => (typeof x === "string" ? x : x.tool)).join(", ")} first`);
  }
  parts.push(`loop break after ${p.maxToolRepeat} identical calls`);
  return parts.join("; ");
}

/** What the conversation shows was done: successful steps, and how often each exact call ran. */
export interface StepRecord {
  completed: CompletedStep[];
  counts: Record<string, number>;
}

const FAILED_RESULT = new RegExp(`^\\s*(?:\\[(?:${TOOL_ERROR_MARKERS.join("|")})\\]|error\\b)`, "i");

/**
 * The step record a conversation implies. A call counts as run once a result answers its id; it
 * counts as a completed step unless that result failed: flagged by the caller (Anthropic
 * `is_error`, listed in `failedCallIds`) or starting with a tool-error marker or "Error".
 *
 * @example
 * stepRecordOf(messages, new Set()).completed; // [{ tool: "search", args: { q: "x" } }]
 */
export function stepRecordOf(messages: readonly Message[], failedCallIds: ReadonlySet<string>): StepRecord {
  const calls = new Map<string, CompletedStep>();
  const ran: CompletedStep[] = [];
  const completed: CompletedStep[] = [];
  for (const m of messages) {
    if (m.role === "assistant") for (const c of m.toolCalls ?? []) calls.set(c.callId, { tool: c.name, args: c.args });
    if (m.role !== "tool" || m.toolCallId === undefined) continue;
    const call = calls.get(m.toolCallId);
    if (!call) continue;
    calls.delete(m.toolCallId); // a second result for the same id is not a second run
    ran.push(call);
    if (!failedCallIds.has(m.toolCallId) && !FAILED_RESULT.test(m.content)) completed.push(call);
  }
  return { completed, counts: countCalls({}, ran) };
}

/** How one batch fares against the policy. Budgets are the caller's to count. */
export type PolicyVerdict =
  | { ok: true }
  | { ok: false; kind: "step" | "prerequisite" | "loop_break"; results: BlockedResult[]; lastError: string };

/**
 * Check a validated batch. Steps the request does not offer as tools are left out: a model
 * cannot be nudged towards a tool it was not given.
 *
 * @example
 * checkPolicy([{ tool: "answer", args: {} }], policy, record, ["search", "answer"], { premature: 0, prereq: 0 }).ok; // false
 */
export function checkPolicy(
  calls: readonly { tool: string; args: unknown }[],
  policy: ProxyPolicy,
  record: StepRecord,
  offered: readonly string[],
  /** Earlier blocks of each kind in this request: the nudges escalate with them. */
  spent: { premature: number; prereq: number },
): PolicyVerdict {
  const required = policy.requiredSteps.filter((t) => offered.includes(t));
  const premature = findPrematureTerminal(calls, policy.terminalTools, required, record.completed);
  if (premature) {
    const block = stepBlock(calls, premature, spent.premature + 1, policy.maxPrematureAttempts);
    return { ok: false, kind: "step", results: block.results, lastError: block.nudge.content };
  }
  const prereqs: Record<string, { prerequisites: readonly Prerequisite[] }> = {};
  for (const [tool, list] of Object.entries(policy.prerequisites)) prereqs[tool] = { prerequisites: list };
  const violations = findPrerequisiteViolations(calls, prereqs, record.completed);
  if (violations.length > 0) {
    const block = prerequisiteBlock(calls, violations, spent.prereq + 1, policy.maxPrereqViolations);
    return { ok: false, kind: "prerequisite", results: block.results, lastError: block.nudge.content };
  }
  const repeats = findRepeatViolations(calls, record.counts, policy.maxToolRepeat);
  if (repeats.length > 0) {
    const offending = new Map(repeats.map((r) => [r.index, loopBreakMessage(r.tool, r.count)] as const));
    const first = offending.get(repeats[0]!.index)!;
    return { ok: false, kind: "loop_break", results: blockedBatchResults(calls, offending), lastError: first };
  }
  return { ok: true };
}
