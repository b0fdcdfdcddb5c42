/**
 * Argument names a model chooses are data, never a way into an object's prototype: a call with
 * `__proto__`, `constructor` or `prototype` arguments, in every rescue format family, yields
 * args whose prototype is Object.prototype and whose own keys include those names (as
 * JSON.parse keeps `__proto__`), and Object.prototype is the same afterwards.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { extractToolCalls, RESCUE_FORMATS, renderToolCalls, rescueToolCall } from "../../src/parsing/index.js";

const RESERVED = ["__proto__", "constructor", "prototype"] as const;
const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

afterEach(() => {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_NAMES);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

/** Every object in `value` is an ordinary object or array (no prototype was swapped). */
function expectPlainEverywhere(value: unknown): void {
  if (typeof value !== "object" || value === null) return;
  expect(Object.getPrototypeOf(value)).toBe(Array.isArray(value) ? Array.prototype : Object.prototype);
  for (const child of Object.values(value)) expectPlainEverywhere(child);
}

/** The args of the one call read from `text`, checked plain, with `key` among their own keys. */
function argsWithOwn(calls: readonly { args: unknown }[], key: string): Record<string, unknown> {
  expect(calls).toHaveLength(1);
  const args = calls[0]!.args as Record<string, unknown>;
  expectPlainEverywhere(args);
  expect(Object.keys(args)).toContain(key);
  return args;
}

const own = (obj: Record<string, unknown>, key: string): unknown => Object.getOwnPropertyDescriptor(obj, key)?.value;

describe.each(RESERVED)("a %s argument", (key) => {
  // JSON.parse keeps "__proto__" as an own key, so it builds the args a model means.
  const args = JSON.parse(`{"city": "Paris", ${JSON.stringify(key)}: {"polluted": true, "nested": {${JSON.stringify(key)}: 1}}}`) as Record<string, unknown>;

  it.each(RESCUE_FORMATS)("stays an own key in the %s family", (format) => {
    const text = `Sure.\n${renderToolCalls([{ tool: "get_weather", args }], format)}\n`;
    const read = argsWithOwn(rescueToolCall(text, ["get_weather"]), key);
    expect(read).toEqual(args);
    expect(own(own(read, key) as Record<string, unknown>, "nested")).toEqual(JSON.parse(`{${JSON.stringify(key)}: 1}`));
  });

  // Spellings RESCUE_FORMATS does not render: Gemma's bare keys, <invoke>, DSML, ```tool_code.
  it.each([
    ["Gemma 4", `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,${key}:{polluted:true}}<tool_call|>`],
    ["FunctionGemma", `<start_function_call>call:get_weather{${key}:<escape>x<escape>,city:<escape>Paris<escape>}<end_function_call>`],
    ["Gemma 3 tool_code", "```tool_code\nget_weather(city='Paris', " + key + "={'polluted': True})\n```"],
    ["MiniMax-M2", `<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n<parameter name="${key}">{"polluted": true}</parameter>\n</invoke>\n</minimax:tool_call>`],
    ["Claude-style invoke", `<function_calls>\n<invoke name="get_weather">\n<parameter name="${key}">x</parameter>\n</invoke>\n</function_calls>`],
    ["DSML string", `<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="${key}" string="true">x</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>`],
    ["DSML JSON", `<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="${key}" string="false">{"polluted": true}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>`],
  ])("stays an own key in %s", (_family, text) => {
    argsWithOwn(rescueToolCall(text, ["get_weather"]), key);
  });

  it.each(["qwen_coder", "glm"] as const)("stays an own key when %s text values are typed from a schema that declares it", (format) => {
    const schemas = JSON.parse(`{"get_weather": {"type": "object", "properties": {"city": {"type": "string"}, ${JSON.stringify(key)}: {"type": "object"}}}}`) as Record<string, unknown>;
    const text = renderToolCalls([{ tool: "get_weather", args }], format);
    const read = argsWithOwn(extractToolCalls(text, ["get_weather"], schemas).toolCalls, key);
    expect(read).toEqual(args);
  });
});

describe("reserved argument names (fast-check)", () => {
  const name = fc.oneof(fc.constantFrom(...RESERVED), fc.constantFrom("city", "days", "q"));
  // Object.fromEntries defines own keys, "__proto__" included.
  const objectOf = <T>(value: fc.Arbitrary<T>) => fc.uniqueArray(fc.tuple(name, value), { selector: ([k]) => k, maxLength: 3 }).map((e) => Object.fromEntries(e));
  const leaf = fc.oneof(fc.string({ unit: fc.constantFrom(..."abc xyz"), maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null));
  const args = objectOf(fc.oneof(leaf, fc.array(leaf, { maxLength: 2 }), objectOf(leaf)));

  it.each(RESCUE_FORMATS)("%s: args with any mix of them parse back equal and plain", (format) => {
    fc.assert(
      fc.property(args, (a) => {
        const calls = rescueToolCall(renderToolCalls([{ tool: "get_weather", args: a }], format), ["get_weather"]);
        expect(calls.map((c) => c.args)).toEqual([a]);
        expectPlainEverywhere(calls[0]!.args);
      }),
      { numRuns: 60, seed: 20260611 },
    );
  });
});
