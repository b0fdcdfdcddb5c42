/**
 * Variants of the newer families as servers see them in the wild (shapes taken from vLLM's
 * tool-parser tests and llama.cpp's chat parsers): Gemma 4's slips and thought channel, Gemma 3
 * ```tool_code, DSML / MiniMax-M2 / Seed-OSS / Hunyuan replies with their reasoning, R1-distill
 * token spellings, Command R7B; schema typing per format; round trips and no-false-positive
 * properties over the new formats.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractToolCalls, renderToolCalls, rescueToolCall, splitReasoning } from "../../src/parsing/index.js";
import { looksLikeToolCall } from "../../src/parsing/call-markers.js";
import { coerceText } from "../../src/parsing/schema-args.js";
import { encodeTaggedValue } from "../../src/parsing/tagged-value.js";
import { rescue, TOOLS } from "./helpers.js";

const TOOLS_BASH = [...TOOLS, "bash"];
// The format family is checked in rescue.test.ts; here: calls, content and reasoning.
const extract = (text: string, schemas?: Record<string, unknown>, tools: readonly string[] = TOOLS_BASH) => withoutFormat(extractToolCalls(text, tools, schemas));
const withoutFormat = <T extends { format?: string }>({ format: _format, ...rest }: T) => rest;

describe("Gemma 4 as it really ends and slips", () => {
  it("the <|tool_response> stop token after <tool_call|> is framing", () => {
    expect(extract('Checking.<|tool_call>call:search{query:<|"|>cows<|"|>,limit:2}<tool_call|><|tool_response>')).toEqual({
      toolCalls: [{ tool: "search", args: { query: "cows", limit: 2 } }],
      content: "Checking.",
    });
  });
  it("<turn|> instead of <tool_call|>, a stray colon, and the end token eaten at the end of the reply", () => {
    expect(rescue('<|tool_call>call:bash{command:<|"|>ls -la /work<|"|>}<turn|>', TOOLS_BASH)).toEqual([{ tool: "bash", args: { command: "ls -la /work" } }]);
    expect(rescue('<|tool_call>:call:bash{command:<|"|>pytest<|"|>}<tool_call|>', TOOLS_BASH)).toEqual([{ tool: "bash", args: { command: "pytest" } }]);
    expect(rescue('<|tool_call>call:get_time{}\n', TOOLS_BASH)).toEqual([{ tool: "get_time", args: {} }]);
    // Two calls, the first missing its end token: the next start token ends it.
    expect(rescue('<|tool_call>call:get_time{}<|tool_call>call:search{query:<|"|>x<|"|>}<tool_call|>')).toEqual([
      { tool: "get_time", args: {} },
      { tool: "search", args: { query: "x" } },
    ]);
  });
  it("the thought channel is reasoning; a bare call:NAME{…} right after it is read (known tools only)", () => {
    const text = '<|channel>thought\nI need to read the entry file. Maybe <|tool_call>call:get_time{}<tool_call|> first?\n<channel|>call:bash{command:<|"|>cat /work/src/entry.c<|"|>}';
    expect(extract(text)).toEqual({
      toolCalls: [{ tool: "bash", args: { command: "cat /work/src/entry.c" } }],
      content: "",
      reasoning: "I need to read the entry file. Maybe <|tool_call>call:get_time{}<tool_call|> first?",
    });
    expect(rescue('some prose\ncall:bash{command:<|"|>make -j8<|"|>}', TOOLS_BASH)).toEqual([{ tool: "bash", args: { command: "make -j8" } }]);
  });
  it("bare negatives: unknown tool, mid-line, trailing prose, no start token and no tools", () => {
    expect(rescue('call:rm_rf{path:<|"|>/<|"|>}', TOOLS_BASH)).toEqual([]);
    expect(rescue('To call it, write call:bash{command:<|"|>ls<|"|>}', TOOLS_BASH)).toEqual([]);
    expect(rescue('call:bash{command:<|"|>ls<|"|>} is the syntax', TOOLS_BASH)).toEqual([]);
    expect(rescue('call:bash{command:<|"|>ls<|"|>}', [])).toEqual([]);
    expect(rescue("call:search{the usual}", TOOLS_BASH)).toEqual([]);
  });
});

describe("Gemma 3 ```tool_code fences", () => {
  it("keyword calls, one a line, values as Python literals", () => {
    const text = 'I will look that up.\n```tool_code\nget_weather(city="Paris", days=2, metric=True)\nsearch(q=\'a "b"\', tags=["x", None])\n```';
    expect(extract(text)).toEqual({
      toolCalls: [
        { tool: "get_weather", args: { city: "Paris", days: 2, metric: true } },
        { tool: "search", args: { q: 'a "b"', tags: ["x", null] } },
      ],
      content: "I will look that up.",
    });
  });
  it("negatives: positional args, other code, other fence labels, an unclosed fence", () => {
    expect(rescue('```tool_code\nget_weather("Paris")\n```')).toEqual([]);
    expect(rescue("```tool_code\nx = get_time()\n```")).toEqual([]);
    expect(rescue('```python\nget_weather(city="Paris")\n```')).toEqual([]);
    expect(rescue('```tool_code\nget_weather(city="Paris")')).toEqual([]);
  });
});

describe("DeepSeek V3.2 DSML, as vLLM's parser documents it", () => {
  const invoke = (name: string, params: string) => `<｜DSML｜invoke name="${name}">\n${params}</｜DSML｜invoke>\n`;
  const param = (name: string, str: boolean, v: string) => `<｜DSML｜parameter name="${name}" string="${str}">${v}</｜DSML｜parameter>\n`;
  it("two invokes after reasoning; string=\"false\" values are typed from the schema, string=\"true\" never are", () => {
    const text =
      "<think>两个城市的天气</think>我来查一下。\n\n<｜DSML｜function_calls>\n" +
      invoke("get_weather", param("location", true, "杭州") + param("date", true, "2024-01-16") + param("days", false, "3")) +
      invoke("get_weather", param("location", true, "北京") + param("zip", false, "100000")) +
      "</｜DSML｜function_calls>";
    const schemas = { get_weather: { type: "object", properties: { days: { type: "integer" }, zip: { type: "string" }, location: { type: "string" } } } };
    expect(extract(text, schemas)).toEqual({
      toolCalls: [
        { tool: "get_weather", args: { location: "杭州", date: "2024-01-16", days: 3 } },
        { tool: "get_weather", args: { location: "北京", zip: "100000" } },
      ],
      content: "我来查一下。",
      reasoning: "两个城市的天气",
    });
    // Without schemas string="false" is JSON.
    expect(rescue(text)[1]).toEqual({ tool: "get_weather", args: { location: "北京", zip: 100000 } });
  });
  it("negatives: unclosed function_calls with an unclosed invoke, ASCII bars are not DSML", () => {
    expect(rescue('<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_time">\n')).toEqual([]);
    expect(rescue('<|DSML|invoke name="get_time"></|DSML|invoke>')).toEqual([]);
  });
});

describe("MiniMax-M2, Seed-OSS, Hunyuan-A13B replies with their reasoning", () => {
  it("MiniMax-M2 parallel invokes; values typed from the schema", () => {
    const text =
      '<think>\nCompare two cities.\n</think>\n\n<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Seattle</parameter>\n<parameter name="days">5</parameter>\n</invoke>\n' +
      '<invoke name="search">\n<parameter name="q">if a < b && c > "d"</parameter>\n<parameter name="limit">10</parameter>\n</invoke>\n</minimax:tool_call>';
    const schemas = { get_weather: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } } }, search: { type: "object", properties: { q: { type: "string" }, limit: { type: "string" } } } };
    expect(extract(text, schemas)).toEqual({
      toolCalls: [
        { tool: "get_weather", args: { city: "Seattle", days: 5 } },
        { tool: "search", args: { q: 'if a < b && c > "d"', limit: "10" } },
      ],
      content: "",
      reasoning: "Compare two cities.",
    });
  });
  it("Seed-OSS: <seed:think> (with its budget notes and an example call) is reasoning; the real call follows", () => {
    const text =
      "<seed:think>The user's current thinking budget is 512.</seed:cot_budget_reflect>\nThe format is <seed:tool_call>\n<function=get_weather>\n<parameter=location>X</parameter>\n</function>\n</seed:tool_call>.\n" +
      "<seed:cot_budget_reflect>I have used 131 tokens, and there are 381 tokens remaining for use.</seed:cot_budget_reflect></seed:think>\n" +
      '<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n<parameter=days>\n2\n</parameter>\n<parameter=note>say "hi" & use <b>bold</b></parameter>\n</function>\n</seed:tool_call>';
    const schemas = { get_weather: { type: "object", properties: { location: { type: "string" }, days: { type: "integer" }, note: { type: "string" } } } };
    const r = extract(text, schemas);
    expect(r.toolCalls).toEqual([{ tool: "get_weather", args: { location: "Barcelona, Spain", days: 2, note: 'say "hi" & use <b>bold</b>' } }]);
    expect(r.content).toBe("");
    expect(r.reasoning).toContain("thinking budget is 512");
  });
  it("Hunyuan-A13B: <think> then <answer><tool_calls>[…]</tool_calls></answer>; the empty answer goes too", () => {
    const text =
      '<think>\nThe user needs the weather.\n</think>\n<answer>\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "北京"}}, {"name": "search", "arguments": {"q": "x", "f": {"role": null, "passed": true, "aliases": ["John", "Johnny"]}}}]</tool_calls>\n</answer>';
    expect(extract(text)).toEqual({
      toolCalls: [
        { tool: "get_weather", args: { city: "北京" } },
        { tool: "search", args: { q: "x", f: { role: null, passed: true, aliases: ["John", "Johnny"] } } },
      ],
      content: "",
      reasoning: "The user needs the weather.",
    });
    expect(extract("<answer>\nIt is sunny.\n</answer>").content).toBe("<answer>\nIt is sunny.\n</answer>");
  });
});

describe("DeepSeek R1-distill spellings (the variants llama.cpp accepts, and more)", () => {
  const call = (begin = "<｜tool▁call▁begin｜>") => `${begin}function<｜tool▁sep｜>get_weather\n\`\`\`json\n{"city": "Paris"}\n\`\`\`<｜tool▁call▁end｜>`;
  it.each([
    ["<｜tool▁calls▁begin｜>", "canonical"],
    ["<｜tool_calls_begin｜>", "underscores"],
    ["<｜tool calls begin｜>", "spaces"],
    ["<｜tool\\_calls\\_begin｜>", "escaped underscores"],
    ["<｜tool▁calls｜>", "no begin word"],
  ])("section opener %s (%s) is read and cut from the content", (opener) => {
    expect(extract(`Let me check.\n${opener}${call()}<｜tool▁calls▁end｜>`, undefined, TOOLS)).toEqual({
      toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }],
      content: "Let me check.",
    });
  });
  it("no per-call begin token; no `function` type; ASCII bars; underscores throughout", () => {
    expect(rescue(`<｜tool▁calls▁begin｜>${call("")}<｜tool▁calls▁end｜>`)).toEqual([{ tool: "get_weather", args: { city: "Paris" } }]);
    expect(rescue('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜><｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>')).toEqual([{ tool: "get_time", args: {} }]);
    expect(rescue('<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>get_time\n```json\n{}\n```<|tool▁call▁end|><|tool▁calls▁end|>')).toEqual([{ tool: "get_time", args: {} }]);
    expect(rescue('<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>get_time\n```json\n{}\n```<｜tool_call_end｜><｜tool_calls_end｜>')).toEqual([{ tool: "get_time", args: {} }]);
  });
  it("negatives: a header without its end token, prose about the tokens", () => {
    expect(rescue('function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```')).toEqual([]);
    expect(rescue("R1 writes function<｜tool▁sep｜> before the tool name.")).toEqual([]);
  });
});

describe("Command R7B", () => {
  it("reasoning with a leading …<|END_THINKING|> (opener in the prompt), then the action", () => {
    const text = 'i will call get_weather with Paris<|END_THINKING|><|START_ACTION|>\n[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},\n    {"tool_call_id": "1", "tool_name": "get_time", "parameters": {}}\n]\n<|END_ACTION|>';
    expect(extract(text, undefined, TOOLS)).toEqual({
      toolCalls: [
        { tool: "get_weather", args: { city: "Paris" }, id: "0" },
        { tool: "get_time", args: {}, id: "1" },
      ],
      content: "",
      reasoning: "i will call get_weather with Paris",
    });
  });
});

describe("splitReasoning: the new reasoning delimiters", () => {
  it("<seed:think>, Gemma 4's thought channel, <|START_THINKING|>", () => {
    expect(splitReasoning("<seed:think>plan</seed:think>Answer")).toEqual({ content: "Answer", reasoning: "plan" });
    expect(splitReasoning("<|channel>thought\nplan<channel|>Answer")).toEqual({ content: "Answer", reasoning: "plan" });
    expect(splitReasoning("<|START_THINKING|>plan<|END_THINKING|><|START_RESPONSE|>Hi<|END_RESPONSE|>").reasoning).toBe("plan");
  });
});

describe("schema typing, per value", () => {
  it("numbers must be decimal; booleans and null are case-blind; strings stay verbatim", () => {
    expect(coerceText("0x10", { type: "integer" })).toBe("0x10");
    expect(coerceText("1e3", { type: "number" })).toBe(1000);
    expect(coerceText(" -2.5 ", { type: "number" })).toBe(-2.5);
    expect(coerceText("FALSE", { type: "boolean" })).toBe(false);
    expect(coerceText("None", { type: ["string", "null"] })).toBe(null);
    expect(coerceText("None", { type: "string" })).toBe("None");
    expect(coerceText('{"a": 1}', { type: "string" })).toBe('{"a": 1}');
    expect(coerceText('"hi"', { type: "string" })).toBe('"hi"'); // the model's quotes are its text
  });
  it("a string our own renderer JSON-encoded reads back as that string", () => {
    for (const s of ["a < b", "123", "true", '"quoted"', "null", "</parameter>"]) {
      expect(coerceText(encodeTaggedValue(s), { type: "string" })).toBe(s);
    }
  });
  it("rendered Qwen3-Coder and GLM calls read back exactly under their schema", () => {
    const args = { code: "if a < b: pass", zip: "02134", n: 3, on: false, tags: ["x"], opt: null };
    const schema = { type: "object", properties: { code: { type: "string" }, zip: { type: "string" }, n: { type: "integer" }, on: { type: "boolean" }, tags: { type: "array" }, opt: { type: ["object", "null"] } } };
    for (const format of ["qwen_coder", "glm"] as const) {
      expect(rescueToolCall(renderToolCalls([{ tool: "search", args }], format), TOOLS, { search: schema })).toEqual([{ tool: "search", args }]);
    }
  });
  it("only text-carried values are retyped: JSON formats keep the model's types", () => {
    const schema = { search: { type: "object", properties: { q: { type: "string" } } } };
    expect(rescueToolCall('<tool_call>{"name": "search", "arguments": {"q": 42}}</tool_call>', TOOLS, schema)).toEqual([{ tool: "search", args: { q: 42 } }]);
    expect(rescueToolCall('<|tool_call>call:search{q:42}<tool_call|>', TOOLS, schema)).toEqual([{ tool: "search", args: { q: 42 } }]);
  });
  it("schemas that are not objects, or name other tools, change nothing", () => {
    const text = "<function=search>\n<parameter=q>\n42\n</parameter>\n</function>";
    for (const schemas of [{}, { search: null }, { search: "x" }, { get_time: { type: "object", properties: { q: { type: "string" } } } }]) {
      expect(rescueToolCall(text, TOOLS, schemas)).toEqual([{ tool: "search", args: { q: 42 } }]);
    }
  });
});

describe("the proxy's call-attempt check knows the new markers", () => {
  it.each([
    ['<|tool_call>call:get_weather{city:<|"|>Par', "Gemma 4 cut off"],
    ['call:get_weather{city:<|"|>Paris', "Gemma 4 without its start token"],
    ["```tool_code\nget_weather(city=", "Gemma 3"],
    ['<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">', "DSML"],
    ["<｜tool calls begin｜>function", "R1 distill opener"],
    ["<|tool▁calls▁begin|>", "R1 distill ASCII bars"],
    ['<minimax:tool_call>\n<invoke name="get_weather">', "MiniMax-M2"],
    ["<seed:tool_call>\n<function=get_weather>", "Seed-OSS"],
  ])("%j → true (%s)", (text) => {
    expect(looksLikeToolCall(text, ["get_weather"])).toBe(true);
  });
  it("a tool name after call: that is not on offer, or prose, is not an attempt", () => {
    expect(looksLikeToolCall("call:other{x:1}", ["get_weather"])).toBe(false);
    expect(looksLikeToolCall("Call get_weather{} when needed.", ["get_weather"])).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const LOWER = [..."abcdefghijklmnopqrstuvwxyz_"];
const ident = fc
  .tuple(fc.constantFrom(...LOWER), fc.string({ unit: fc.constantFrom(...LOWER, ..."0123456789"), maxLength: 8 }))
  .map(([a, b]) => a + b)
  .filter((s) => !["__proto__", "constructor", "call", "function", "all"].includes(s));
// Strings with the characters these formats use for structure: quotes, braces, "<", ">", "|", ":".
const CHARS = [..."abcXYZ019 .,:;!?'\"\\/{}[]()<>|=-_\t\n&éß北京🙂"];
const str = fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 16 });
const num = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })).map((n) => (Object.is(n, -0) ? 0 : n));
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(str, num, fc.boolean(), fc.constant(null)),
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, tie("leaf"), tie("arr"), tie("obj")),
  arr: fc.array(tie("node"), { maxLength: 3 }),
  obj: fc.dictionary(ident, tie("node"), { maxKeys: 3 }),
})).node;
const args = fc.dictionary(ident, value, { maxKeys: 4 });

/** Gemma 4 value syntax, written as the model writes it. */
function gemmaValue(v: unknown): string {
  if (typeof v === "string") return `<|"|>${v}<|"|>`;
  if (v === null || typeof v !== "object") return String(v === null ? "null" : typeof v === "number" ? JSON.stringify(v) : v);
  if (Array.isArray(v)) return `[${v.map(gemmaValue).join(",")}]`;
  return `{${Object.entries(v).map(([k, x]) => `${k}:${gemmaValue(x)}`).join(",")}}`;
}

