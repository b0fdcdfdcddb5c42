import { describe, expect, it } from "vitest";
import { interventionOf } from "../../src/telemetry/interventions.js";
import { providerName, requestModel } from "../../src/telemetry/provider-name.js";
import { spanRefIn, TRACE_KEY, withoutSpanRef, withSpanRef } from "../../src/telemetry/span-ref.js";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { OllamaClient } from "../../src/clients/ollama.js";

describe("interventionOf", () => {
  it("facts that are no intervention give no event", () => {
    expect(interventionOf({ type: "tool.start", tool: "a", args: {}, callId: "c", index: 0 }, "executingTools.running")).toBeUndefined();
    expect(interventionOf({ type: "history.message", message: { role: "user", content: "hi", meta: { type: "user_input" } } as never }, "s")).toBeUndefined();
  });

  it("a rescue names its format, with the step's state and iteration", () => {
    expect(interventionOf({ type: "guardrail.rescue", iteration: 1, format: "pythonic" }, "executingTools")).toEqual({
      name: "forge.rescue",
      attributes: { "forge.machine.state": "executingTools", "forge.iteration": 1, "forge.rescue.format": "pythonic" },
    });
  });

  it("retry nudges carry their reason; step, prerequisite and loop-break blocks their tools; compactions their tokens; a wait its requests", () => {
    const nudge = (kind: "retry" | "step" | "prerequisite" | "loop_break", reason: string) => interventionOf({ type: "guardrail.nudge", iteration: 2, kind, reason, tools: ["answer"] }, "s");
    expect(nudge("retry", "unknown_tool")).toMatchObject({ name: "forge.nudge.retry", attributes: { "forge.nudge.reason": "unknown_tool" } });
    expect([nudge("step", "premature_terminal"), nudge("prerequisite", "x"), nudge("loop_break", "x")].map((e) => e?.name)).toEqual(["forge.nudge.step", "forge.prerequisite_block", "forge.loop_break"]);
    expect(nudge("prerequisite", "x")!.attributes["forge.prerequisite.tools"]).toEqual(["answer"]);
    expect(interventionOf({ type: "context.compacted", iteration: 4, event: { phaseReached: 2, tokensBefore: 900, tokensAfter: 300 } as never }, "s")).toEqual({
      name: "forge.compaction",
      attributes: { "forge.machine.state": "s", "forge.iteration": 4, "forge.compaction.phase": 2, "forge.compaction.tokens_before": 900, "forge.compaction.tokens_after": 300 },
    });
    expect(interventionOf({ type: "human.wait", iteration: 3, requests: 1, tools: ["refund"] }, "awaitingHuman")).toMatchObject({ name: "forge.human_wait", attributes: { "forge.human.requests": 1, "forge.human.tools": ["refund"] } });
  });
});

describe("telemetry helpers", () => {
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
