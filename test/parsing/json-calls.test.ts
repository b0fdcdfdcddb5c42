import { describe, expect, it } from "vitest";
import { rescue } from "./helpers.js";

describe("fenced and embedded JSON", () => {
  it("reads {tool,args} in a fence with prose around it", () => {
    const text = 'Let me check.\n```json\n{"tool": "get_weather", "args": {"city": "Paris"}}\n```\nDone.';
    expect(rescue(text)).toEqual([{ tool: "get_weather", args: { city: "Paris" } }]);
  });

  it("reads several fenced blocks and an array in one fence, in order", () => {
    const text =
      '```json\n{"tool": "get_time", "args": {}}\n```\nand\n```\n[{"name": "search", "arguments": {"q": "a"}}, {"name": "get_weather", "parameters": {"city": "B"}}]\n```';
    expect(rescue(text)).toEqual([
      { tool: "get_time", args: {} },
      { tool: "search", args: { q: "a" } },
      { tool: "get_weather", args: { city: "B" } },
    ]);
  });

  it("reads {name,arguments} / {name,parameters} embedded in prose, and arguments as a JSON string", () => {
    expect(rescue('I will call {"name": "search", "arguments": {"q": "日本 🌸"}} now.')).toEqual([
      { tool: "search", args: { q: "日本 🌸" } },
    ]);
    expect(rescue('{"name": "get_weather", "parameters": {"loc": {"lat": 1.5, "tags": ["a", null]}}}')).toEqual([
      { tool: "get_weather", args: { loc: { lat: 1.5, tags: ["a", null] } } },
    ]);
    expect(rescue('{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}')).toEqual([
      { tool: "get_weather", args: { city: "Oslo" } },
    ]);
  });

  it("unwraps OpenAI-shaped {type:function,function:{…}} objects and keeps the id", () => {
    const text = '{"id": "call_1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}';
    expect(rescue(text)).toEqual([{ tool: "get_time", args: {}, id: "call_1" }]);
  });

  it("returns a call once when the same region is fenced (no double reading)", () => {
    const text = '```json\n{"tool": "get_time", "args": {}}\n```';
    expect(rescue(text)).toHaveLength(1);
  });

  it("returns identical calls in distinct regions separately", () => {
    const call = '{"tool": "get_time", "args": {}}';
    expect(rescue(`${call}\nthen again\n${call}`)).toHaveLength(2);
  });

  it("negatives: data JSON, missing args key, non-object args, unknown tools, mentions", () => {
    expect(rescue('{"name": "Bob", "age": 3}')).toEqual([]);
    expect(rescue('{"name": "get_weather"}')).toEqual([]);
    expect(rescue('{"name": "get_weather", "arguments": "Paris"}')).toEqual([]);
    expect(rescue('{"tool": "delete_all", "args": {}}')).toEqual([]);
    expect(rescue("You could use get_weather with a city argument.")).toEqual([]);
    expect(rescue('{"results": [{"tool": "get_time", "args": {}}]}')).toEqual([]);
    expect(rescue('```json\n{"tool": "get_weather", "args": {"city": "Par\n```')).toEqual([]);
    const definition = '{"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {}}}';
    expect(rescue(`The tool is defined as ${definition}.`)).toEqual([]);
  });
});

describe("Llama 3.x", () => {
  it("reads <|python_tag|> JSON (with ; separation) and bare {name, parameters}", () => {
    expect(rescue('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>')).toEqual([
      { tool: "get_weather", args: { city: "Paris" } },
    ]);
    expect(rescue('<|python_tag|>{"name": "get_time", "parameters": {}}; {"name": "search", "parameters": {"q": "x"}}')).toEqual([
      { tool: "get_time", args: {} },
      { tool: "search", args: { q: "x" } },
    ]);
    expect(rescue('{"name": "get_weather", "parameters": {"city": "São Paulo"}}')).toEqual([
      { tool: "get_weather", args: { city: "São Paulo" } },
    ]);
  });

  it("python_tag: missing parameters mean {}; code after the tag is not a call", () => {
    expect(rescue('<|python_tag|>{"name": "get_time"}')).toEqual([{ tool: "get_time", args: {} }]);
    expect(rescue('<|python_tag|>brave_search.call(query="x")')).toEqual([]);
  });
});
