/**
 * Path coverage: @xstate/graph explores the workflow statechart breadth-first (feeding the
 * done/error events of whichever service is running) while an inspected actor system records
 * every microstep it takes, which proves that each state and each transition of the machine is
 * reached by some event sequence. The wait timer, whose event the exploration does not feed, is
 * replayed in a live actor on the shortest path to awaitingHuman.
 */
import { getShortestPaths } from "@xstate/graph";
import { describe, expect, it } from "vitest";
import { createActor, fromPromise, type AnyStateNode, type AnyTransitionDefinition, type InspectionEvent } from "xstate";
import {
  createWorkflowMachine,
  type CompactInput,
  type CompactOutput,
  type ExecuteToolInput,
  type ExecuteToolOutput,
  type InferInput,
  type InferOutput,
} from "../../machines/workflow.machine.js";
import { ContextBudgetExceeded, ToolResolutionError, ToolResultError, type LLMResponse } from "../../src/core/index.js";
import { createMessage, MessageType } from "../../src/core/messages.js";
import type { WorkflowContext, WorkflowInput } from "../../src/loop/context.js";
import { callCountEntries } from "../../src/loop/call-counts.js";
import { estimateTokensChars4 } from "../../src/context/token-estimator.js";
import { loopWorkflow } from "../support/loop-fixtures.js";

const { workflow } = loopWorkflow();
// `extra` needs a person's approval, so batches holding it pass through awaitingHuman.
const machine = createWorkflowMachine({ tools: { ...workflow.tools, extra: { ...workflow.tools.extra!, needsApproval: true } } });
/** Services that never settle: the replay feeds their done/error events itself. */
const pending = <TOut, TIn>() => fromPromise<TOut, TIn>(() => new Promise<TOut>(() => undefined));
const replayMachine = machine.provide({
  actors: { infer: pending<InferOutput, InferInput>(), compact: pending<CompactOutput, CompactInput>(), executeTool: pending<ExecuteToolOutput, ExecuteToolInput>() },
});

const messages = [createMessage("system", "sys", MessageType.SYSTEM_PROMPT), createMessage("user", "go", MessageType.USER_INPUT)];
const runInput: WorkflowInput = {
  runId: "graph",
  workflow: workflow.name,
  messages,
  toolNames: workflow.toolNames,
  terminalTools: [...workflow.terminalTools],
  requiredSteps: [...workflow.requiredSteps],
  prerequisites: { fetch_a: [], fetch_b: ["fetch_a"], extra: [], finish: [] },
  budget: { maxIterations: 5, maxRetries: 1, maxToolErrors: 1, maxPremature: 1, maxPrereq: 1, maxToolRepeat: 1, maxTotalTokens: 10_000, maxWallClockMs: 1_000, maxWaitMs: 100, onWaitTimeout: "reject" },
  switches: { rescueEnabled: true, stepEnforcement: true },
  startedAt: 0,
  // The first history fits (compaction skipped); once it grows, the compaction service runs.
  compactAt: estimateTokensChars4(messages),
};

const usage = { inputTokens: 1, outputTokens: 1 };
const responses: LLMResponse[] = [
  { type: "text", content: "thinking out loud" },
  { type: "text", content: '```json\n{"tool": "fetch_a", "args": {"n": 1}}\n```' },
  { type: "tool_calls", toolCalls: [{ tool: "fetch_zz", args: {} }] },
  { type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: { n: "x" } }] },
  { type: "tool_calls", toolCalls: [{ tool: "finish", args: { summary: "s" } }] },
  { type: "tool_calls", toolCalls: [{ tool: "fetch_b", args: {} }] },
  { type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: {} }] },
  { type: "tool_calls", toolCalls: [{ tool: "extra", args: {} }] },
  // two calls: the first goes back to selecting, the batch's last one settles it
  { type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: { n: 3 } }, { tool: "fetch_a", args: { n: 4 } }] },
];

type GraphEvent = { type: string; [k: string]: unknown };

function eventsFor(snapshot: { context: WorkflowContext; children: Record<string, unknown> }): GraphEvent[] {
  const ctx = snapshot.context;
  const out: GraphEvent[] = [
    { type: "workflow.cancel", reason: "graph" },
    // the runner's wall-clock timer, while a service is in flight (budget 1,000 ms from 0)
    // (a different `now` than the compaction's keeps the two wall-clock failures apart in the key)
    { type: "workflow.timeout", now: 7_000 },
  ];
  if (snapshot.children.compact) {
    out.push({ type: "xstate.done.actor.compact", output: { messages: ctx.messages, event: null, now: 0 } });
    out.push({ type: "xstate.error.actor.compact", error: new ContextBudgetExceeded(900, 100, 3) });
  }
  if (snapshot.children.infer) {
    for (const response of responses) out.push({ type: "xstate.done.actor.infer", output: { response, usage, now: 0 } });
    out.push({ type: "xstate.done.actor.infer", output: { response: responses[6], usage: { inputTokens: 20_000, outputTokens: 0 }, now: 0 } });
    // once steps are done, the right calls become reachable
    out.push({ type: "xstate.done.actor.infer", output: { response: { type: "tool_calls", toolCalls: [{ tool: "fetch_b", args: { n: 2 } }] }, usage, now: 0 } });
    out.push({ type: "xstate.done.actor.infer", output: { response: { type: "tool_calls", toolCalls: [{ tool: "finish", args: { summary: "ok" } }] }, usage, now: 0 } });
    out.push({ type: "xstate.error.actor.infer", error: new Error("backend down") });
  }
  for (const request of ctx.batch?.human ?? []) {
    if (request.decision) continue;
    out.push({ type: "human.decide", callId: request.callId, decision: { type: "approve" }, at: 0 });
    out.push({ type: "human.decide", callId: request.callId, decision: { type: "reject", reason: "no" }, at: 0 });
    out.push({ type: "human.decide", callId: "unknown", decision: { type: "approve" }, at: 0 });
  }
  if (snapshot.children.executeTool) {
    out.push({ type: "xstate.done.actor.executeTool", output: { content: '{"ok":true}', result: { ok: true }, now: 0 } });
    // a slow tool: the next budget check finds the wall clock spent
    out.push({ type: "xstate.done.actor.executeTool", output: { content: '{"ok":true}', result: { ok: true }, now: 5_000 } });
    out.push({ type: "xstate.error.actor.executeTool", error: new ToolResultError("finish", "BigInt", true) });
    out.push({ type: "xstate.error.actor.executeTool", error: new TypeError("tool broke") });
    out.push({ type: "xstate.error.actor.executeTool", error: new ToolResolutionError("no such record") });
  }
  return out;
}

