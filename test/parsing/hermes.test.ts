import { describe, expect, it } from "vitest";
import { rescue } from "./helpers.js";

describe("<tool_call> JSON (Hermes / Qwen2.5 / Qwen3)", () => {
  it("single call with prose around it", () => {
    const text = 'Checking now.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    expect(rescue(text)).toEqual([{ tool: "get_weather", args: { city: "Paris" } }]);
  });

  it("parallel calls keep their order; unicode and nested args survive", () => {
    const text =
      '<tool_call>\n{"name": "search", "arguments": {"q": "naïve \\"quotes\\" ✓", "filters": {"tags": ["a", {"b": [1, 2]}]}}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
    expect(rescue(text)).toEqual([
      { tool: "search", args: { q: 'naïve "quotes" ✓', filters: { tags: ["a", { b: [1, 2] }] } } },
      { tool: "get_time", args: {} },
    ]);
  });

  it("decodes arguments given as a JSON string; reads an unclosed block holding complete JSON", () => {
    expect(rescue('<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Rome\\"}"}</tool_call>')).toEqual([
      { tool: "get_weather", args: { city: "Rome" } },
    ]);
    expect(rescue('<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}')).toEqual([
      { tool: "get_time", args: { tz: "UTC" } },
    ]);
  });

  it("unambiguous markup keeps undecodable args raw so the validator can reject them loudly", () => {
    expect(rescue('<tool_call>{"name": "get_weather", "arguments": "Paris"}</tool_call>')).toEqual([
      { tool: "get_weather", args: "Paris" },
    ]);
    const broken = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {'city': 'Paris'}}\n</tool_call>";
    expect(rescue(broken)).toEqual([{ tool: "get_weather", args: "{\"name\": \"get_weather\", \"arguments\": {'city': 'Paris'}}" }]);
  });

  it("negatives: unknown tool, truncated JSON, inside <think>, tag mentioned in prose", () => {
    expect(rescue('<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>')).toEqual([]);
    expect(rescue('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par')).toEqual([]);
    expect(rescue('<think><tool_call>{"name": "get_time", "arguments": {}}</tool_call></think>Answer: 3')).toEqual([]);
    expect(rescue("I would wrap the call in <tool_call> tags, e.g. for get_weather.")).toEqual([]);
  });
});

describe("Qwen3-Coder <function=…><parameter=…>", () => {
  const block = (body: string) => `<tool_call>\n${body}\n</tool_call>`;

  it("single call: strings raw, JSON-looking values typed, layout newlines dropped", () => {
    const text = block("<function=write_file>\n<parameter=path>\nsrc/a.ts\n</parameter>\n<parameter=overwrite>\ntrue\n</parameter>\n<parameter=content>\nline 1\nline 2\n</parameter>\n</function>");
    expect(rescue(text)).toEqual([{ tool: "write_file", args: { path: "src/a.ts", overwrite: true, content: "line 1\nline 2" } }]);
  });

  it("parallel, unicode, nested JSON values, and a missing </parameter>", () => {
    const text =
      block('<function=search>\n<parameter=q>\n東京 weather\n</parameter>\n<parameter=opts>\n{"limit": 3, "langs": ["ja"]}\n</parameter>\n</function>') +
      "\n" +
      block("<function=get_weather>\n<parameter=city>\nKyoto\n<parameter=days>\n2\n</function>");
    expect(rescue(text)).toEqual([
      { tool: "search", args: { q: "東京 weather", opts: { limit: 3, langs: ["ja"] } } },
      { tool: "get_weather", args: { city: "Kyoto", days: 2 } },
    ]);
  });

  it("several <function=…> blocks inside one <tool_call> wrapper are parallel calls", () => {
    const text = block(
      "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n</function>",
    );
    expect(rescue(text)).toEqual([
      { tool: "get_weather", args: { city: "Paris" } },
      { tool: "get_time", args: { tz: "UTC" } },
    ]);
    // a value quoting "</function>" still reads as one call
    const quoted = block("<function=write_file>\n<parameter=content>\nend </function> here\n</parameter>\n</function>");
    expect(rescue(quoted)).toEqual([{ tool: "write_file", args: { content: "end </function> here" } }]);
  });

  it("bare <function=…> without the <tool_call> wrapper, and Functionary v3.1 JSON bodies", () => {
    expect(rescue("Sure.\n<function=get_time>\n</function>")).toEqual([{ tool: "get_time", args: {} }]);
    expect(rescue('<function=get_weather>{"city": "Lima"}</function>')).toEqual([{ tool: "get_weather", args: { city: "Lima" } }]);
  });

  it("negatives: unclosed function, unknown tool, garbage body", () => {
    expect(rescue("<function=get_weather>\n<parameter=city>\nParis")).toEqual([]);
    expect(rescue("<function=format_disk>\n</function>")).toEqual([]);
    expect(rescue(block("<function=get_weather>\nplease use Paris\n</function>"))).toEqual([]);
  });
});

describe("GLM-4.5 <arg_key>/<arg_value>", () => {
  it("single, parallel, unicode and typed values", () => {
    const text =
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>" +
      '<tool_call>search\n<arg_key>q</arg_key>\n<arg_value>a "b"</arg_value>\n<arg_key>f</arg_key>\n<arg_value>{"x": [1]}</arg_value>\n</tool_call>';
    expect(rescue(text)).toEqual([
      { tool: "get_weather", args: { city: "北京", days: 3 } },
      { tool: "search", args: { q: 'a "b"', f: { x: [1] } } },
    ]);
  });

  it("no-arg call and the compact GLM-4.7 spacing", () => {
    expect(rescue("<tool_call>get_time\n</tool_call>")).toEqual([{ tool: "get_time", args: {} }]);
    expect(rescue("<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>")).toEqual([
      { tool: "get_weather", args: { city: "Oslo" } },
    ]);
  });

  it("negatives: key without value, prose inside the tag, unknown tool", () => {
    expect(rescue("<tool_call>get_weather\n<arg_key>city</arg_key>\n</tool_call>")).toEqual([]);
    expect(rescue("<tool_call>get_weather for Paris please</tool_call>")).toEqual([]);
    expect(rescue("<tool_call>launch\n<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>")).toEqual([]);
  });
});
