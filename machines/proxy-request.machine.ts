/**
 * One proxy request as a statechart: the front half of the agentic loop, with no tool
 * execution and no state beyond the request.
 *
 *   inferring → validating ─┬──────────────────────────────→ responding
 *        ↑           │      ├→ enforcingPolicy (calls) ─────→ responding
 *        │           │      └→ checkingFormat (text) ───────→ responding
 *        │           └─── any judge says retry ─→ rejecting ─→ exhausted (budget spent: the last answer, marked)
 *        └──────────────────────────────────────────┘       └→ failed    (a policy budget spent, or the backend failed)
 *                                                               cancelled (the caller left)
 *
 * Wiring only: guards and actions are pure functions from src/proxy-request/ (the context,
 * verdict.ts judging, request-actions.ts); the `infer` service is supplied once per proxy by
 * src/proxy/request-run.ts via `provide`.
 * Guardrail interventions (a rescue, a nudge, a spent budget) are emitted as `guardrail.*`
 * events (src/proxy-request/guardrail-events.ts) for the request's spans and metrics.
 */
import { and, assign, emit, enqueueActions, fromPromise, setup } from "xstate";
import type { LLMResponse } from "../src/core/llm.js";
import type { ToolSpec } from "../src/core/tool.js";
import { createProxyContext, type ProxyContext, type ProxyInput } from "../src/proxy-request/request-context.js";
import { assess, checkFormat, enforcePolicy } from "../src/proxy-request/verdict.js";
import {
  isBudgetSpent,
  isPolicyBlock,
  recordAnswer,
  recordExhausted,
  recordPolicyFailure,
  recordResponse,
  recordRetry,
} from "../src/proxy-request/request-actions.js";
import { errorRecord } from "../src/proxy-request/http-error.js";
import { exhaustedEvent, nudgeEvent, rescueEvent, type ProxyGuardrailEvent } from "../src/proxy-request/guardrail-events.js";

export interface ProxyInferInput {
  requestId: string;
  messages: ProxyContext["messages"];
  tools: ToolSpec[];
  attempt: number;
}

export type ProxyEvent = { type: "request.cancel"; reason: string };

export const proxyRequestMachine = setup({
  types: {
    context: {} as ProxyContext & { cancelReason?: string },
    input: {} as ProxyInput,
    events: {} as ProxyEvent,
    emitted: {} as ProxyGuardrailEvent,
  },
  actors: {
    // Supplied per request (client, signal, live deltas); this default only names the contract.
    infer: fromPromise<LLMResponse, ProxyInferInput>(async () => {
      throw new Error("proxy-request machine: provide the infer service");
    }),
  },
  guards: {
    isRetry: ({ context }) => context.verdict?.kind === "retry",
    hasPolicyOnCalls: ({ context }) => context.options.policy !== undefined && context.verdict?.kind === "answer" && context.verdict.answer.type === "tool_calls",
    hasFormatOnText: ({ context }) => context.request.format !== undefined && context.verdict?.kind === "answer" && context.verdict.answer.type === "text",
    isBudgetSpent: ({ context }) => isBudgetSpent(context),
    isPolicyBlock: ({ context }) => isPolicyBlock(context),
  },
  actions: {
    recordResponse: assign(({ context }, params: { response: LLMResponse }) => recordResponse(context, params.response)),
    assess: assign(({ context }) => ({ verdict: assess(context) })),
    enforcePolicy: assign(({ context }) => ({ verdict: enforcePolicy(context) })),
    checkFormat: assign(({ context }) => ({ verdict: checkFormat(context) })),
    recordAnswer: assign(({ context }) => recordAnswer(context)),
    recordRetry: assign(({ context }) => recordRetry(context)),
    recordExhausted: assign(({ context }) => recordExhausted(context)),
    recordPolicyFailure: assign(({ context }) => recordPolicyFailure(context)),
    recordFailure: assign((_, params: { error: unknown }) => ({ error: errorRecord(params.error) })),
    recordCancel: assign((_, params: { reason: string }) => ({ cancelReason: params.reason })),
    // Guardrail interventions, for the proxy's spans and metrics (guardrail-events.ts).
    reportRescue: enqueueActions(({ context, enqueue }) => {
      const event = rescueEvent(context);
      if (event) enqueue.emit(event);
    }),
    reportNudge: emit(({ context }) => nudgeEvent(context)),
    reportExhausted: emit(({ context }) => exhaustedEvent(context)),
  },
}).createMachine({
  id: "proxyRequest",
  context: ({ input }) => createProxyContext(input),
  initial: "inferring",
  on: {
    "request.cancel": { target: ".cancelled", actions: { type: "recordCancel", params: ({ event }) => ({ reason: event.reason }) } },
  },
  states: {
    inferring: {
      invoke: {
        id: "infer",
        src: "infer",
        input: ({ context }): ProxyInferInput => ({ requestId: context.requestId, messages: context.messages, tools: context.tools, attempt: context.attempts }),
        onDone: { target: "validating", actions: { type: "recordResponse", params: ({ event }) => ({ response: event.output }) } },
        onError: { target: "failed", actions: { type: "recordFailure", params: ({ event }) => ({ error: event.error }) } },
      },
    },
    validating: {
      entry: ["assess", "reportRescue"],
      always: [
        { guard: "isRetry", target: "rejecting" },
        { guard: "hasPolicyOnCalls", target: "enforcingPolicy" },
        { guard: "hasFormatOnText", target: "checkingFormat" },
        { target: "responding", actions: "recordAnswer" },
      ],
    },
    enforcingPolicy: {
      entry: "enforcePolicy",
      always: [{ guard: "isRetry", target: "rejecting" }, { target: "responding", actions: "recordAnswer" }],
    },
    checkingFormat: {
      entry: "checkFormat",
      always: [{ guard: "isRetry", target: "rejecting" }, { target: "responding", actions: "recordAnswer" }],
    },
    rejecting: {
      always: [
        { guard: and(["isBudgetSpent", "isPolicyBlock"]), target: "failed", actions: ["reportExhausted", "recordPolicyFailure"] },
        { guard: "isBudgetSpent", target: "exhausted", actions: ["reportExhausted", "recordExhausted"] },
        { target: "inferring", actions: ["reportNudge", "recordRetry"] },
      ],
    },
    responding: { type: "final" },
    exhausted: { type: "final" },
    failed: { type: "final" },
    cancelled: { type: "final" },
  },
});
