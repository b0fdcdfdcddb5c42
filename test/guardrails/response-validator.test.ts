import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assertValidatorTools, rejectionBudget, toolDefinitions, toolNamesOf, validateResponse } from "../../src/guardrails/response-validator.js";
import { batchSkippedMessage } from "../../src/guardrails/nudges.js";
import type { LLMResponse } from "../../src/core/llm.js";
import { fenced, tools } from "./fixtures.js";
import { jsonValue } from "../support/arbitraries.js";

const calls = (...toolCalls: { tool: string; args: unknown; id?: string }[]): LLMResponse => ({ type: "tool_calls", toolCalls });

describe("validateResponse", () => {
  it("accepts known calls, applies schema defaults, keeps ids and carries reasoning", () => {
    const r = validateResponse({ ...calls({ tool: "get_weather", args: { city: "Paris" }, id: "c1" }), reasoning: "need weather" }, { tools });
    expect(r).toEqual({
      kind: "calls",
      rescued: false,
      calls: [{ tool: "get_weather", args: { city: "Paris", unit: "C" }, id: "c1", reasoning: "need weather" }],
    });
  });

  it("accepts args given as a JSON string holding an object", () => {
    const r = validateResponse(calls({ tool: "get_weather", args: '{"city":"Oslo"}' }), { tools });
    expect(r.kind === "calls" && r.calls[0]?.args).toEqual({ city: "Oslo", unit: "C" });
  });

  it("rescues a fenced JSON call from text", () => {
    const r = validateResponse({ type: "text", content: fenced("get_weather", { city: "Rome" }) }, { tools });
    expect(r).toEqual({ kind: "calls", rescued: true, rescueFormat: "fenced_json", text: "Sure, calling it now.", calls: [{ tool: "get_weather", args: { city: "Rome", unit: "C" } }] });
  });

  it("keeps the prose beside a call, rescued or native, and omits it when there is none", () => {
    const tagged = validateResponse({ type: "text", content: 'Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>' }, { tools });
    expect(tagged).toMatchObject({ kind: "calls", text: "Let me check." });
    const native = validateResponse({ ...calls({ tool: "get_weather", args: { city: "Oslo" } }), content: "Checking." }, { tools });
    expect(native).toMatchObject({ kind: "calls", text: "Checking." });
    const bare = validateResponse({ type: "text", content: '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>' }, { tools });
    expect(bare.kind === "calls" && "text" in bare).toBe(false);
  });

  // One answer per situation whatever the format: a call to an unknown tool written as bare
  // JSON, in tags or natively is rejected with the same [UnknownTool] message.
  it.each([
    ["bare JSON", '{"name": "get_wether", "arguments": {"city": "Oslo"}}'],
    ["fenced JSON", 'Here:\n```json\n{"name": "get_wether", "arguments": {"city": "Oslo"}}\n```'],
    ["Hermes tags", '<tool_call>{"name": "get_wether", "arguments": {"city": "Oslo"}}</tool_call>'],
    ["Mistral", '[TOOL_CALLS][{"name": "get_wether", "arguments": {"city": "Oslo"}}]'],
  ])("a call to an unknown tool written as %s is an attempted call, answered like a native one", (_, content) => {
    const rescued = validateResponse({ type: "text", content }, { tools });
    const native = validateResponse(calls({ tool: "get_wether", args: { city: "Oslo" } }), { tools });
    if (rescued.kind !== "rejected" || native.kind !== "rejected") throw new Error(`expected rejected, got ${rescued.kind}`);
    expect(rescued.rescued).toBe(true);
    expect(rescued.rejections).toEqual(native.rejections);
    expect(rescued.rejections[0]?.message).toMatch(/^\[UnknownTool\] There is no tool named "get_wether"\. Available tools: "get_weather"/);
  });

  it("JSON that is data (no name + arguments object) stays text", () => {
    for (const content of ['{"name": "Alice", "age": 3}', '{"city": "Oslo", "arguments": {"a": 1}}', '[{"name": "x"}]']) {
      expect(validateResponse({ type: "text", content }, { tools }).kind).toBe("retry");
    }
  });

  it("retries bare text, empty tool_calls, and text when rescue is disabled", () => {
    const text = validateResponse({ type: "text", content: "It is probably sunny." }, { tools });
    expect(text.kind).toBe("retry");
    expect(text.kind === "retry" && text.nudge).toMatchObject({ role: "user", kind: "retry" });
    expect(text.kind === "retry" && text.raw).toBe("It is probably sunny.");
    expect(validateResponse(calls(), { tools })).toMatchObject({ kind: "retry", raw: "" });
    const off = validateResponse({ type: "text", content: fenced("get_weather", { city: "Rome" }) }, { tools, rescueEnabled: false });
    expect(off.kind).toBe("retry");
  });

  it("rejects an unknown tool and skips the rest of the batch", () => {
    const r = validateResponse(calls({ tool: "get_weather", args: { city: "A" } }, { tool: "get_forecast", args: {} }), { tools });
    if (r.kind !== "rejected") throw new Error(`expected rejected, got ${r.kind}`);
    expect(r.rejections.map((x) => x.kind)).toEqual(["batch_skipped", "unknown_tool"]);
    expect(r.rejections[0]?.message).toBe(batchSkippedMessage("get_weather"));
    expect(r.rejections[1]?.message).toMatch(/^\[UnknownTool\].*"get_forecast".*"get_weather"/);
    expect(r.calls).toHaveLength(2);
  });

  it("a zod issue on city names city", () => {
    const r = validateResponse(calls({ tool: "get_weather", args: { city: 42 } }), { tools });
    if (r.kind !== "rejected") throw new Error("expected rejected");
    expect(r.rejections).toHaveLength(1);
    expect(r.rejections[0]?.kind).toBe("invalid_args");
    expect(r.rejections[0]?.message).toMatch(/^\[InvalidArguments\]/);
    expect(r.rejections[0]?.message).toMatch(/- city: .*string/);
  });

  it("an ajv (raw JSON Schema) issue names the missing field", () => {
    const r = validateResponse(calls({ tool: "read_file", args: {} }), { tools });
    expect(r.kind === "rejected" && r.rejections[0]?.message).toMatch(/- path: /);
  });

  it("non-object args are rejected, with names only too", () => {
    for (const args of [null, 3, "not json", "[1,2]", ["a"], undefined]) {
      const r = validateResponse(calls({ tool: "respond", args }), { tools: ["respond"] });
      expect(r.kind === "rejected" && r.rejections[0]).toMatchObject({ kind: "invalid_args" });
      expect(r.kind === "rejected" && r.rejections[0]?.message).toMatch(/must be a JSON object/);
    }
  });

  it("names only: no schema check, any object passes", () => {
    const r = validateResponse(calls({ tool: "get_weather", args: { city: 42 } }), { tools: ["get_weather"] });
    expect(r).toEqual({ kind: "calls", rescued: false, calls: [{ tool: "get_weather", args: { city: 42 } }] });
  });

  it("the synthetic respond tool passes like any other tool", () => {
    const r = validateResponse(calls({ tool: "respond", args: { message: "Hello!" } }), { tools: ["get_weather", "respond"] });
    expect(r).toEqual({ kind: "calls", rescued: false, calls: [{ tool: "respond", args: { message: "Hello!" } }] });
  });

  it("never returns a call outside the tool set and answers every call once (property)", () => {
    const names = ["get_weather", "respond"];
    const call = fc.record({
      tool: fc.constantFrom("get_weather", "respond", "nope", "Respond", ""),
      args: fc.oneof(jsonValue(), fc.dictionary(fc.string(), jsonValue())),
    });
    fc.assert(
      fc.property(fc.array(call, { maxLength: 4 }), fc.boolean(), (batch, useDefs) => {
        const r = validateResponse(calls(...batch), { tools: useDefs ? { get_weather: tools.get_weather, respond: tools.respond } : names });
        if (r.kind === "calls") {
          for (const c of r.calls) expect(names).toContain(c.tool);
        } else if (r.kind === "rejected") {
          expect(r.rejections.map((x) => x.index)).toEqual(batch.map((_, i) => i));
          expect(r.rejections.some((x) => x.kind !== "batch_skipped")).toBe(true);
        } else {
          expect(batch).toHaveLength(0);
        }
      }),
    );
  });

  it("rescued text never yields a tool outside the set (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom("get_weather", "respond", "rm_rf", "shell"), fc.string(), (tool, city) => {
        const r = validateResponse({ type: "text", content: fenced(tool, { city, message: city }) }, { tools: ["get_weather", "respond"] });
        if (r.kind === "calls") for (const c of r.calls) expect(["get_weather", "respond"]).toContain(c.tool);
      }),
    );
  });
});

