import { describe, expect, it } from "vitest";
import { createInitialContext, type WorkflowContext } from "../../src/loop/context.js";
import { interventionsBetween } from "../../src/telemetry/interventions.js";
import { providerName, requestModel } from "../../src/telemetry/provider-name.js";
import { spanRefIn, TRACE_KEY, withoutSpanRef, withSpanRef } from "../../src/telemetry/span-ref.js";
import { rescueFormat } from "../../src/parsing/rescue.js";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { OllamaClient } from "../../src/clients/ollama.js";

const base = createInitialContext({
  runId: "r", workflow: "w", messages: [], toolNames: ["lookup", "answer"], terminalTools: ["answer"], requiredSteps: [], prerequisites: {},
  budget: { maxIterations: 9, maxRetries: 3, maxToolErrors: 2, maxPremature: 3, maxPrereq: 3, maxToolRepeat: 3 },
  switches: { rescueEnabled: true, stepEnforcement: true }, startedAt: 0, compactAt: null,
});
const next = (patch: Partial<WorkflowContext>, stats: Partial<WorkflowContext["stats"]> = {}): WorkflowContext => ({ ...base, ...patch, stats: { ...base.stats, ...stats } });

describe("interventionsBetween", () => {
  it("nothing changed: no events", () => {
    expect(interventionsBetween(base, base, "inferring", "compacting")).toEqual([]);
  });

  it("a rescue names the text's format; a client-side rescue says client", () => {
    const text = next({ iteration: 1, lastResponse: { type: "text", content: '[lookup(user="ann")]' } }, { rescues: 1 });
    expect(interventionsBetween(base, text, "executingTools", "inferring")).toEqual([
      { name: "forge.rescue", attributes: { "forge.machine.state": "executingTools", "forge.iteration": 1, "forge.rescue.format": "pythonic" } },
    ]);
    const client = next({ lastResponse: { type: "tool_calls", toolCalls: [], rescued: true } }, { rescues: 1 });
    expect(interventionsBetween(base, client, "s", "p")[0]!.attributes["forge.rescue.format"]).toBe("client");
  });

  it("retry nudges carry their reason; step, prerequisite and loop-break blocks their tools; compactions their tokens; a wait its requests", () => {
    const rejected = next(
      { validation: { kind: "rejected", calls: [], rescued: false, rejections: [{ index: 0, tool: "x", kind: "unknown_tool", message: "no" }] } },
      { retryNudges: 1 },
    );
    expect(interventionsBetween(base, rejected, "s", "p")[0]).toMatchObject({ name: "forge.nudge.retry", attributes: { "forge.nudge.reason": "unknown_tool" } });
    const calls = { kind: "calls" as const, calls: [{ tool: "answer", args: {} }], rescued: false };
    const blocked = next({ validation: calls }, { stepNudges: 1, prereqNudges: 1, loopBreaks: 1 });
    expect(interventionsBetween(base, blocked, "s", "p").map((e) => e.name)).toEqual(["forge.nudge.step", "forge.prerequisite_block", "forge.loop_break"]);
    expect(interventionsBetween(base, blocked, "s", "p")[1]!.attributes["forge.prerequisite.tools"]).toEqual(["answer"]);
    const compacted = next({}, { compactions: [{ phase: 2, tokensBefore: 900, tokensAfter: 300, iteration: 4 }] });
    expect(interventionsBetween(base, compacted, "s", "p")).toEqual([
      { name: "forge.compaction", attributes: { "forge.machine.state": "s", "forge.iteration": 4, "forge.compaction.phase": 2, "forge.compaction.tokens_before": 900, "forge.compaction.tokens_after": 300 } },
    ]);
    const waiting = next({ batch: { calls: [], done: [], human: [{ callId: "c", index: 0, tool: "refund", args: {}, kind: "approval", askedAt: 0, parameters: {} }] } });
    expect(interventionsBetween(base, waiting, "awaitingHuman", "executingTools")[0]).toMatchObject({ name: "forge.human_wait", attributes: { "forge.human.requests": 1, "forge.human.tools": ["refund"] } });
    expect(interventionsBetween(waiting, waiting, "awaitingHuman", "awaitingHuman")).toEqual([]);
  });
});

describe("telemetry helpers", () => {
  it("rescueFormat names the family rescueToolCall would take", () => {
    expect(rescueFormat('<tool_call>{"name":"a","arguments":{}}</tool_call>', ["a"])).toBe("hermes");
    expect(rescueFormat("no calls here", ["a"])).toBeUndefined();
  });

  it("providerName and requestModel come from the client", () => {
    expect(providerName(new ScriptedClient({ responses: [] }))).toBe("scripted");
    const ollama = new OllamaClient({ model: "qwen3:8b", logger: () => {} });
    expect([providerName(ollama), requestModel(ollama)]).toEqual(["ollama", "qwen3:8b"]);
    const own = Object.assign(new ScriptedClient({ responses: [] }), { providerName: "vllm", model: "Qwen3" });
    expect([providerName(own), requestModel(own)]).toEqual(["vllm", "Qwen3"]);
  });

  it("a span reference rides in a snapshot and comes out checked", () => {
    const ref = { traceId: "a".repeat(32), spanId: "b".repeat(16), traceFlags: 1 };
    const noted = withSpanRef({ status: "active" }, ref);
    expect(spanRefIn(JSON.parse(JSON.stringify(noted)))).toEqual(ref);
    expect(withoutSpanRef(noted)).toEqual({ status: "active" });
    expect(spanRefIn({ [TRACE_KEY]: { traceId: "zz", spanId: "b".repeat(16) } })).toBeUndefined();
    expect(withSpanRef({ status: "active" }, undefined)).toEqual({ status: "active" });
  });
});
