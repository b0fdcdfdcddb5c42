/**
 * Issue 46: the streaming judge's work is linear in the answer, however the answer is split.
 * Work is counted, never timed: `judge.work.examined` is every code unit the judge read (copied
 * in, scanned, compared, re-read, sliced out) and `judge.work.judged` every character handed to
 * the rescue parsers when a held span closed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CALL_MARKERS } from "../../src/parsing/call-markers.js";
import { RESCUE_FORMATS, renderToolCalls } from "../../src/parsing/index.js";
import { createStreamJudge, type StreamJudge } from "../../src/parsing/stream-judge.js";

const TOOLS = ["get_weather", "search", "write_file"];

/**
 * Code units read per character of the answer, at most. Each character is copied in, scanned and
 * released or judged once (a few reads); an opener candidate compares the markers that share its
 * first character. What one delta may read again is bounded: a construct left undecided at the
 * end of the text compares those markers' prefixes again (at most the longest marker each) or
 * reads its `"name": "…` value again (NAMED_VALUE_REACH); whitespace and name runs resume where
 * they reached. With one-character deltas that is paid per character: 73 reads a character for
 * near-misses of the longest marker, the worst shape found (below).
 */
const READS_PER_CHAR = 96;

/** Cut `text` into deltas of `size` characters. */
function bySize(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Cut `text` at the given fractions of its length. */
function atFractions(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((f) => Math.floor(f * text.length)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const c of at) {
    out.push(text.slice(from, c));
    from = c;
  }
  out.push(text.slice(from));
  return out;
}

function feedAll(deltas: readonly string[]): { judge: StreamJudge; out: string[] } {
  const judge = createStreamJudge({ toolNames: TOOLS });
  return { judge, out: deltas.map((d) => judge.feed(d)) };
}

const rendered = RESCUE_FORMATS.map((f) => renderToolCalls([{ tool: "search", args: { q: "x \"y\" {z}" } }], f));

const PROSE = [
  "The", "weather", "is", "fine", "get_weather", "search", "write_file", "get", "items[0]", "f(x)", "(see [1])", "it's", "A", "to", "call",
  " ", " ", " ", "\n", "\n\n", ".", ",", ":", "\u00a0",
];
const FENCES = ["```ts\nconst a = { b: [1] };\n```", "```json\n{\"a\": 1}\n```", "```python\nprint('x')\n```", "```", "``", "`code`"];
const JSON_SNIPPETS = ['{"a": 1}', '{"name": "demo", "items": [1, 2]}', '["a", "b"]', '[{"k": "v"}]', '{"s": "a \\"quoted\\" {brace"}', "{ }", "[1, 2]"];
const NEAR_MISSES = [
  "<tool_", "<tool", "<|tool", "<|tool_calls_section_begi", '{"name"', '{"name": ', '"name": "', '"name": "Alice"', '"tool": "x', "[TOOL_CALL", ">>>", ">>>search",
  "Action:", "Action: ``", "call:get_weathe", "get_weather[ARG", "search\n", "[search", "[search (", "{", "[", "\"", "'", "\\",
  ...CALL_MARKERS.map((m) => m.slice(0, -1)),
];
/** Long runs, some after an opener: what a construct waiting at the end of the text would read again on every delta. */
const run = fc
  .tuple(
    fc.constantFrom("", "", "{", "[", ">>>", "Action:", "[get_weather", ">>>search", '"name":'),
    fc.constantFrom(" ", "\n", "1", "-", "a", "get_weather", "<", "{", "[", "`", '"name"', "<tool_"),
    fc.integer({ min: 1, max: 2000 }),
  )
  .map(([opener, unit, times]) => opener + unit.repeat(times));
/** A format's call, or its opener cut anywhere (an unclosed call, a near-miss). */
const call = fc.constantFrom(...rendered).chain((r) => fc.oneof(fc.constant(r), fc.nat(r.length).map((k) => r.slice(0, k))));

const fragment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PROSE) },
  { weight: 2, arbitrary: fc.constantFrom(...FENCES) },
  { weight: 2, arbitrary: fc.constantFrom(...JSON_SNIPPETS) },
  { weight: 2, arbitrary: fc.constantFrom(...NEAR_MISSES) },
  { weight: 1, arbitrary: run },
);
// Long enough that a judge re-reading the text per delta would show (hundreds of fragments), and
// mostly prose: once a call is seen the rest is only held, so a call goes in at most once.
const answer = fc
  .tuple(fc.array(fragment, { minLength: 1, maxLength: 300, size: "max" }), fc.option(call, { freq: 2 }), fc.nat())
  .map(([parts, opener, at]) => (opener === null ? parts : parts.toSpliced(at % (parts.length + 1), 0, opener)).join(""));