describe("rejectionBudget", () => {
  it("unknown tools draw on retries, argument errors on tool errors", () => {
    expect(rejectionBudget([{ index: 0, tool: "x", kind: "unknown_tool", message: "" }, { index: 1, tool: "y", kind: "invalid_args", message: "" }])).toBe("retries");
    expect(rejectionBudget([{ index: 0, tool: "y", kind: "invalid_args", message: "" }, { index: 1, tool: "z", kind: "batch_skipped", message: "" }])).toBe("toolErrors");
  });
});

describe("toolNamesOf / toolDefinitions", () => {
  it("names in declaration order; definitions only when definitions were given", () => {
    expect(toolNamesOf(["get_weather", "respond"])).toEqual(["get_weather", "respond"]);
    expect(toolNamesOf(tools)).toEqual(["get_weather", "respond", "read_file", "edit_file"]);
    expect(toolDefinitions(["get_weather"])).toEqual({});
    expect(toolDefinitions(tools)).toBe(tools);
  });

  it("rescue off: a fenced call in text is a retry, not a rescue", () => {
    expect(validateResponse({ type: "text", content: fenced("respond", { message: "x" }) }, { tools: ["respond"], rescueEnabled: false }).kind).toBe("retry");
  });
});

describe("assertValidatorTools", () => {
  it("rejects malformed tool sets up front", () => {
    expect(() => assertValidatorTools(["a", "b"])).not.toThrow();
    expect(() => assertValidatorTools(tools)).not.toThrow();
    expect(() => assertValidatorTools(["a", ""])).toThrow(/non-empty strings/);
    expect(() => assertValidatorTools("a")).toThrow(/record of tool definitions/);
    expect(() => assertValidatorTools({ a: { name: "a" } })).toThrow(/tools\.a is not a tool definition/);
    expect(() => assertValidatorTools(5)).toThrow(/tools/);
  });
});
