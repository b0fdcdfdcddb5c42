/**
 * One proxy request as a statechart: the front half of the agentic loop, with no tool
 * execution, no step enforcement and no state beyond the request.
 *
 *   inferring → validating → responding
 *        ↑          │ ├────→ exhausted   (a budget ran out: the last answer, marked)
 *        └ retrying ┘ └─→ (failed: the backend failed; cancelled: the caller left)
 *
 * Wiring only: guards and actions are pure functions from src/proxy/request-context.ts; the
 * `infer` service is supplied once per proxy by src/proxy/request-run.ts via `provide`.
 */
import { assign, fromPromise, setup } from "xstate";
import type { LLMResponse } from "../src/core/llm.js";
import type { ToolSpec } from "../src/core/tool.js";
import {
  assess,
  createProxyContext,
  isBudgetSpent,
  recordAnswer,
  recordExhausted,
  recordResponse,
  recordRetry,
  type ProxyContext,
  type ProxyInput,
} from "../src/proxy/request-context.js";
import { errorRecord } from "../src/proxy/http-error.js";

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
  },
  actors: {
    // Supplied per request (client, signal, live deltas); this default only names the contract.
    infer: fromPromise<LLMResponse, ProxyInferInput>(async () => {
      throw new Error("proxy-request machine: provide the infer service");
    }),
  },
  guards: {
    isAnswer: ({ context }) => context.verdict?.kind === "answer",
    isBudgetSpent: ({ context }) => isBudgetSpent(context),
  },
  actions: {
    recordResponse: assign(({ context }, params: { response: LLMResponse }) => recordResponse(context, params.response)),
    assess: assign(({ context }) => ({ verdict: assess(context) })),
    recordAnswer: assign(({ context }) => recordAnswer(context)),
    recordRetry: assign(({ context }) => recordRetry(context)),
    recordExhausted: assign(({ context }) => recordExhausted(context)),
    recordFailure: assign((_, params: { error: unknown }) => ({ error: errorRecord(params.error) })),
    recordCancel: assign((_, params: { reason: string }) => ({ cancelReason: params.reason })),
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
      entry: "assess",
      always: [
        { guard: "isAnswer", target: "responding", actions: "recordAnswer" },
        { guard: "isBudgetSpent", target: "exhausted", actions: "recordExhausted" },
        { target: "retrying", actions: "recordRetry" },
      ],
    },
    retrying: {
      always: "inferring",
    },
    responding: { type: "final" },
    exhausted: { type: "final" },
    failed: { type: "final" },
    cancelled: { type: "final" },
  },
});
