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
import { estimateTokensChars4 } from "../context/token-estimator.js";
import type { HumanRequest } from "./human-request.js";
import { callCountEntries, callCountsFrom, EMPTY_CALL_COUNTS, type CallCountTrie } from "./call-counts.js";

/**
 * Bumped whenever the context shape or the statechart changes incompatibly.
 * 2: the run's fixed definition under `run`, running totals (`historyTokens`,
 * `steps.completedTools`), `callCounts` as a hash trie.
 */
export const MACHINE_VERSION = 2;

/** A child run's caller: the run whose tool call started it, and that call's id. */
export interface ParentLink {
  runId: string;
  callId: string;
}

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
  /** How long a request may wait for a person, and what then (reject the undecided calls, or fail). */
  maxWaitMs?: number;
  onWaitTimeout?: "reject" | "fail";
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

/**
 * What a run started with: set once by createInitialContext and never assigned afterwards, so
 * the copies XState makes on every assign share it instead of copying its fields.
 */
export interface RunDefinition {
  id: string;
  workflow: string;
  toolNames: string[];
  terminalTools: string[];
  prerequisites: Record<string, Prerequisite[]>;
  budget: LoopBudget;
  switches: LoopSwitches;
  startedAt: number;
  /**
   * The `historyTokens` total above which the compaction service runs (the context manager's
   * trigger); null when the manager estimates tokens its own way, so the service runs every
   * iteration and decides. Set again on resume, from the resuming runner's manager.
   */
  compactAt: number | null;
  /**
   * A child run (`workflowTool`): the run and tool call that started it. Also in the start
   * event; here so that whoever sees only the run's snapshots (an inspector) knows it too.
   */
  parent?: ParentLink;
  /**
   * Tool name → argument names its `redact` masks wherever the run is reported (the visualizer,
   * `forge-ts runs show`, a stored log when asked). Kept in the run so a report needs no
   * workflow module; absent when no tool redacts anything.
   */
  redact?: Record<string, string[]>;
}

export interface StepTracker {
  required: string[];
  completed: CompletedStep[];
  /** Distinct tools in `completed`, in first-completion order (the compaction step hint). */
  completedTools: string[];
}

/**
 * Keep the top level at 16 keys or fewer: XState copies the context with `Object.assign` on
 * every assign, and V8 turns a copy with many more keys into a dictionary-mode object, which
 * makes every later copy and guard read several times slower (test/loop/context-shape.test.ts).
 */
export interface WorkflowContext {
  machineVersion: number;
  run: RunDefinition;
  messages: Message[];
  /** LLM calls made so far (retries included). */
  iteration: number;
  steps: StepTracker;
  counters: { retries: number; toolErrors: number; premature: number; prereq: number };
  /**
   * Loop-break bookkeeping: canonical call key → times executed this run, as a hash trie
   * (src/loop/call-counts.ts) so that counting a batch copies a path, not every key.
   */
  callCounts: CallCountTrie;
  /**
   * Running total of `estimateTokensChars4(messages)`: each appended message adds its own
   * estimate, compaction recomputes it. The compaction check reads it instead of re-estimating
   * the whole history every iteration.
   */
  historyTokens: number;
  usage: Usage;
  /** Wall clock as last reported by a service (guards stay pure). */
  now: number;
  stats: LoopStats;
  lastResponse?: LLMResponse;
  validation?: ValidationResult;
  /** The batch being executed; `human` lists the calls waiting for (or decided by) a person. */
  batch?: { calls: PlannedCall[]; done: ToolResultRecord[]; human?: HumanRequest[] };
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
  compactAt: number | null;
  parent?: ParentLink;
  redact?: Record<string, string[]>;
}

export function createInitialContext(input: WorkflowInput): WorkflowContext {
  return {
    machineVersion: MACHINE_VERSION,
    run: {
      id: input.runId,
      workflow: input.workflow,
      toolNames: input.toolNames,
      terminalTools: input.terminalTools,
      prerequisites: input.prerequisites,
      budget: input.budget,
      switches: input.switches,
      startedAt: input.startedAt,
      compactAt: input.compactAt,
      ...(input.parent ? { parent: { runId: input.parent.runId, callId: input.parent.callId } } : {}),
      ...(input.redact ? { redact: input.redact } : {}),
    },
    messages: input.messages,
    iteration: 0,
    steps: { required: input.requiredSteps, completed: [], completedTools: [] },
    counters: { retries: 0, toolErrors: 0, premature: 0, prereq: 0 },
    callCounts: EMPTY_CALL_COUNTS,
    historyTokens: estimateTokensChars4(input.messages),
    usage: { inputTokens: 0, outputTokens: 0 },
    now: input.startedAt,
    stats: { toolCalls: 0, rescues: 0, retryNudges: 0, stepNudges: 0, prereqNudges: 0, toolErrors: 0, loopBreaks: 0, compactions: [] },
    // Present from the start, so no assign adds a key (see WorkflowContext).
    ...UNSET,
  };
}

/**
 * The input a context was created from (`createInitialContext`'s inverse, up to the history,
 * which is the context's now): what a restored run reports as its input.
 *
 * @example
 * createInitialContext(workflowInputOf(ctx)).run; // deep-equals ctx.run
 */
export function workflowInputOf(ctx: WorkflowContext): WorkflowInput {
  const { id, ...run } = ctx.run;
  return { runId: id, ...run, messages: ctx.messages, requiredSteps: ctx.steps.required };
}

/** The optional fields, unset. JSON snapshots omit them; restore puts them back. */
const UNSET = { lastResponse: undefined, validation: undefined, batch: undefined, terminal: undefined, error: undefined } as const;

/** Distinct tool names of `completed`, in first-completion order. */
export function distinctTools(completed: readonly CompletedStep[]): string[] {
  return [...new Set(completed.map((s) => s.tool))];
}

/**
 * A persisted context made whole before a run resumes from it. The running totals are
 * recomputed from what they summarize (a snapshot is outside input), `callCounts` is rebuilt
 * from its entries, so a hand-edited trie cannot hide a key in the wrong slot, and `compactAt`
 * comes from the resuming runner's context manager (the one its compaction service uses).
 */
export function restoredContext(ctx: WorkflowContext, compactAt: number | null): WorkflowContext {
  return {
    ...UNSET,
    ...ctx,
    run: { ...ctx.run, compactAt },
    steps: { ...ctx.steps, completedTools: distinctTools(ctx.steps.completed) },
    callCounts: callCountsFrom(callCountEntries(ctx.callCounts)),
    historyTokens: estimateTokensChars4(ctx.messages),
  };
}
