import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonDepthExceeds, MAX_DECODED_JSON_DEPTH, parseJsonText } from "../../src/core/json-text.js";
import { MAX_JSON_DEPTH, tooDeepPath } from "../../src/core/json-value.js";
import { jsonValue } from "../support/arbitraries.js";

const nested = (n: number) => "[".repeat(n) + "]".repeat(n);

describe("jsonDepthExceeds", () => {
  it("counts object and array levels, not brackets inside strings (escaped quotes included)", () => {
    expect(jsonDepthExceeds("[]", 0)).toBe(true);
    expect(jsonDepthExceeds("[]", 1)).toBe(false);
    expect(jsonDepthExceeds('{"a": [{}]}', 2)).toBe(true);
    expect(jsonDepthExceeds('{"a": [{}]}', 3)).toBe(false);
    expect(jsonDepthExceeds('["[[[[", "\\"[[[", {"k]]]": "{{{"}]', 2)).toBe(false);
    expect(jsonDepthExceeds("1", 0)).toBe(false);
  });

  it("measures only the given span", () => {
    const text = `x ${nested(3)} ${nested(10)}`;
    expect(jsonDepthExceeds(text, 3, 2, 8)).toBe(false);
    expect(jsonDepthExceeds(text, 3)).toBe(true);
  });

  it("property: agrees with the depth of the parsed value (tooDeepPath)", () => {
    fc.assert(
      fc.property(jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 7 }), (value, limit) => {
        expect(jsonDepthExceeds(JSON.stringify(value), limit)).toBe(tooDeepPath(value, limit) !== undefined);
      }),
      { seed: 20260611 },
    );
  });

  it("stops at the bound: a 1,000,000-deep text is refused without recursion", () => {
    expect(jsonDepthExceeds(nested(1_000_000), MAX_JSON_DEPTH)).toBe(true);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
  });
});

describe("parseJsonText", () => {
  it("parses what is within the bound; says depth or syntax otherwise, never throws", () => {
    expect(parseJsonText('{"a": [1]}', 2)).toEqual({ ok: true, value: { a: [1] } });
    expect(parseJsonText(nested(100_000), 64)).toEqual({ ok: false, reason: "depth" });
    expect(parseJsonText("{", 64)).toMatchObject({ ok: false, reason: "syntax", cause: expect.any(SyntaxError) });
    expect(parseJsonText('"x"', 0)).toEqual({ ok: true, value: "x" });
  });

  it("keeps a __proto__ key an own key, as JSON.parse does", () => {
    const parsed = parseJsonText('{"__proto__": {"polluted": true}}', 64);
    expect(parsed.ok && Object.keys(parsed.value as object)).toEqual(["__proto__"]);
    expect(parsed.ok && Object.getPrototypeOf(parsed.value)).toBe(Object.prototype);
  });

  it("MAX_DECODED_JSON_DEPTH leaves room under MAX_JSON_DEPTH for a response's toolCalls[i].args", () => {
    expect(MAX_DECODED_JSON_DEPTH + 3).toBeLessThanOrEqual(MAX_JSON_DEPTH);
  });
});
