import { describe, expect, it } from "vitest";
import { rescue } from "./helpers.js";

describe("Granite <|tool_call|>", () => {
  it("single, parallel, nested + unicode", () => {
    expect(rescue('<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]')).toEqual([
      { tool: "get_weather", args: { city: "Paris" } },
    ]);
    expect(rescue('<|tool_call|>[{"name": "search", "arguments": {"q": "Ω", "f": {"a": [true]}}}, {"name": "get_time", "arguments": {}}]')).toEqual([
      { tool: "search", args: { q: "Ω", f: { a: [true] } } },
      { tool: "get_time", args: {} },
    ]);
  });
  it("negatives", () => {
    expect(rescue('<|tool_call|>[{"name": "get_weather", "arguments": {')).toEqual([]);
    expect(rescue("<|tool_call|> is the granite marker")).toEqual([]);
  });
});

describe("DeepSeek tool-call tokens", () => {
  const v3 = (name: string, args: string) =>
    `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${name}\n\`\`\`json\n${args}\n\`\`\`<｜tool▁call▁end｜>`;
  it("V3 / R1 fenced args, parallel, after R1 reasoning", () => {
    const text = `Let me think</think>Calling.<｜tool▁calls▁begin｜>${v3("get_weather", '{"city": "上海"}')}${v3("get_time", "{}")}<｜tool▁calls▁end｜>`;
    expect(rescue(text)).toEqual([
      { tool: "get_weather", args: { city: "上海" } },
      { tool: "get_time", args: {} },
    ]);
  });
  it("V3.1 name<｜tool▁sep｜>{json}", () => {
    const text = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{"q": "x", "n": {"m": [1]}}<｜tool▁call▁end｜><｜tool▁calls▁end｜>';
    expect(rescue(text)).toEqual([{ tool: "search", args: { q: "x", n: { m: [1] } } }]);
  });
  it("negatives: missing end token, unknown tool, call inside <think>", () => {
    expect(rescue('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{"q": "x"}')).toEqual([]);
    expect(rescue(`<｜tool▁calls▁begin｜>${v3("nuke", "{}")}<｜tool▁calls▁end｜>`)).toEqual([]);
    expect(rescue(`<think>${v3("get_time", "{}")}</think>No.`)).toEqual([]);
  });
});

describe("Kimi-K2 sections", () => {
  const call = (id: string, args: string) => `<|tool_call_begin|>${id}<|tool_call_argument_begin|>${args}<|tool_call_end|>`;
  it("keeps functions.name:idx as id; parallel; unicode", () => {
    const text = `Sure.<|tool_calls_section_begin|>${call("functions.get_weather:0", '{"city": "Αθήνα"}')}${call("functions.get_time:1", "{}")}<|tool_calls_section_end|>`;
    expect(rescue(text)).toEqual([
      { tool: "get_weather", args: { city: "Αθήνα" }, id: "functions.get_weather:0" },
      { tool: "get_time", args: {}, id: "functions.get_time:1" },
    ]);
  });
  it("negatives: unclosed call, unknown tool", () => {
    expect(rescue('<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{"a":')).toEqual([]);
    expect(rescue(call("functions.erase:0", "{}"))).toEqual([]);
  });
});

describe("Functionary >>>name", () => {
  it("single, parallel, nested", () => {
    expect(rescue('>>>get_weather\n{"city": "Paris"}')).toEqual([{ tool: "get_weather", args: { city: "Paris" } }]);
    expect(rescue('>>>search\n{"q": "ä", "f": {"x": [1, {"y": null}]}}\n>>>get_time\n{}')).toEqual([
      { tool: "search", args: { q: "ä", f: { x: [1, { y: null }] } } },
      { tool: "get_time", args: {} },
    ]);
  });
  it("negatives: >>>all text channel, Python REPL prompts, truncated JSON", () => {
    expect(rescue(">>>all\nThe weather is fine.")).toEqual([]);
    expect(rescue(">>> get_weather('Paris')")).toEqual([]);
    expect(rescue('>>>get_weather\n{"city": ')).toEqual([]);
  });
});

describe("Command-R", () => {
  it("Action: ```json [...]``` with tool_name/parameters, parallel", () => {
    const text = 'Plan: look it up.\nAction: ```json\n[\n  {"tool_name": "search", "parameters": {"q": "x"}},\n  {"tool_name": "get_time", "parameters": {}}\n]\n```';
    expect(rescue(text)).toEqual([
      { tool: "search", args: { q: "x" } },
      { tool: "get_time", args: {} },
    ]);
  });
  it("Command R7B <|START_ACTION|> with tool_call_id", () => {
    const text = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Köln"}}]<|END_ACTION|>';
    expect(rescue(text)).toEqual([{ tool: "get_weather", args: { city: "Köln" }, id: "0" }]);
  });
  it("negatives: directly_answer not available, Action in prose", () => {
    expect(rescue('Action: ```json\n[{"tool_name": "directly_answer", "parameters": {}}]\n```')).toEqual([]);
    expect(rescue("Action: none needed, the answer is 4.")).toEqual([]);
  });
});

describe("gpt-oss Harmony", () => {
  it("commentary call after an analysis message (which is reasoning)", () => {
    const text =
      '<|channel|>analysis<|message|>User wants weather; maybe to=functions.get_time<|message|>{}<|call|><|end|>' +
      '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris", "u": {"c": true}}<|call|>';
    expect(rescue(text)).toEqual([{ tool: "get_weather", args: { city: "Paris", u: { c: true } } }]);
  });
  it("recipient before the channel, missing <|call|> stop token, parallel messages", () => {
    const text =
      '<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{"tz": "UTC"}<|call|>' +
      '<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>{"q": "ß"}';
    expect(rescue(text)).toEqual([
      { tool: "get_time", args: { tz: "UTC" } },
      { tool: "search", args: { q: "ß" } },
    ]);
  });
  it("negatives: final channel only, unknown recipient, truncated args", () => {
    expect(rescue("<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>")).toEqual([]);
    expect(rescue("<|channel|>commentary to=functions.exec <|constrain|>json<|message|>{}<|call|>")).toEqual([]);
    expect(rescue('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Pa')).toEqual([]);
  });
});