/** Fixed-size deltas (one character is the worst case per character) or cuts anywhere. */
const splitOf = (text: string) =>
  fc.oneof(
    fc.integer({ min: 1, max: 8 }).map((size) => bySize(text, size)),
    fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }).map((cuts) => atFractions(text, cuts)),
  );
const streamed = answer.chain((text) => splitOf(text).map((deltas) => ({ text, deltas })));

describe("the streaming judge's work (issue 46)", () => {
  it("property: code units read stay within a constant times the answer's length, and each character is judged at most once", () => {
    fc.assert(
      fc.property(streamed, ({ text, deltas }) => {
        const { judge } = feedAll(deltas);
        expect(judge.work.examined).toBeLessThanOrEqual(READS_PER_CHAR * text.length);
        expect(judge.work.judged).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 300 },
    );
  });

  it("property: any split gives the verdict and the released text of the whole answer in one delta", () => {
    fc.assert(
      fc.property(streamed, ({ text, deltas }) => {
        const whole = feedAll([text]);
        const pieces = feedAll(deltas);
        expect(pieces.out.join("")).toBe(whole.out[0]);
        expect(pieces.judge.holdingCall).toBe(whole.judge.holdingCall);
        expect(pieces.judge.held).toBe(whole.judge.held);
      }),
      { numRuns: 300 },
    );
  });

  const LONG = 50_000;
  const fill = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
  const code = fill("  const s = \"a \\\"b\\\"\"; if (a < b) { run('x', [1, 2]); }\n", LONG);
  // The shapes that were quadratic: every delta re-flattened the whole text, and these waited on it.
  const SHAPES: Record<string, string> = {
    "prose with code fences and JSON snippets": fill('Read it (see [1]):\n\n```ts\nconst a = { b: [1] };\n```\n\nThen {"ok": true} or ["a", "b"]. ', LONG),
    "a bare-JSON call with a long escaped string": `{"name": "write_file", "arguments": {"content": ${JSON.stringify(code)}}}`,
    "a Hermes call with a long argument": `Writing.\n<tool_call>\n{"name": "write_file", "arguments": {"content": ${JSON.stringify(code)}}}\n</tool_call>`,
    "an unclosed fence": "```\n" + code,
    "a whitespace run": " ".repeat(LONG),
    "`{` before a whitespace run": "{" + " ".repeat(LONG),
    "`[` before a long name": "[" + "a".repeat(LONG),
    "`>>>` before a long name": ">>>" + "a".repeat(LONG),
    "a Functionary first line after leading whitespace": " ".repeat(LONG) + "get_weather\n{}",
    "digits before a tool's name": "1".repeat(LONG) + "get_weather",
    // The most a delta re-reads: the longest marker's near-miss, or a `"name"` value that never closes.
    "near-misses of the longest marker": fill("<|tool_calls_section_begi ", LONG),
    "`\"name\": \"` values that never close": fill(`"name": "${"v".repeat(70)} `, LONG),
  };

  for (const [shape, text] of Object.entries(SHAPES)) {
    it(`${shape} in one-character and four-character deltas: linear work`, () => {
      for (const size of [1, 4]) {
        const { judge } = feedAll(bySize(text, size));
        expect(judge.work.examined, `${size}-character deltas`).toBeLessThanOrEqual(READS_PER_CHAR * text.length);
        expect(judge.work.judged).toBeLessThanOrEqual(text.length);
        expect(judge.released + judge.held).toBe(text);
      }
    });
  }
});
