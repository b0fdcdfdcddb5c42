/**
 * The agentic loop as a statechart: the one picture of forge-ts control flow.
 *
 *   compacting → inferring → validating → enforcingSteps → checkingPrereqs ─┬──────────────→ executingTools
 *        ↑______________________|________________|________________|         └→ awaitingHuman ─┘      |
 *        ↑_______________________________________________________________________________________|
 *   final: done | failed | cancelled
 *
 * Wiring only: every guard and action is a named pure function from src/loop, every effect
 * is a service (`infer`, `compact`, `executeTool`) supplied via `machine.provide` (the runner's
 * run services; the Guardrails facade supplies none and steps the machine with pure
 * transitions). Tool definitions (for argument validation) come in through the factory,
 * because they hold functions and the context must stay JSON. Longer than our ~300-line aim on
 * purpose: the statechart is one picture, read whole.
 */
import { and, assign, enqueueActions, fromPromise, setup } from "xstate";
import type { ErrorJSON } from "../src/core/errors.js";
import type { LLMResponse, Usage } from "../src/core/llm.js";
import type { Message } from "../src/core/messages.js";
import type { CompactEvent } from "../src/context/context-manager.js";
import { estimateTokensChars4 } from "../src/context/token-estimator.js";
import * as act from "../src/loop/actions.js";
import { assessResponse } from "../src/guardrails/assess-response.js";
import { toolDefinitions, type ValidatorTools } from "../src/guardrails/response-validator.js";
import { createInitialContext, type WorkflowContext, type WorkflowInput } from "../src/loop/context.js";
import * as fail from "../src/loop/failures.js";
import * as is from "../src/loop/guards.js";
import * as human from "../src/loop/human.js";
import type { ToolOutput } from "../src/loop/tool-output.js";
import type { WorkflowFact } from "../src/loop/facts.js";

export interface InferInput {
  messages: Message[];
  iteration: number;
  /** `estimateTokensChars4(messages)`: the context's running total. */
  tokens: number;
}
export interface InferOutput {
  response: LLMResponse;
  usage: Usage;
  now: number;
}
export interface CompactInput {
  messages: Message[];
  iteration: number;
  stepHint: string;
  /** `estimateTokensChars4(messages)`: the context's running total. */
  tokens: number;
}
export interface CompactOutput {
  messages: Message[];
  event: CompactEvent | null;
  now: number;
}
export type ExecuteToolInput = act.ExecuteToolInput;

/** A tool's output and the wall clock when it finished (the next budget check reads it). */
export interface ExecuteToolOutput extends ToolOutput {
  now: number;
}

export type WorkflowEvent =
  | { type: "workflow.cancel"; reason?: string }
  /** A person's decision on one pending request (checked against the pending list and the tool's schema). */
  | human.HumanDecisionEvent
  /** The runner's wait timer fired: requests past `maxWaitMs` are rejected, or the run fails. */
  | { type: "human.timeout"; now: number }
  /** The runner's wall-clock timer fired: fail now, even while a service is still in flight. */
  | { type: "workflow.timeout"; now: number };

/** The facts of a run as the machine emits them (src/loop/facts.ts). */
export type WorkflowEmitted = WorkflowFact;

export interface WorkflowOutput {
  result: unknown;
  terminal?: WorkflowContext["terminal"];
  error?: ErrorJSON;
}

export interface Toolbox {
  /** Definitions (schema-checked arguments, prerequisites, approvals) or bare names (the Guardrails facade given only names). */
  tools: ValidatorTools;
}

const notProvided = (name: string) => () =>
  Promise.reject(new Error(`workflow machine service "${name}" was not provided (use machine.provide)`));

