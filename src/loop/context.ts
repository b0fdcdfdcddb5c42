/**
 * The workflow machine's context: plain JSON only, so `getPersistedSnapshot()` round-trips
 * through JSON.stringify. It is the authoritative record of control flow (steps, counters,
 * iteration); `messages` is the model's scratchpad and may be compacted.
 */
import type { ErrorJSON } from "../core/errors.js";
import type { LLMResponse, Usage } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { Prerequisite } from "../core/tool.js";
import type { CompletedStep } from "../guardrails/step-enforcer.js";
import type { ValidationResult } from "../guardrails/response-validator.js";

/** Bumped whenever the context shape or the statechart changes incompatibly. */
export const MACHINE_VERSION = 1;

export interface LoopBudget {
  maxIterations: number;
  maxRetries: number;
  maxToolErrors: number;
  maxPremature: number;
  maxPrereq: number;
  maxToolRepeat: number;
  maxTotalTokens?: number;
  maxWallClockMs?: number;
  /** More calls in one response are refused with a retry nudge. Absent in older snapshots: the default applies. */
  maxToolCallsPerResponse?: number;
}

/**
 * Calls one response may carry unless the runner says otherwise.
 *
 * @example
 * new WorkflowRunner({ client, contextManager, maxToolCallsPerResponse: 2 * DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE });
 */
export { DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE } from "../guardrails/assess-response.js";

export interface LoopSwitches {
  rescueEnabled: boolean;
  stepEnforcement: boolean;
}

/** One call of the batch being executed. */
export interface PlannedCall {
  tool: string;
  args: Record<string, unknown>;
  callId: string;
}

export type ToolResultStatus = "ok" | "error" | "resolution";

export interface ToolResultRecord {
  index: number;
  tool: string;
  callId: string;
  status: ToolResultStatus;
  content: string;
}

export interface CompactionRecord {
  phase: number;
  tokensBefore: number;
  tokensAfter: number;
  iteration: number;
}

export interface LoopStats {
  toolCalls: number;
  rescues: number;
  retryNudges: number;
  stepNudges: number;
  prereqNudges: number;
  toolErrors: number;
  loopBreaks: number;
  compactions: CompactionRecord[];
}

export interface WorkflowContext {
  runId: string;
  workflow: string;
  machineVersion: number;
  messages: Message[];
  /** LLM calls made so far (retries included). */
  iteration: number;
  toolNames: string[];
  terminalTools: string[];
  prerequisites: Record<string, Prerequisite[]>;
  steps: { required: string[]; completed: CompletedStep[] };
  counters: { retries: number; toolErrors: number; premature: number; prereq: number };
  /** Loop-break bookkeeping: canonical call key → times executed this run. */
  callCounts: Record<string, number>;
  budget: LoopBudget;
  switches: LoopSwitches;
  usage: Usage;
  startedAt: number;
  /** Wall clock as last reported by a service (guards stay pure). */
  now: number;
  lastResponse?: LLMResponse;
  validation?: ValidationResult;
  batch?: { calls: PlannedCall[]; done: ToolResultRecord[] };
  stats: LoopStats;
  terminal?: { tool: string; args: Record<string, unknown>; result: unknown };
  error?: ErrorJSON & { origin?: "infer" | "compact" | "loop" };
}

export interface WorkflowInput {
  runId: string;
  workflow: string;
  messages: Message[];
  toolNames: string[];
  terminalTools: string[];
  requiredSteps: string[];
  prerequisites: Record<string, Prerequisite[]>;
  budget: LoopBudget;
  switches: LoopSwitches;
  startedAt: number;
}

export function createInitialContext(input: WorkflowInput): WorkflowContext {
  return {
    runId: input.runId,
    workflow: input.workflow,
    machineVersion: MACHINE_VERSION,
    messages: input.messages,
    iteration: 0,
    toolNames: input.toolNames,
    terminalTools: input.terminalTools,
    prerequisites: input.prerequisites,
    steps: { required: input.requiredSteps, completed: [] },
    counters: { retries: 0, toolErrors: 0, premature: 0, prereq: 0 },
    callCounts: {},
    budget: input.budget,
    switches: input.switches,
    usage: { inputTokens: 0, outputTokens: 0 },
    startedAt: input.startedAt,
    now: input.startedAt,
    stats: { toolCalls: 0, rescues: 0, retryNudges: 0, stepNudges: 0, prereqNudges: 0, toolErrors: 0, loopBreaks: 0, compactions: [] },
  };
}
