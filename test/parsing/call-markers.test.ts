import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { looksLikeToolCall } from "../../src/parsing/call-markers.js";

const TOOLS = ["get_weather", "search"];

describe("looksLikeToolCall", () => {
  it.each([
    ['<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call>', "Hermes with broken JSON"],
    ["[TOOL_CALLS]get_weather[ARGS]{city: Paris}", "Mistral with unquoted args"],
    ["<function=get_weather><parameter=city>Paris", "Qwen3-Coder cut off"],
    ['Here you go: {"name": "search", "arguments": {"q": "x"', "a JSON call object cut off"],
    ['{"tool":"get_weather","args":', "the {tool,args} shape cut off"],
    ["<|python_tag|>get_weather.call(", "Llama python tag"],
  ])("%s → true (%s)", (text) => {
    expect(looksLikeToolCall(text, TOOLS)).toBe(true);
  });

  it.each([
    "The weather in Paris is sunny, 21 °C.",
    "You can use get_weather(city) whenever you need a forecast.",
    'Set "name": "Alice" in the form.',
    '{"name": "not_a_tool", "arguments": {}}',
    "",
  ])("%j → false", (text) => {
    expect(looksLikeToolCall(text, TOOLS)).toBe(false);
  });

  it("property: prose without markers, braces or quotes is never a call attempt", () => {
    const prose = fc.string({ unit: fc.constantFrom("a", "b", " ", ".", ",", "get_weather", "search", "(", ")", "\n") });
    fc.assert(fc.property(prose, (text) => !looksLikeToolCall(text, TOOLS)), { numRuns: 300 });
  });

  it("is linear on hostile input (1 MB of keys)", () => {
    const hostile = '"name":'.repeat(150_000);
    const t = performance.now();
    expect(looksLikeToolCall(hostile, TOOLS)).toBe(false);
    // A generous bound that only proves "no quadratic blow-up", not a timing goal.
    expect(performance.now() - t).toBeLessThan(2_000);
  });
});