export function createWorkflowMachine(toolbox: Toolbox) {
  const definitions = toolDefinitions(toolbox.tools);
  return setup({
    types: {
      context: {} as WorkflowContext,
      input: {} as WorkflowInput,
      events: {} as WorkflowEvent,
      emitted: {} as WorkflowEmitted,
      output: {} as WorkflowOutput,
    },
    actors: {
      infer: fromPromise<InferOutput, InferInput>(notProvided("infer")),
      compact: fromPromise<CompactOutput, CompactInput>(notProvided("compact")),
      executeTool: fromPromise<ExecuteToolOutput, ExecuteToolInput>(notProvided("executeTool")),
    },
    guards: {
      isIterationBudgetExhausted: ({ context }) => is.isIterationBudgetExhausted(context),
      isTokenBudgetExhausted: ({ context }) => is.isTokenBudgetExhausted(context),
      isWallClockExhausted: ({ context }) => is.isWallClockExhausted(context),
      isWallClockExhaustedAt: ({ context }, params: { now: number }) => is.isWallClockExhaustedAt(context, params.now),
      fitsContext: ({ context }) => is.fitsContext(context),
      needsRetry: ({ context }) => is.needsRetry(context),
      isRejectedOnRetries: ({ context }) => is.isRejectedOnRetries(context),
      isRejectedOnToolErrors: ({ context }) => is.isRejectedOnToolErrors(context),
      isRetryBudgetExhausted: ({ context }) => is.isRetryBudgetExhausted(context),
      isNextToolErrorFatal: ({ context }) => is.isNextToolErrorFatal(context),
      hasRepeatViolation: ({ context }) => is.hasRepeatViolation(context),
      hasPrematureTerminal: ({ context }) => is.hasPrematureTerminal(context),
      isPrematureBudgetExhausted: ({ context }) => is.isPrematureBudgetExhausted(context),
      hasPrereqViolation: ({ context }) => is.hasPrereqViolation(context),
      isPrereqBudgetExhausted: ({ context }) => is.isPrereqBudgetExhausted(context),
      isBatchComplete: ({ context }) => is.isBatchComplete(context),
      isLastCallOfBatch: ({ context }) => is.isLastCallOfBatch(context),
      isToolErrorBudgetExhausted: ({ context }) => is.isToolErrorBudgetExhausted(context),
      hasTerminalResult: ({ context }) => is.hasTerminalResult(context),
      isUnencodableTerminalResult: (_, params: { error: unknown }) => is.isUnencodableTerminalResult(params.error),
      needsHuman: ({ context }) => human.needsHuman(is.validatedCalls(context), definitions, context),
      isDecisionValid: ({ context }, params: { event: human.HumanDecisionEvent }) => human.decisionProblem(context, params.event, definitions) === undefined,
      isBatchDecided: ({ context }) => human.isBatchDecided(context),
      isNextCallSettledByPerson: ({ context }) => human.settlingDecision(context) !== undefined,
      isWaitExpiredAt: ({ context }, params: { now: number }) => human.isWaitExpiredAt(context, params.now),
      isWaitFailedAt: ({ context }, params: { now: number }) => context.run.budget.onWaitTimeout === "fail" && human.isWaitExpiredAt(context, params.now),
    },
    actions: {
      applyCompaction: enqueueActions(({ context, enqueue }, params: CompactOutput) => {
        enqueue.assign(({ context }) => ({
          messages: params.messages,
          // Compaction rewrote the history (rare): its running total is recomputed.
          historyTokens: params.messages === context.messages ? context.historyTokens : estimateTokensChars4(params.messages),
          now: params.now,
          stats: params.event
            ? {
                ...context.stats,
                compactions: [
                  ...context.stats.compactions,
                  {
                    phase: params.event.phaseReached,
                    tokensBefore: params.event.tokensBefore,
                    tokensAfter: params.event.tokensAfter,
                    iteration: context.iteration,
                  },
                ],
              }
            : context.stats,
        }));
        if (params.event) enqueue.emit({ type: "context.compacted", iteration: context.iteration, event: params.event });
      }),
      applyResponse: enqueueActions(({ context, enqueue }, params: InferOutput) => {
        const totals = {
          inputTokens: context.usage.inputTokens + params.usage.inputTokens,
          outputTokens: context.usage.outputTokens + params.usage.outputTokens,
        };
        enqueue.assign({
          lastResponse: params.response,
          iteration: context.iteration + 1,
          now: params.now,
          usage: totals,
          validation: assessResponse(
            params.response,
            { rescueEnabled: context.run.switches.rescueEnabled, toolNames: context.run.toolNames, maxToolCalls: context.run.budget.maxToolCallsPerResponse },
            toolbox.tools,
          ),
        });
        enqueue.emit({ type: "llm.response", iteration: context.iteration + 1, response: params.response, usage: params.usage, totals, now: params.now });
      }),
      recordRetry: enqueueActions(({ context, enqueue }) => apply(enqueue, act.recordRetry(context))),
      recordRejectedBatch: enqueueActions(({ context, enqueue }) => apply(enqueue, act.recordRejectedBatch(context))),
      acceptCalls: enqueueActions(({ context, enqueue }) => apply(enqueue, act.acceptCalls(context))),
      recordPrematureTerminal: enqueueActions(({ context, enqueue }) => apply(enqueue, act.recordPrematureTerminal(context))),
      recordPrereqViolation: enqueueActions(({ context, enqueue }) => apply(enqueue, act.recordPrereqViolation(context))),
      recordLoopBreak: enqueueActions(({ context, enqueue }) => apply(enqueue, act.recordLoopBreak(context))),
      startBatch: enqueueActions(({ context, enqueue }) =>
        apply(enqueue, act.startBatch(context, (ctx, calls) => human.humanRequestsFor(calls, definitions, ctx))),
      ),
      recordDecision: assign(({ context }, params: { event: human.HumanDecisionEvent }) => human.applyDecision(context, params.event, definitions)),
      expireWaits: assign(({ context }, params: { now: number }) => ({ ...human.expireWaits(context, params.now), now: params.now })),
      commitHumanOutcome: enqueueActions(({ context, enqueue }) => commit(enqueue, context, act.humanOutcome(context))),
      announceToolStart: enqueueActions(({ context, enqueue }) => {
        const call = act.nextCall(context);
        enqueue.emit({ type: "tool.start", tool: call.tool, args: call.args, callId: call.callId, index: call.index });
      }),
      commitToolResult: enqueueActions(({ context, enqueue }, params: { output: ExecuteToolOutput }) =>
        commit(enqueue, context, act.outcomeFromOutput(params.output), params.output.now),
      ),
      commitToolError: enqueueActions(({ context, enqueue }, params: { error: unknown }) =>
        commit(enqueue, context, act.outcomeFromError(act.nextCall(context).tool, params.error)),
      ),
      // Appends nothing: a plain assign (no enqueue machinery).
      finishBatch: assign(({ context }) => act.finishBatch(context).patch),
      failRetries: assign({ error: ({ context }) => fail.retriesExhausted(context) }),
      failPremature: assign({ error: ({ context }) => fail.prematureExhausted(context) }),
      failPrereq: assign({ error: ({ context }) => fail.prereqExhausted(context) }),
      failToolErrors: assign({ error: ({ context }) => fail.toolErrorsExhausted(context) }),
      failIterations: assign({ error: ({ context }) => fail.iterationsExhausted(context) }),
      failTokenBudget: assign({ error: ({ context }) => fail.budgetExhausted(context, "token_budget") }),
      failWallClock: assign({ error: ({ context }) => fail.budgetExhausted(context, "wall_clock") }),
      failWallClockAt: assign(({ context }, params: { now: number }) => ({ now: params.now, error: fail.wallClockExhaustedAt(context, params.now) })),
      failTerminalResult: assign({ error: (_, params: { error: unknown }) => fail.terminalResultFailed(params.error) }),
      failWaitTimeout: assign(({ context }, params: { now: number }) => ({ now: params.now, error: fail.waitTimedOut(context, params.now) })),
      failService: enqueueActions(({ enqueue }, params: { origin: "infer" | "compact"; error: unknown }) => {
        enqueue.assign({ error: fail.serviceFailed(params.origin, params.error) });
        enqueue.emit({ type: "service.error", origin: params.origin, error: params.error });
      }),
      recordCancellation: assign({ error: ({ context, event }) => fail.cancelled(context, event.type === "workflow.cancel" ? event.reason : undefined) }),
    },
  }).createMachine({
    id: "workflow",
    context: ({ input }) => createInitialContext(input),
    initial: "compacting",
    on: {
      "workflow.cancel": { target: ".cancelled", actions: "recordCancellation" },
      "workflow.timeout": {
        guard: { type: "isWallClockExhaustedAt", params: ({ event }) => ({ now: event.now }) },
        target: ".failed",
        actions: { type: "failWallClockAt", params: ({ event }) => ({ now: event.now }) },
      },
    },
    output: ({ context }) => ({ result: context.terminal?.result, terminal: context.terminal, error: context.error }),
    states: {
      compacting: {
        initial: "checking",
        states: {
          // Budgets first (nothing is compacted for a run that ends here); then the compaction
          // service runs only when the history's running total is over the trigger, or always
          // when a custom token estimator has to decide (`run.compactAt` null).
          checking: {
            always: [
              { guard: "isIterationBudgetExhausted", target: "#workflow.failed", actions: "failIterations" },
              { guard: "isTokenBudgetExhausted", target: "#workflow.failed", actions: "failTokenBudget" },
              { guard: "isWallClockExhausted", target: "#workflow.failed", actions: "failWallClock" },
              { guard: "fitsContext", target: "#workflow.inferring" },
              { target: "running" },
            ],
          },
          running: {
            invoke: {
              id: "compact",
              src: "compact",
              input: ({ context }) => ({
                messages: context.messages,
                iteration: context.iteration,
                stepHint: act.compactionHint(context),
                tokens: context.historyTokens,
              }),
              onDone: { target: "#workflow.inferring", actions: { type: "applyCompaction", params: ({ event }) => event.output } },
              onError: {
                target: "#workflow.failed",
                actions: { type: "failService", params: ({ event }) => ({ origin: "compact", error: event.error }) },
              },
            },
          },
        },
      },
      inferring: {
        invoke: {
          id: "infer",
          src: "infer",
          input: ({ context }) => ({ messages: context.messages, iteration: context.iteration, tokens: context.historyTokens }),
          onDone: { target: "validating", actions: { type: "applyResponse", params: ({ event }) => event.output } },
          onError: { target: "failed", actions: { type: "failService", params: ({ event }) => ({ origin: "infer", error: event.error }) } },
        },
      },
      validating: {
        always: [
          { guard: and(["needsRetry", "isRetryBudgetExhausted"]), target: "failed", actions: "failRetries" },
          { guard: "needsRetry", target: "compacting", actions: "recordRetry" },
          { guard: and(["isRejectedOnToolErrors", "isNextToolErrorFatal"]), target: "failed", actions: "failToolErrors" },
          { guard: "isRejectedOnToolErrors", target: "compacting", actions: "recordRejectedBatch" },
          { guard: and(["isRejectedOnRetries", "isRetryBudgetExhausted"]), target: "failed", actions: "failRetries" },
          { guard: "isRejectedOnRetries", target: "compacting", actions: "recordRejectedBatch" },
          { target: "enforcingSteps", actions: "acceptCalls" },
        ],
      },
      // Each `and` asks the cheap budget question first: a step check then runs once per step.
      enforcingSteps: {
        always: [
          { guard: and(["isPrematureBudgetExhausted", "hasPrematureTerminal"]), target: "failed", actions: "failPremature" },
          { guard: "hasPrematureTerminal", target: "compacting", actions: "recordPrematureTerminal" },
          { target: "checkingPrereqs" },
        ],
      },
      checkingPrereqs: {
        always: [
          { guard: and(["isPrereqBudgetExhausted", "hasPrereqViolation"]), target: "failed", actions: "failPrereq" },
          { guard: "hasPrereqViolation", target: "compacting", actions: "recordPrereqViolation" },
          // Loop-break is checked here too: it is the last gate before anything executes.
          { guard: and(["isNextToolErrorFatal", "hasRepeatViolation"]), target: "failed", actions: "failToolErrors" },
          { guard: "hasRepeatViolation", target: "compacting", actions: "recordLoopBreak" },
          { guard: "needsHuman", target: "awaitingHuman", actions: "startBatch" },
          // No person decides any call: the batch's first call runs at once (nothing to select).
          { target: "executingTools.running", actions: "startBatch" },
        ],
      },
      executingTools: {
        initial: "selecting",
        states: {
          selecting: {
            always: [
              { guard: "isBatchComplete", target: "settling" },
              // Rejected and answered calls never run: the person's decision is their outcome.
              { guard: "isNextCallSettledByPerson", target: "selecting", reenter: true, actions: "commitHumanOutcome" },
              { target: "running" },
            ],
          },
          running: {
            entry: "announceToolStart",
            invoke: {
              id: "executeTool",
              src: "executeTool",
              input: ({ context }) => act.nextToolInput(context),
              // The batch's last call settles it at once; another call goes back to selecting.
              onDone: [
                { guard: "isLastCallOfBatch", target: "settling", actions: { type: "commitToolResult", params: ({ event }) => ({ output: event.output }) } },
                { target: "selecting", actions: { type: "commitToolResult", params: ({ event }) => ({ output: event.output }) } },
              ],
              onError: [
                {
                  guard: { type: "isUnencodableTerminalResult", params: ({ event }) => ({ error: event.error }) },
                  target: "#workflow.failed",
                  actions: { type: "failTerminalResult", params: ({ event }) => ({ error: event.error }) },
                },
                { guard: "isLastCallOfBatch", target: "settling", actions: { type: "commitToolError", params: ({ event }) => ({ error: event.error }) } },
                { target: "selecting", actions: { type: "commitToolError", params: ({ event }) => ({ error: event.error }) } },
              ],
            },
          },
          settling: {
            always: [
              { guard: "isToolErrorBudgetExhausted", target: "#workflow.failed", actions: "failToolErrors" },
              { guard: "hasTerminalResult", target: "#workflow.done", actions: "finishBatch" },
              { target: "#workflow.compacting", actions: "finishBatch" },
            ],
          },
        },
      },
      // A person decides each pending request (approve, approve with edited args, reject,
      // answer). No service runs here: a snapshot taken now can wait for days.
      awaitingHuman: {
        on: {
          "human.decide": {
            guard: { type: "isDecisionValid", params: ({ event }) => ({ event }) },
            target: "awaitingHuman",
            actions: { type: "recordDecision", params: ({ event }) => ({ event }) },
          },
          "human.timeout": [
            {
              guard: { type: "isWaitFailedAt", params: ({ event }) => ({ now: event.now }) },
              target: "failed",
              actions: { type: "failWaitTimeout", params: ({ event }) => ({ now: event.now }) },
            },
            {
              guard: { type: "isWaitExpiredAt", params: ({ event }) => ({ now: event.now }) },
              target: "awaitingHuman",
              actions: { type: "expireWaits", params: ({ event }) => ({ now: event.now }) },
            },
          ],
        },
        always: { guard: "isBatchDecided", target: "executingTools" },
      },
      done: { type: "final" },
      failed: { type: "final" },
      cancelled: { type: "final" },
    },
  });
}

