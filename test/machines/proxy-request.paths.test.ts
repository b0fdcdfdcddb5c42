/**
 * Path coverage of the proxy-request statechart: @xstate/graph generates shortest paths
 * (feeding the infer service's done/error events), and replaying them in a live actor proves
 * every state and transition is reached.
 */
import { getShortestPaths } from "@xstate/graph";
import { describe, expect, it } from "vitest";
import { createActor, fromPromise, type AnyStateNode, type AnyTransitionDefinition, type InspectionEvent } from "xstate";
import { proxyRequestMachine, type ProxyInferInput } from "../../machines/proxy-request.machine.js";
import { BackendError, type LLMResponse } from "../../src/core/index.js";
import { createMessage, MessageType } from "../../src/core/messages.js";
import type { ProxyContext, ProxyInput } from "../../src/proxy-request/request-context.js";

const tool = (name: string) => ({ name, description: "", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } });

// Two inputs: the validator alone (a call is due), and every judge on (policy and output format).
const plain: ProxyInput = {
  requestId: "graph",
  request: {
    model: "m",
    messages: [createMessage("user", "weather?", MessageType.USER_INPUT)],
    tools: [tool("get_weather")],
    toolChoice: "required",
    stream: false,
    includeUsage: false,
    body: {},
  },
  options: { maxRetries: 1, maxToolErrors: 1, rescueEnabled: true, injectRespondTool: false },
};

const judged: ProxyInput = {
  requestId: "graph",
  request: {
    model: "m",
    messages: [createMessage("user", "weather?", MessageType.USER_INPUT)],
    tools: [tool("get_weather"), tool("answer")],
    toolChoice: "auto",
    stream: false,
    includeUsage: false,
    body: {},
    format: { kind: "json_object" },
  },
  options: {
    maxRetries: 1,
    maxToolErrors: 1,
    rescueEnabled: true,
    injectRespondTool: false,
    policy: { requiredSteps: ["get_weather"], terminalTools: ["answer"], prerequisites: {}, maxToolRepeat: 3, maxPrematureAttempts: 1, maxPrereqViolations: 1 },
  },
};

const responses: LLMResponse[] = [
  { type: "text", content: "It is sunny." },
  { type: "text", content: 'Sure: {"sky": "clear"}' },
  { type: "text", content: '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>' },
  { type: "tool_calls", toolCalls: [{ tool: "get_forecast", args: {} }] },
  { type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: 5 } }] },
  { type: "tool_calls", toolCalls: [{ tool: "answer", args: { city: "Rome" } }] },
];

function eventsFor(snapshot: { children: Record<string, unknown> }) {
  const out: { type: string; [k: string]: unknown }[] = [{ type: "request.cancel", reason: "graph" }];
  if (snapshot.children.infer) {
    for (const output of responses) out.push({ type: "xstate.done.actor.infer", output });
    out.push({ type: "xstate.error.actor.infer", error: new BackendError(0, "", "refused") });
  }
  return out;
}

const serialize = (s: { value: unknown; context: ProxyContext }) =>
  JSON.stringify([s.value, s.context.counters, s.context.verdict?.kind, s.context.answer?.type, s.context.error?.name, s.context.exhausted?.reason]);

function allStateNodes(node: AnyStateNode): AnyStateNode[] {
  return [node, ...Object.values(node.states).flatMap((child) => allStateNodes(child as AnyStateNode))];
}

describe("proxy-request statechart path coverage", () => {
  it("generated paths reach every state and every transition", () => {
    const replay = proxyRequestMachine.provide({ actors: { infer: fromPromise<LLMResponse, ProxyInferInput>(() => new Promise(() => undefined)) } });
    const taken = new Set<AnyTransitionDefinition>();
    const reached = new Set<string>();
    for (const input of [plain, judged]) {
      const paths = getShortestPaths(proxyRequestMachine, { input, events: eventsFor as never, serializeState: serialize as never, limit: 50_000 });
      expect(paths.length).toBeGreaterThan(5);
      for (const path of paths) {
        const actor = createActor(replay, {
          input,
          inspect: (ev: InspectionEvent) => {
            if (ev.type === "@xstate.microstep") for (const t of ev._transitions) taken.add(t);
          },
        });
        actor.subscribe({ next: (s) => s._nodes.forEach((n) => reached.add(n.id)), error: () => undefined });
        actor.start();
        for (const step of path.steps.slice(1)) {
          if (actor.getSnapshot().status !== "active") break;
          actor.send(step.event as never);
        }
        actor.stop();
      }
    }
    for (const t of taken) {
      reached.add(t.source.id);
      for (const target of t.target ?? []) reached.add(target.id);
    }
    expect(allStateNodes(replay.root).map((n) => n.id).filter((id) => !reached.has(id))).toEqual([]);
    const transitions = allStateNodes(replay.root).flatMap((n) => [...[...n.transitions.values()].flat(), ...(n.always ?? [])]);
    expect(transitions.filter((t) => !taken.has(t)).map((t) => `${t.source.id} --${t.eventType}-->`)).toEqual([]);
  });
});
