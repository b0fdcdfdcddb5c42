import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ClientContractError, type LLMResponse } from "../../src/core/index.js";
import { assertLLMResponse, assertStreamChunk, clientName, isPlainResponse, LLMResponseSchema, previewValue } from "../../src/core/response-contract.js";
import { jsonValue } from "../support/arbitraries.js";

describe("assertLLMResponse", () => {
  it("returns a valid response itself (extra fields kept)", () => {
    const r = { type: "tool_calls", toolCalls: [{ tool: "a", args: { x: 1 }, id: "c1" }], rescued: true, vendor: { raw: 1 } };
    expect(assertLLMResponse(r, "X")).toBe(r);
  });

  it("property: any text or tool-call response with JSON args passes", () => {
    const response = fc.oneof(
      fc.record({ type: fc.constant("text" as const), content: fc.string() }, { requiredKeys: ["type", "content"] }),
      fc.record({ type: fc.constant("tool_calls" as const), toolCalls: fc.array(fc.record({ tool: fc.string(), args: jsonValue() })) }),
    );
    fc.assert(
      fc.property(response, (r) => {
        expect(assertLLMResponse(r as LLMResponse, "X")).toBe(r);
      }),
    );
  });

  it("property: what the hand check passes, the schema accepts (it is a strict subset)", () => {
    const optional = <T>(a: fc.Arbitrary<T>) => fc.option(fc.oneof(a, fc.anything()), { nil: undefined });
    const usage = fc.record({ inputTokens: fc.oneof(fc.double(), fc.integer(), fc.anything()), outputTokens: fc.oneof(fc.double(), fc.integer()) });
    const call = fc.oneof(fc.record({ tool: fc.oneof(fc.string(), fc.anything()), args: fc.anything(), id: optional(fc.string()), reasoning: optional(fc.string()) }), fc.anything());
    const response = fc.oneof(
      fc.record({ type: fc.constantFrom("text", "tool_calls", "other"), content: optional(fc.string()), toolCalls: optional(fc.array(call)), reasoning: optional(fc.string()), usage: optional(usage), rescued: optional(fc.constant(true)) }, { requiredKeys: ["type"] }),
      fc.anything(),
    );
    fc.assert(
      fc.property(response, (r) => {
        if (isPlainResponse(r)) expect(LLMResponseSchema.safeParse(r).success).toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(isPlainResponse({ type: "tool_calls", toolCalls: [{ tool: "a", args: { i: 1 }, id: "c1" }], usage: { inputTokens: 1, outputTokens: 1 } })).toBe(true);
    expect(isPlainResponse({ type: "text", content: "hi", reasoning: "r" })).toBe(true);
  });

  it("names the client, the issue and what was received", () => {
    let caught: unknown;
    try {
      assertLLMResponse({ type: "text" }, "OllamaClient");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ClientContractError);
    expect(caught).toMatchObject({ client: "OllamaClient", issues: [expect.stringMatching(/^content: /)], received: '{"type":"text"}' });
    expect(() => assertLLMResponse({ type: "text", content: "x", usage: { inputTokens: -1, outputTokens: 0 } }, "X")).toThrow(/usage\.inputTokens/);
    expect(() => assertLLMResponse({ type: "tool_calls", toolCalls: [{ tool: "a", args: new Map() }] }, "X")).toThrow(/a Map at toolCalls\[0\]\.args/);
  });

  it("stream chunks must be objects with a string type", () => {
    expect(assertStreamChunk({ type: "retry", reason: "x" }, "X")).toEqual({ type: "retry", reason: "x" });
    for (const bad of [null, 5, {}, { type: 1 }]) expect(() => assertStreamChunk(bad, "X")).toThrow(ClientContractError);
  });
});

describe("previewValue and clientName", () => {
  it("never throw and stay short", () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(previewValue(circular)).toBe("[object Object]");
    expect(previewValue(10n)).toBe('"10n"');
    expect(previewValue(undefined)).toBe("undefined");
    expect(previewValue(Object.create(null))).toBe("{}");
    expect(previewValue("x".repeat(1000)).length).toBeLessThan(400);
    class MyClient {}
    expect(clientName(new MyClient())).toBe("MyClient");
    expect(clientName(Object.create(null))).toBe("LLMClient");
  });
});
