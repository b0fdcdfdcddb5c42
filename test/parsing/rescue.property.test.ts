/**
 * Round-trip properties over every rescue format: a call rendered in any format and embedded in
 * random prose parses back to the same call; prose alone yields [].
 *
 * Representation limits built into the generators (documented in the parsing README):
 * - argument keys are identifiers (pythonic kwargs, <parameter=k>, <arg_key> need them);
 * - numbers are finite and not -0 (JSON has neither);
 * - strings never contain reasoning delimiters (<think>, </think>, [THINK], [/THINK], Harmony
 *   analysis headers): reasoning is split off before any call is read, by design.
 * Strings do include quotes, backslashes, newlines, unicode and other formats' call markup.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RESCUE_FORMATS, renderToolCalls, rescueToolCall, supportsParallel } from "../../src/parsing/index.js";

const RESERVED = new Set(["all", "function", "functools", "__proto__", "constructor", "True", "False", "None"]);
const LOWER = [..."abcdefghijklmnopqrstuvwxyz_"];
const ident = fc
  .tuple(fc.constantFrom(...LOWER), fc.string({ unit: fc.constantFrom(...LOWER, ..."0123456789"), maxLength: 10 }))
  .map(([a, b]) => a + b)
  .filter((s) => !RESERVED.has(s));
// Mixed alphabet: ASCII, punctuation, accents, CJK, emoji (surrogate pairs), controls.
const CHARS = [..."abcXYZ019 .,:;!?'\"\\/{}[]()<>|=-_\t\n\réüßΩ北京東京Ж", "🙂", "👍🏽", "\u0000", "\u2028"];

const MARKUP = [
  "</tool_call>", "<tool_call>", "[TOOL_CALLS]", "[ARGS]", "```", "<|call|>", "<|end|>", "<|start|>",
  "</parameter>", "</arg_value>", "<|tool_call_end|>", "<｜tool▁call▁end｜>", ">>>", "Action:", '{"', "[{", "\\", '"', "\n",
];
const str = fc.oneof(
  fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 20 }),
  fc.array(fc.oneof(fc.constantFrom(...MARKUP), fc.string({ maxLength: 4 })), { maxLength: 6 }).map((a) => a.join("")),
);
const num = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })).map((n) => (Object.is(n, -0) ? 0 : n));
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(str, num, fc.boolean(), fc.constant(null)),
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, tie("leaf"), tie("arr"), tie("obj")),
  arr: fc.array(tie("node"), { maxLength: 3 }),
  obj: fc.dictionary(ident, tie("node"), { maxKeys: 3 }),
})).node;
const args = fc.dictionary(ident, value, { maxKeys: 4 });

// Prose: no call markup, but it mentions tool names and uses everyday punctuation.
const proseWord = (tools: string[]) =>
  fc.oneof(
    fc.string({ unit: fc.constantFrom(..."AbcdeXyzÀÿ0189"), minLength: 1, maxLength: 8 }),
    fc.constantFrom(...tools),
    fc.constantFrom(".", ",", "!", "?", "—", "'", "(", ")", ":", "é", "日本", "🙂"),
  );
const prose = (tools: string[]) => fc.array(proseWord(tools), { maxLength: 12 }).map((w) => w.join(" "));
// Noisier prose for the no-call property: brackets, braces, quotes and markup fragments too.
const noisyProse = (tools: string[]) =>
  fc
    .array(fc.oneof(proseWord(tools), fc.constantFrom("[", "]", "{", "}", '"', "=", "`", "<", ">", "|", "[ARGS]", "to=functions.")), { maxLength: 20 })
    .map((w) => w.join(" "));

const scenario = fc
  .uniqueArray(ident, { minLength: 1, maxLength: 4 })
  .chain((tools) =>
    fc.record({
      tools: fc.constant(tools),
      calls: fc.array(fc.record({ tool: fc.constantFrom(...tools), args }), { minLength: 1, maxLength: 3 }),
      before: prose(tools),
      after: prose(tools),
    }),
  );

describe("rescue round trip (fast-check)", () => {
  for (const format of RESCUE_FORMATS) {
    it(`${format}: rendered calls in prose parse back`, () => {
      fc.assert(
        fc.property(scenario, ({ tools, calls, before, after }) => {
          const batch = supportsParallel(format) ? calls : calls.slice(0, 1);
          const text = `${before}\n${renderToolCalls(batch, format)}\n${after}`;
          const parsed = rescueToolCall(text, tools).map(({ tool, args: a }) => ({ tool, args: a }));
          expect(parsed).toEqual(batch);
        }),
        { numRuns: 200, seed: 20261122 },
      );
    });
  }

  it("prose without calls yields []", () => {
    fc.assert(
      fc.property(fc.uniqueArray(ident, { minLength: 1, maxLength: 4 }).chain((tools) => fc.tuple(fc.constant(tools), noisyProse(tools))), ([tools, text]) => {
        expect(rescueToolCall(text, tools)).toEqual([]);
      }),
      { numRuns: 300, seed: 20261122 },
    );
  });

  it("arbitrary strings never throw and never name an unavailable tool", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...CHARS, ...MARKUP), maxLength: 120 }), fc.uniqueArray(ident, { maxLength: 3 }), (text, tools) => {
        for (const call of rescueToolCall(text, tools)) expect(tools).toContain(call.tool);
      }),
      { numRuns: 300, seed: 20261122 },
    );
  });
});