type Call = { tool: string; args: Record<string, unknown> };
const RENDER: Record<string, (calls: Call[]) => string> = {
  gemma4: (calls) => calls.map((c) => `<|tool_call>call:${c.tool}${gemmaValue(c.args)}<tool_call|>`).join("") + "<|tool_response>",
  minimax: (calls) =>
    "<minimax:tool_call>\n" +
    calls.map((c) => `<invoke name="${c.tool}">\n${Object.entries(c.args).map(([k, v]) => `<parameter name="${k}">\n${encodeTaggedValue(v)}\n</parameter>\n`).join("")}</invoke>\n`).join("") +
    "</minimax:tool_call>",
  dsml: (calls) =>
    "<｜DSML｜function_calls>\n" +
    calls
      .map((c) => {
        const params = Object.entries(c.args).map(([k, v]) =>
          typeof v === "string"
            ? `<｜DSML｜parameter name="${k}" string="true">${v}</｜DSML｜parameter>\n`
            : `<｜DSML｜parameter name="${k}" string="false">${JSON.stringify(v)}</｜DSML｜parameter>\n`,
        );
        return `<｜DSML｜invoke name="${c.tool}">\n${params.join("")}</｜DSML｜invoke>\n`;
      })
      .join("") +
    "</｜DSML｜function_calls>",
  seed: (calls) =>
    calls
      .map((c) => `<seed:tool_call>\n<function=${c.tool}>\n${Object.entries(c.args).map(([k, v]) => `<parameter=${k}>\n${encodeTaggedValue(v)}\n</parameter>\n`).join("")}</function>\n</seed:tool_call>`)
      .join("\n"),
  hunyuan: (calls) => `<tool_calls>${JSON.stringify(calls.map((c) => ({ name: c.tool, arguments: c.args })))}</tool_calls>`,
};