type Enqueue = {
  assign: (patch: Partial<WorkflowContext>) => void;
  emit: (event: WorkflowEmitted) => void;
};

function apply(enqueue: Enqueue, result: act.ActionResult): void {
  // An empty patch assigns nothing: XState copies the whole snapshot on every assign.
  if (hasKeys(result.patch)) enqueue.assign(result.patch);
  for (const message of result.appended) enqueue.emit({ type: "history.message", message });
  for (const fact of result.facts ?? []) enqueue.emit(fact);
}

function hasKeys(o: object): boolean {
  for (const key in o) if (Object.hasOwn(o, key)) return true;
  return false;
}

function commit(enqueue: Enqueue, context: WorkflowContext, outcome: act.ToolOutcome, now?: number): void {
  const call = act.nextCall(context);
  const committed = act.commitToolOutcome(context, outcome);
  // The service's clock goes in with the outcome: one assign per committed call.
  if (now !== undefined) committed.patch.now = now;
  apply(enqueue, committed);
  enqueue.emit({
    type: "tool.outcome",
    tool: call.tool,
    callId: call.callId,
    status: outcome.status,
    content: outcome.content,
    ...(outcome.result !== undefined ? { result: outcome.result } : {}),
    ...(outcome.fullContent !== undefined ? { fullContent: outcome.fullContent } : {}),
    ...(now !== undefined ? { now } : {}),
  });
}

export type WorkflowMachine = ReturnType<typeof createWorkflowMachine>;

/** The statechart with no tools, for visualisation and path analysis. */
export const workflowMachine = createWorkflowMachine({ tools: {} });
