import fc from "fast-check";
import { describe, expect, expectTypeOf, it } from "vitest";
import { ChunkType, textResponse, toolCallsResponse, type LLMResponse, type StreamChunk, type ToolCall } from "../../src/core/llm.js";
import { jsonValue } from "../support/arbitraries.js";

describe("ChunkType", () => {
  it("has the seed's four values", () => {
    expect(ChunkType).toEqual({ TEXT_DELTA: "text_delta", TOOL_CALL_DELTA: "tool_call_delta", FINAL: "final", RETRY: "retry" });
  });

  it("its values are the StreamChunk discriminants", () => {
    const chunks: StreamChunk[] = [
      { type: ChunkType.TEXT_DELTA, content: "Hel", channel: "content" },
      { type: ChunkType.TOOL_CALL_DELTA, content: '{"ci', index: 0, name: "get_weather", id: "c1" },
      { type: ChunkType.FINAL, response: textResponse("Hello") },
      { type: ChunkType.RETRY, reason: "malformed stream" },
    ];
    expect(chunks.map((c) => c.type)).toEqual(Object.values(ChunkType));
  });
});

describe("textResponse", () => {
  it("builds a text response with only the given fields", () => {
    expect(textResponse("hi")).toEqual({ type: "text", content: "hi" });
    expect(Object.keys(textResponse("hi"))).toEqual(["type", "content"]);
  });

  it("carries reasoning and usage", () => {
    expect(textResponse("hi", { reasoning: "think", usage: { inputTokens: 10, outputTokens: 2 } })).toEqual({
      type: "text",
      content: "hi",
      reasoning: "think",
      usage: { inputTokens: 10, outputTokens: 2 },
    });
  });
});

describe("toolCallsResponse", () => {
  const calls: ToolCall[] = [
    { tool: "get_weather", args: { city: "Paris" }, id: "c1" },
    { tool: "answer", args: "not-an-object" },
  ];

  it("builds a tool_calls response keeping calls (and unvalidated args) as given", () => {
    const r = toolCallsResponse(calls);
    expect(r).toEqual({ type: "tool_calls", toolCalls: calls });
    if (r.type === "tool_calls") expect(r.toolCalls[1]?.args).toBe("not-an-object");
  });

  it("carries reasoning and usage", () => {
    expect(toolCallsResponse(calls, { reasoning: "plan", usage: { inputTokens: 1, outputTokens: 1 } })).toMatchObject({
      type: "tool_calls",
      reasoning: "plan",
      usage: { inputTokens: 1, outputTokens: 1 },
    });
  });

  it("narrows on type", () => {
    const r: LLMResponse = toolCallsResponse(calls);
    expectTypeOf(r).toEqualTypeOf<LLMResponse>();
    if (r.type === "tool_calls") expectTypeOf(r.toolCalls).toEqualTypeOf<ToolCall[]>();
    else expectTypeOf(r.content).toBeString();
  });

  it("property: both helpers are JSON round-trippable for JSON args", () => {
    const callArb = fc.record({ tool: fc.string(), args: jsonValue({ maxDepth: 2 }), id: fc.string() });
    fc.assert(
      fc.property(fc.array(callArb, { maxLength: 4 }), fc.string(), fc.nat(), fc.nat(), (toolCalls, text, i, o) => {
        const usage = { inputTokens: i, outputTokens: o };
        for (const r of [toolCallsResponse(toolCalls, { usage }), textResponse(text, { reasoning: text, usage })]) {
          expect(JSON.parse(JSON.stringify(r))).toEqual(r);
        }
      }),
      { numRuns: 100 },
    );
  });
});