// Gemma strings cannot hold the quote token, DSML verbatim strings cannot hold the closing tag;
// the character set above cannot form either, nor any reasoning delimiter. MiniMax-M2 and Seed-OSS
// values carry one layout newline each side (a value's own edge newlines would be layout too).
const proseWord = (tools: string[]) =>
  fc.oneof(fc.string({ unit: fc.constantFrom(..."AbcdeXyz0189"), minLength: 1, maxLength: 8 }), fc.constantFrom(...tools), fc.constantFrom(".", ",", "!", "?", ":", "(", ")", "é", "🙂"));
const prose = (tools: string[]) => fc.array(proseWord(tools), { maxLength: 10 }).map((w) => w.join(" "));

const scenario = fc
  .uniqueArray(ident, { minLength: 1, maxLength: 3 })
  .chain((tools) =>
    fc.record({
      tools: fc.constant(tools),
      calls: fc.array(fc.record({ tool: fc.constantFrom(...tools), args }), { minLength: 1, maxLength: 3 }),
      before: prose(tools),
      after: prose(tools),
    }),
  );

describe("new formats round-trip (fast-check)", () => {
  for (const [format, render] of Object.entries(RENDER)) {
    it(`${format}: rendered calls in prose parse back, and nothing else is left`, () => {
      fc.assert(
        fc.property(scenario, ({ tools, calls, before, after }) => {
          const text = `${before}\n${render(calls)}\n${after}`;
          const r = extractToolCalls(text, tools);
          expect(r.toolCalls.map(({ tool, args: a }) => ({ tool, args: a }))).toEqual(calls);
          expect(r.content).toBe(`${before}\n\n${after}`.replace(/\n{3,}/g, "\n\n").trim());
        }),
        { numRuns: 150, seed: 20261123 },
      );
    });
  }
});

