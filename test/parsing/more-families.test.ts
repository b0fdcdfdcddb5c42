/**
 * Call formats of newer families (Gemma 4 / FunctionGemma, DeepSeek V3.2 DSML, MiniMax-M2,
 * Hunyuan-A13B, Seed-OSS, Functionary v3.2 without the leading ">>>", R1-distill token
 * spellings, Command R7B thinking) and schema typing of text-only values. Each family: real
 * output shapes, what is cut from the visible text, and negatives.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractToolCalls, rescueToolCall } from "../../src/parsing/index.js";
import { looksLikeToolCall } from "../../src/parsing/call-markers.js";
import { coerceText } from "../../src/parsing/schema-args.js";
import { rescue, TOOLS } from "./helpers.js";

// The format family is checked in rescue.test.ts; here: calls, content and reasoning.
const extract = (text: string, schemas?: Record<string, unknown>) => withoutFormat(extractToolCalls(text, TOOLS, schemas));
const withoutFormat = <T extends { format?: string }>({ format: _format, ...rest }: T) => rest;

describe("Gemma 4 <|tool_call>call:name{…}<tool_call|>", () => {
  it("typed values, nested objects and arrays, quote tokens around strings, parallel blocks", () => {
    const text =
      'I will check both.<|tool_call>call:get_weather{city:<|"|>São Paulo, "SP"<|"|>,days:3,metric:true,extra:{hours:[6,12],note:null}}<tool_call|>' +
      '<|tool_call>call:get_time{zone:<|"|>America/Sao_Paulo<|"|>}<tool_call|>';
    expect(extract(text)).toEqual({
      toolCalls: [
        { tool: "get_weather", args: { city: 'São Paulo, "SP"', days: 3, metric: true, extra: { hours: [6, 12], note: null } } },
        { tool: "get_time", args: { zone: "America/Sao_Paulo" } },
      ],
      content: "I will check both.",
    });
  });
  it("a string holding braces, commas and the end tag itself", () => {
    expect(rescue('<|tool_call>call:write_file{path:<|"|>a.txt<|"|>,content:<|"|>{x}, <tool_call|> y<|"|>}<tool_call|>')).toEqual([
      { tool: "write_file", args: { path: "a.txt", content: "{x}, <tool_call|> y" } },
    ]);
  });
  it("FunctionGemma spelling: <escape> quotes and bare words", () => {
    expect(rescue("<start_function_call>call:write_file{path:/tmp/a.txt,content:<escape>hi, there<escape>}<end_function_call>")).toEqual([
      { tool: "write_file", args: { path: "/tmp/a.txt", content: "hi, there" } },
    ]);
  });
  it("negatives: truncated, unclosed before prose, malformed body, unknown tool stays visible, prose about the tag", () => {
    expect(rescue('<|tool_call>call:get_weather{city:<|"|>Par')).toEqual([]);
    expect(rescue('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>} is what I would send')).toEqual([]);
    expect(rescue("<|tool_call>call:get_weather{city:}<tool_call|>")).toEqual([]);
    expect(extract("<|tool_call>call:nuke{}<tool_call|>").content).toBe("<|tool_call>call:nuke{}<tool_call|>");
    expect(rescue("Gemma writes <|tool_call> before a call: get_weather is one.")).toEqual([]);
  });
});

describe("<invoke name=…>: DeepSeek V3.2 DSML, MiniMax-M2, Claude-style", () => {
  const dsml = (body: string) => `<｜DSML｜function_calls>\n${body}\n</｜DSML｜function_calls>`;
  it("DSML: string=\"true\" kept exactly, string=\"false\" read as JSON, parallel invokes, wrapper cut", () => {
    const text =
      "Let me look.\n\n" +
      dsml(
        '<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="q" string="true">"42" is the answer</｜DSML｜parameter>\n<｜DSML｜parameter name="n" string="false">{"m": [1, 2]}</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
          '<｜DSML｜invoke name="get_time">\n</｜DSML｜invoke>',
      );
    expect(extract(text)).toEqual({
      toolCalls: [
        { tool: "search", args: { q: '"42" is the answer', n: { m: [1, 2] } } },
        { tool: "get_time", args: {} },
      ],
      content: "Let me look.",
    });
  });
  it("DSML invoke with a JSON body", () => {
    expect(rescue(dsml('<｜DSML｜invoke name="get_weather">{"city": "Paris"}</｜DSML｜invoke>'))).toEqual([{ tool: "get_weather", args: { city: "Paris" } }]);
  });
  it("MiniMax-M2, after its <think> block", () => {
    const text =
      "<think>The user wants Paris weather.</think>\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n</minimax:tool_call>";
    expect(extract(text)).toEqual({ toolCalls: [{ tool: "get_weather", args: { city: "Paris", days: 3 } }], content: "", reasoning: "The user wants Paris weather." });
  });
  it("Claude-style <function_calls>", () => {
    expect(rescue('<function_calls>\n<invoke name="search">\n<parameter name="q">cats & dogs</parameter>\n</invoke>\n</function_calls>')).toEqual([{ tool: "search", args: { q: "cats & dogs" } }]);
  });
  it("negatives: unclosed invoke, stray text, a call inside reasoning", () => {
    expect(rescue('<invoke name="search">\n<parameter name="q">x</parameter>')).toEqual([]);
    expect(rescue('<invoke name="search">hello <parameter name="q">x</parameter></invoke>')).toEqual([]);
    expect(rescue('<think><invoke name="search"><parameter name="q">x</parameter></invoke></think>Done.')).toEqual([]);
  });
});

describe("wrappers and spellings that were already half-read", () => {
  it("Hunyuan-A13B <tool_calls>[…]</tool_calls>: calls read, wrapper cut", () => {
    expect(extract('Sure.\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]</tool_calls>')).toEqual({
      toolCalls: [
        { tool: "get_weather", args: { city: "Paris" } },
        { tool: "get_time", args: {} },
      ],
      content: "Sure.",
    });
  });
  it("Seed-OSS <seed:tool_call>: values with quotes and '<' survive, wrapper cut", () => {
    const text = '<seed:tool_call>\n<function=write_file>\n<parameter=path>a.html</parameter>\n<parameter=content><p class="x">"hi"</p></parameter>\n</function>\n</seed:tool_call>';
    expect(extract(text)).toEqual({ toolCalls: [{ tool: "write_file", args: { path: "a.html", content: '<p class="x">"hi"</p>' } }], content: "" });
  });
  it("Functionary v3.2: the first call without >>> (a known tool only), then >>> calls", () => {
    expect(rescue('get_weather\n{"city": "Paris"}\n>>>get_time\n{}')).toEqual([
      { tool: "get_weather", args: { city: "Paris" } },
      { tool: "get_time", args: {} },
    ]);
    expect(rescue('Weather\n{"city": "Paris"}')).toEqual([]);
    expect(rescue('get_weather {"city": "Paris"} is what I would send')).toEqual([]); // same line: prose
  });
  it("R1 distills: ASCII bars with ▁, and the name before <tool▁sep>", () => {
    expect(rescue('<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>get_weather\n```json\n{"city": "Paris"}\n```<|tool▁call▁end|><|tool▁calls▁end|>')).toEqual([
      { tool: "get_weather", args: { city: "Paris" } },
    ]);
    expect(extract('<|tool▁calls▁begin|><|tool▁call▁begin|>get_time<|tool▁sep|>{}<|tool▁call▁end|><|tool▁calls▁end|>').content).toBe("");
  });
  it("Command R7B: <|START_THINKING|> is reasoning, and a call inside it is not rescued", () => {
    const text = '<|START_THINKING|>I could call get_time.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>';
    expect(extract(text)).toEqual({ toolCalls: [{ tool: "get_weather", args: { city: "Paris" }, id: "0" }], content: "", reasoning: "I could call get_time." });
    expect(rescue('<|START_THINKING|><|START_ACTION|>[{"tool_name": "get_time", "parameters": {}}]<|END_ACTION|><|END_THINKING|>Hi.')).toEqual([]);
  });
  it("the proxy sees the new markers as call attempts", () => {
    for (const marker of ["<start_function_call>", '<invoke name="x">', "<function_calls>", "<|tool▁call▁begin|>", "<parameter=x>"]) {
      expect(looksLikeToolCall(`${marker} broken`, ["get_weather"])).toBe(true);
    }
  });
});

describe("schema typing of text-only values", () => {
  const schemas = {
    search: { type: "object", properties: { q: { type: "string" }, n: { type: "integer" }, exact: { type: "boolean" }, tags: { type: "array" }, opts: { type: ["object", "null"] }, ratio: { type: "number" } } },
  };
  it("Qwen3-Coder: a string-typed '42' stays a string; integer, boolean, array, object, null are parsed", () => {
    const text =
      "<tool_call>\n<function=search>\n<parameter=q>\n42\n</parameter>\n<parameter=n>\n7\n</parameter>\n<parameter=exact>\nTrue\n</parameter>\n" +
      '<parameter=tags>\n["a", "b"]\n</parameter>\n<parameter=opts>\nnull\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n</function>\n</tool_call>';
    expect(rescueToolCall(text, TOOLS, schemas)).toEqual([{ tool: "search", args: { q: "42", n: 7, exact: true, tags: ["a", "b"], opts: null, ratio: 0.5 } }]);
    // Without a schema the schema-free reading applies (JSON-looking text becomes JSON).
    expect(rescueToolCall(text, TOOLS)).toEqual([{ tool: "search", args: { q: 42, n: 7, exact: "True", tags: ["a", "b"], opts: null, ratio: 0.5 } }]);
  });
  it("GLM and MiniMax values are typed the same way; DSML string=\"true\" is never re-typed", () => {
    const glm = "<tool_call>search\n<arg_key>q</arg_key>\n<arg_value>007</arg_value>\n<arg_key>n</arg_key>\n<arg_value>3</arg_value>\n</tool_call>";
    expect(rescueToolCall(glm, TOOLS, schemas)).toEqual([{ tool: "search", args: { q: "007", n: 3 } }]);
    const mm = '<minimax:tool_call><invoke name="search"><parameter name="q">true</parameter><parameter name="exact">false</parameter></invoke></minimax:tool_call>';
    expect(rescueToolCall(mm, TOOLS, schemas)).toEqual([{ tool: "search", args: { q: "true", exact: false } }]);
  });
  it("a value that fits none of its types keeps the schema-free reading (the validator reports it)", () => {
    expect(coerceText("seven", { type: "integer" })).toBe("seven");
    expect(coerceText("3.5", { type: "integer" })).toBe(3.5);
    expect(coerceText(" 12 ", { anyOf: [{ type: "integer" }, { type: "string" }] })).toBe(12);
    expect(coerceText("red", { enum: ["red", "blue"] })).toBe("red");
  });
  it("the validator passes the tools' schemas to rescue", async () => {
    const { validateResponse } = await import("../../src/guardrails/response-validator.js");
    const { defineTool } = await import("../../src/core/tool.js");
    const { z } = await import("zod");
    const lookup = defineTool({ name: "lookup", description: "d", parameters: z.object({ zip: z.string(), n: z.number().int() }), execute: () => 1 });
    const r = validateResponse({ type: "text", content: "<function=lookup>\n<parameter=zip>\n02134\n</parameter>\n<parameter=n>\n2\n</parameter>\n</function>" }, { tools: { lookup } });
    expect(r).toMatchObject({ kind: "calls", rescued: true, calls: [{ tool: "lookup", args: { zip: "02134", n: 2 } }] });
  });
});

describe("no false positives (fast-check)", () => {
  const tools = [...TOOLS];
  const word = fc.oneof(
    fc.constantFrom(...tools, "call:", "name=", "invoke", "parameter", "string=\"true\"", "<escape>", '<|"|>', "{", "}", ":", ",", "\n", "the", "Paris", "42"),
    fc.constantFrom("<|tool_call>", "<tool_call|>", "<start_function_call>", "<minimax:tool_call>", "<｜DSML｜function_calls>", "<seed:tool_call>", "<tool_calls>", "<|START_THINKING|>"),
  );
  it("prose built from the new formats' own words and markers, unclosed, yields no call", () => {
    fc.assert(
      fc.property(fc.array(word, { maxLength: 30 }), (words) => {
        const text = words.join(" ");
        // Nothing here closes a block ("<tool_call|>" alone has no opener before a complete call body).
        fc.pre(!/<\|tool_call>\s*call:\w+\{[^]*\}\s*<tool_call\|>/.test(text));
        expect(rescueToolCall(text, tools)).toEqual([]);
      }),
      { numRuns: 500, seed: 20261122 },
    );
  });
});
