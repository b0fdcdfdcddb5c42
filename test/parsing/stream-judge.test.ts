import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CALL_MARKERS, looksLikeToolCall } from "../../src/parsing/call-markers.js";
import { findCallSpans, rescueToolCall } from "../../src/parsing/rescue.js";
import { createStreamJudge } from "../../src/parsing/stream-judge.js";

const TOOLS = ["get_weather", "search"];

function judgeAll(deltas: readonly string[]) {
  const judge = createStreamJudge({ toolNames: TOOLS });
  const out = deltas.map((d) => judge.feed(d));
  return { judge, out };
}

/** Cut `text` at the given fractions into deltas. */
function split(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((f) => Math.floor(f * text.length)))].sort((a, b) => a - b);
  const deltas: string[] = [];
  let from = 0;
  for (const c of at) {
    deltas.push(text.slice(from, c));
    from = c;
  }
  deltas.push(text.slice(from));
  return deltas;
}

const FRAGMENTS = [
  "Sure", "the", "weather", "is", "fine", ".", ",", " ", " ", "\n", "get_weather", "search", "get", "(", ")", ":",
  "{", "}", "[", "]", "\"", "'", "```", "```json\n", "```python\nprint(1)\n```", "Action:", ">>>", "[ARGS]", "call:",
  '{"name": "get_weather", "arguments": {"city": "Paris"}}',
  '{"a": 1}',
  "[1, 2]",
  '[get_weather(city="Oslo")]',
  '"name": "search"',
  '"name": "Alice"',
  "<tool_call>", "</tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<function=get_weather>", "call:get_weather{",
  "get_weather[ARGS]{\"city\": \"x\"}",
];

const textArb = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 25 }).map((f) => f.join(""));
const cutsArb = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 });

describe("createStreamJudge", () => {
  it("releases prose before a Hermes call and holds the call to the end", () => {
    const { judge, out } = judgeAll(["Let me check. <tool", '_call>{"name": "get_weather", ', '"arguments": {}}</tool_call>']);
    expect(out).toEqual(["Let me check.", "", ""]);
    expect(judge.holdingCall).toBe(true);
    expect(judge.held).toBe(' <tool_call>{"name": "get_weather", "arguments": {}}</tool_call>');
  });

  it("holds only a partial marker at the end of the buffer, then releases it when it is not one", () => {
    const { out, judge } = judgeAll(["Compare a <tool", "kit> and <b>."]);
    expect(out).toEqual(["Compare a", " <toolkit> and <b>."]);
    expect(judge.holdingCall).toBe(false);
  });

  it("holds trailing whitespace until what follows it is known", () => {
    expect(judgeAll(["Hello ", "world\n", "\n"]).out).toEqual(["Hello", " world", ""]);
  });

  it("holds a bare JSON call whole", () => {
    const { out, judge } = judgeAll(['{"name": "get_', 'weather", "arguments": {"city": "Oslo"}}']);
    expect(out).toEqual(["", ""]);
    expect(judge.holdingCall).toBe(true);
  });

  it("releases a fence of ordinary code once it closes", () => {
    const { out, judge } = judgeAll(["Code:\n```js\nconst a = ", "{ b: [1] };\n", "```\nDone."]);
    expect(out).toEqual(["Code:", "", "\n```js\nconst a = { b: [1] };\n```\nDone."]);
    expect(judge.holdingCall).toBe(false);
  });

  it("holds a fence that carries a JSON call", () => {
    const { judge } = judgeAll(["```json\n", '{"name": "search", "arguments": {"q": "x"}}\n```']);
    expect(judge.holdingCall).toBe(true);
    expect(judge.released).toBe("");
  });

  it("releases data JSON and code braces, holds a pythonic call list", () => {
    expect(judgeAll(['Data: {"a": 1} and function f() { return 1; } ok']).out).toEqual(['Data: {"a": 1} and function f() { return 1; } ok']);
    const { judge } = judgeAll(["Checking ", '[get_weather(city="Oslo")]']);
    expect(judge.released).toBe("Checking");
    expect(judge.holdingCall).toBe(true);
  });

  it("holds a word that may become a rehearsal call until the next delta decides", () => {
    expect(judgeAll(["I use get_weather", " for it."]).out).toEqual(["I use", " get_weather for it."]);
    const { judge } = judgeAll(["get_weather", '[ARGS]{"city": "x"}']);
    expect(judge.released).toBe("");
    expect(judge.holdingCall).toBe(true);
  });

  it("every call marker is held", () => {
    for (const marker of CALL_MARKERS) {
      const { judge } = judgeAll(["Prose first. ", marker, " rest"]);
      expect(judge.released, marker).toBe("Prose first.");
      expect(judge.holdingCall, marker).toBe(true);
    }
  });

  it("property: released + held is the input, for any split", () => {
    fc.assert(
      fc.property(textArb, cutsArb, (text, cuts) => {
        const { judge, out } = judgeAll(split(text, cuts));
        expect(out.join("")).toBe(judge.released);
        expect(judge.released + judge.held).toBe(text);
      }),
      { numRuns: 400 },
    );
  });

  it("property: the outcome does not depend on how the text is split", () => {
    fc.assert(
      fc.property(textArb, cutsArb, (text, cuts) => {
        const whole = judgeAll([text]).judge;
        const pieces = judgeAll(split(text, cuts)).judge;
        expect([pieces.released, pieces.holdingCall]).toEqual([whole.released, whole.holdingCall]);
      }),
      { numRuns: 400 },
    );
  });

  it("property: released text never contains a call (nor an attempt) and never cuts into one", () => {
    fc.assert(
      fc.property(textArb, cutsArb, (text, cuts) => {
        const { judge } = judgeAll(split(text, cuts));
        expect(rescueToolCall(judge.released, TOOLS)).toEqual([]);
        expect(looksLikeToolCall(judge.released, TOOLS)).toBe(false);
        const tools = new Set(TOOLS);
        for (const span of findCallSpans(text, tools)) {
          if (span.calls.some((c) => tools.has(c.tool))) expect(span.start).toBeGreaterThanOrEqual(judge.released.length);
        }
      }),
      { numRuns: 600 },
    );
  });

  it("property: prose without markers is released promptly (all but trailing whitespace and a partial-marker suffix after each delta)", () => {
    const word = fc.constantFrom("the", "weather", "is", "fine", "get", "sea", " ", " ", ".", ",", "\n", "It", "to");
    const longest = Math.max(...CALL_MARKERS.map((m) => m.length), ...TOOLS.map((t) => t.length + "[CALL_ID]".length));
    fc.assert(
      fc.property(fc.array(word, { maxLength: 60 }).map((w) => w.join("")), cutsArb, (text, cuts) => {
        const judge = createStreamJudge({ toolNames: TOOLS });
        let fed = "";
        for (const delta of split(text, cuts)) {
          judge.feed(delta);
          fed += delta;
          expect(fed.trimEnd().length - judge.released.length).toBeLessThan(longest);
        }
        expect(judge.holdingCall).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
