import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { extractToolCalls, findCallSpans, rescueToolCall } from "../../src/parsing/index.js";
import { rescue, TOOLS } from "./helpers.js";

describe("rescueToolCall: cross-family behaviour", () => {
  it("orders calls from different families by position", () => {
    const text = '[get_time()]\nthen\n<tool_call>{"name": "search", "arguments": {"q": "a"}}</tool_call>\n```json\n{"tool": "get_weather", "args": {"city": "x"}}\n```';
    expect(rescue(text).map((c) => c.tool)).toEqual(["get_time", "search", "get_weather"]);
  });

  it("never returns a tool outside availableTools", () => {
    const text = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
    expect(rescueToolCall(text, ["search"])).toEqual([]);
    expect(rescueToolCall(text, [])).toEqual([]);
  });

  it("the JSON inside markup is read once (one region, one reading)", () => {
    expect(findCallSpans('<tool_call>{"name": "get_time", "arguments": {}}</tool_call>')).toHaveLength(1);
    expect(rescue('Action: ```json\n[{"tool_name": "get_time", "parameters": {}}]\n```')).toHaveLength(1);
  });

  it("throws InvalidArgumentError for non-string text and non-array tools", () => {
    expect(() => rescueToolCall(undefined as unknown as string, TOOLS)).toThrow(InvalidArgumentError);
    expect(() => rescueToolCall({} as unknown as string, TOOLS)).toThrow(/Invalid text/);
    expect(() => rescueToolCall("x", "get_time" as unknown as string[])).toThrow(/Invalid availableTools/);
    expect(() => rescueToolCall("x", [1] as unknown as string[])).toThrow(/availableTools\[0\]/);
  });

  it("empty and whitespace text yield []", () => {
    expect(rescue("")).toEqual([]);
    expect(rescue("  \n ")).toEqual([]);
  });
});

describe("rescueToolCall: 1 MB adversarial inputs return [] (timing is in the bench)", () => {
  const M = 1_000_000;
  const cases: Record<string, string> = {
    "open braces": "{".repeat(M),
    "open brackets": "[".repeat(M),
    "quote run": '"'.repeat(M),
    "nested keys": '{"a":'.repeat(M / 5),
    "[TOOL_CALLS] repeated": "[TOOL_CALLS]".repeat(M / 12),
    "unclosed <tool_call> repeated": "<tool_call>".repeat(M / 11),
    "unclosed tool_call with JSON prefix": '<tool_call>{"name":"get_time","arguments":{'.repeat(M / 45),
    "[ARGS] repeated": "get_time[ARGS]".repeat(M / 14),
    "pythonic prefix repeated": '[get_time(tz="'.repeat(M / 14),
    "[{ repeated": "[{".repeat(M / 2),
    "backslash run in a string": '{"a":"' + "\\".repeat(M),
    "1 MB of prose mentioning tools": "Use get_time or search (see [1]) if needed. ".repeat(M / 44),
  };
  for (const [name, text] of Object.entries(cases)) {
    it(name, () => {
      expect(rescueToolCall(text, TOOLS)).toEqual([]);
    });
  }
  it("a real call after 1 MB of prose is still found", () => {
    const text = "lorem ipsum { [ ".repeat(M / 16) + '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
    expect(rescueToolCall(text, TOOLS)).toEqual([{ tool: "get_time", args: {} }]);
  });
});

describe("extractToolCalls", () => {
  it("splits reasoning, returns calls and the content without call markup", () => {
    const text = '<think>need the time</think>Let me check.\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
    expect(extractToolCalls(text, TOOLS)).toEqual({
      toolCalls: [{ tool: "get_time", args: {} }],
      content: "Let me check.",
      reasoning: "need the time",
      format: "hermes",
    });
  });

  it("removes section wrappers and Harmony framing", () => {
    const ds = 'Hi<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>';
    expect(extractToolCalls(ds, TOOLS).content).toBe("Hi");
    const harmony = "<|channel|>analysis<|message|>hmm<|end|><|start|>assistant<|channel|>final<|message|>It is 3pm.<|return|>";
    expect(extractToolCalls(harmony, TOOLS)).toEqual({ toolCalls: [], content: "It is 3pm.", reasoning: "hmm" });
  });

  it("keeps markup that names only unknown tools visible", () => {
    const text = '<tool_call>{"name": "wipe", "arguments": {}}</tool_call>';
    expect(extractToolCalls(text, TOOLS)).toEqual({ toolCalls: [], content: text });
  });

  it("plain text passes through", () => {
    expect(extractToolCalls("The answer is 42.", TOOLS)).toEqual({ toolCalls: [], content: "The answer is 42." });
  });
});

describe("documented examples", () => {
  it("extractToolCalls JSDoc example holds", () => {
    expect(extractToolCalls('<think>need weather</think>Checking.\n[get_weather(city="Oslo")]', ["get_weather"])).toEqual({
      toolCalls: [{ tool: "get_weather", args: { city: "Oslo" } }],
      content: "Checking.",
      reasoning: "need weather",
      format: "pythonic",
    });
  });
});

describe("extractToolCalls names the family of the first region a call is taken from", () => {
  it.each([
    ['<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>', "hermes"],
    ['[get_weather(city="Oslo")]', "pythonic"],
    ['[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]', "mistral"],
    ['```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```', "fenced_json"],
    ['Sure: {"name": "get_weather", "arguments": {"city": "Oslo"}}', "embedded_json"],
    ['<tool_call>{"name": "nope", "arguments": {}}</tool_call> then [get_weather(city="Oslo")]', "pythonic"],
    ["no call here", undefined],
  ])("%s → %s", (text, family) => {
    expect(extractToolCalls(text, ["get_weather"]).format).toBe(family);
  });
});