/**
 * Shortest paths keep one path per serialized state, so the key holds what tells two
 * transitions into the same state apart (error code, origin and message, the last validation, the last message's type).
 */
function serialize(snapshot: { value: unknown; context: WorkflowContext }): string {
  const c = snapshot.context;
  const last = c.messages.at(-1);
  return JSON.stringify([
    snapshot.value,
    c.counters,
    c.iteration,
    [...new Set(c.steps.completed.map((s) => s.tool))].sort(),
    callCountEntries(c.callCounts).length,
    c.usage.inputTokens > 10_000,
    c.terminal !== undefined,
    c.error?.code,
    c.error?.origin,
    c.error?.message,
    c.validation?.kind,
    `${last?.role}:${last?.meta.type}`,
    c.batch?.human?.map((r) => r.decision?.type ?? "pending"),
  ]);
}

function allStateNodes(node: AnyStateNode): AnyStateNode[] {
  return [node, ...Object.values(node.states).flatMap((child) => allStateNodes(child as AnyStateNode))];
}

function allTransitions(node: AnyStateNode): AnyTransitionDefinition[] {
  return allStateNodes(node).flatMap((n) => [...[...n.transitions.values()].flat(), ...(n.always ?? [])]);
}

/** Records the transitions and state nodes of every microstep taken through `logic`. */
function observed(logic: typeof machine, takenTransitions: Set<AnyTransitionDefinition>, reachedStates: Set<string>): typeof machine {
  const record = (ev: InspectionEvent) => {
    if (ev.type !== "@xstate.microstep") return;
    for (const t of ev._transitions) takenTransitions.add(t);
    for (const n of (ev.snapshot as unknown as { _nodes: AnyStateNode[] })._nodes) reachedStates.add(n.id);
  };
  const inspected = new WeakSet<object>();
  const spy = Object.create(logic) as typeof machine;
  // @xstate/graph calls `transition` unbound with a scope of its own; its system reports microsteps
  spy.transition = (snapshot, event, scope) => {
    if (!inspected.has(scope.system)) {
      inspected.add(scope.system);
      scope.system.inspect(record);
    }
    return logic.transition(snapshot, event, scope);
  };
  return spy;
}

describe("workflow statechart path coverage", () => {
  it("the explored graph reaches every state and every transition", () => {
    const takenTransitions = new Set<AnyTransitionDefinition>();
    const reachedStates = new Set<string>();
    const paths = getShortestPaths(observed(replayMachine, takenTransitions, reachedStates), { input: runInput, events: eventsFor as never, serializeState: serialize as never, limit: 200_000 });
    expect(paths.length).toBeGreaterThan(20);
    for (const path of paths) for (const n of path.state._nodes) reachedStates.add(n.id);
    // The wait timer (maxWaitMs 100 from askedAt 0): the first path that reaches awaitingHuman,
    // timed out as set (the call rejected), and replayed with a run set to fail instead.
    const failing = { ...runInput, budget: { ...runInput.budget, onWaitTimeout: "fail" as const } };
    const toWaiting = paths.find((p) => p.state.value === "awaitingHuman")!;
    const timedOut = { ...toWaiting, steps: [...toWaiting.steps, { state: toWaiting.state, event: { type: "human.timeout", now: 500 } }] };
    for (const input of [runInput, failing]) {
      const actor = createActor(replayMachine, {
        input,
        inspect: (ev: InspectionEvent) => {
          if (ev.type === "@xstate.microstep") for (const t of ev._transitions) takenTransitions.add(t);
        },
      });
      actor.subscribe({ next: (s) => s._nodes.forEach((n) => reachedStates.add(n.id)), error: () => undefined });
      actor.start();
      for (const step of timedOut.steps.slice(1)) {
        if (actor.getSnapshot().status !== "active") break;
        actor.send(step.event as never);
      }
      actor.stop();
    }

    // transient states are passed through inside one macrostep: they count as reached when a
    // taken transition leaves or enters them
    for (const t of takenTransitions) {
      reachedStates.add(t.source.id);
      for (const target of t.target ?? []) reachedStates.add(target.id);
    }
    const stateIds = allStateNodes(replayMachine.root).map((n) => n.id);
    expect(stateIds.filter((id) => !reachedStates.has(id))).toEqual([]);
    // provide() copies the machine: transitions are compared on the copy that was explored
    const missing = allTransitions(replayMachine.root)
      .filter((t) => !takenTransitions.has(t))
      .map((t) => `${t.source.id} --${t.eventType}--> ${(t.target ?? []).map((x: AnyStateNode) => x.id).join(",")}`);
    expect(missing).toEqual([]);
  }, 600_000); // CPU-bound (about 15 s on an idle core): the deadline must hold on a loaded 2-core machine
});