describe("no false positives over the new markers (fast-check)", () => {
  const MARKERS = [
    "<|tool_call>", "<tool_call|>", "<turn|>", "<|tool_response>", '<|"|>', "call:", "```tool_code", "```",
    "<｜DSML｜function_calls>", '<｜DSML｜invoke name="', '<｜DSML｜parameter name="', 'string="false">', "</｜DSML｜invoke>",
    "<minimax:tool_call>", '<invoke name="', '<parameter name="', "</parameter>", "</invoke>",
    "<seed:tool_call>", "<function=", "<parameter=", "</function>", "<tool_calls>", "</tool_calls>", "<answer>",
    "<｜tool calls begin｜>", "function<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<|START_ACTION|>", "<|END_ACTION|>", ">>>",
    "{", "}", "[", "]", "(", ")", "=", ":", ",", '"', "\n",
  ];
  it("prose that mentions the tools and scatters markers between words yields no call", () => {
    // Markers are separated by spaces, so no marker sequence forms a call's exact syntax.
    const text = (tools: string[]) =>
      fc.array(fc.oneof(proseWord(tools), fc.constantFrom(...MARKERS)), { maxLength: 30 }).map((w) => w.join(" "));
    fc.assert(
      fc.property(fc.uniqueArray(ident, { minLength: 1, maxLength: 3 }).chain((tools) => fc.tuple(fc.constant(tools), text(tools))), ([tools, t]) => {
        const schemas = Object.fromEntries(tools.map((n) => [n, { type: "object", properties: {} }]));
        expect(rescueToolCall(t, tools, schemas)).toEqual([]);
      }),
      { numRuns: 500, seed: 20261123 },
    );
  });
});
