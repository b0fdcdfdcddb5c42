import { describe, expect, it } from "vitest";
import { JsonScanner, decodeJsonSpan, nextFinder, tryParseJson } from "../../src/parsing/json-scan.js";

describe("JsonScanner.valueEnd", () => {
  it("finds the end of nested objects and arrays, respecting strings and escapes", () => {
    const text = 'x {"a": "}\\"{", "b": [1, {"c": null}], "d": -1.5e3} y';
    const s = new JsonScanner(text);
    const end = s.valueEnd(2);
    expect(text.slice(2, end)).toBe('{"a": "}\\"{", "b": [1, {"c": null}], "d": -1.5e3}');
    expect(decodeJsonSpan(text, 2, end)).toEqual({ a: '}"{', b: [1, { c: null }], d: -1500 });
  });

  it("rejects invalid JSON: single quotes, trailing commas, bad numbers, bad escapes, unclosed", () => {
    for (const bad of ["{'a': 1}", '{"a": 1,}', "[01]", "[1.]", '["\\x41"]', '{"a": 1', "[", "{a: 1}", "[tru]"]) {
      expect(new JsonScanner(bad).valueEnd(0), bad).toBe(-1);
    }
  });

  it("returns -1 for positions that are not containers and memoises results", () => {
    const s = new JsonScanner('a [1, [2]] {"k": {}}');
    expect(s.valueEnd(0)).toBe(-1);
    expect(s.valueEnd(2)).toBe(10);
    expect(s.valueEnd(6)).toBe(9);
    expect(s.valueEnd(2)).toBe(10);
    expect(s.valueEnd(11)).toBe(20);
  });

  it("accepts raw newlines inside strings (models emit them in code arguments)", () => {
    const text = '{"code": "line1\nline2\ttab"}';
    const end = new JsonScanner(text).valueEnd(0);
    expect(end).toBe(text.length);
    expect(decodeJsonSpan(text, 0, end)).toEqual({ code: "line1\nline2\ttab" });
  });

  it("handles deep nesting without recursion", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expect(new JsonScanner(deep).valueEnd(0)).toBe(deep.length);
  });
});

describe("tryParseJson / nextFinder", () => {
  it("parses whole-string JSON scalars and containers, rejects partial", () => {
    expect(tryParseJson(" 12 ")).toEqual({ ok: true, value: 12 });
    expect(tryParseJson('"x"')).toEqual({ ok: true, value: "x" });
    expect(tryParseJson("[1] x")).toEqual({ ok: false });
    expect(tryParseJson("")).toEqual({ ok: false });
  });

  it("nextFinder agrees with indexOf for increasing positions", () => {
    const text = "ab<x>cd<x>ef";
    const find = nextFinder(text, "<x>");
    expect([find(0), find(2), find(3), find(8), find(20)]).toEqual([2, 2, 7, -1, -1]);
    expect(find(0)).toBe(2);
  });
});
