import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, jsonEqual } from "../../src/guardrails/canonical-json.js";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { jsonValue } from "../support/arbitraries.js";

describe("canonicalJson", () => {
  it("sorts keys at every depth and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] })).toBe('{"a":[2,{"c":4,"d":3}],"b":1}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it("follows JSON for what JSON cannot hold", () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson([undefined, Number.NaN])).toBe("[null,null]");
    expect(canonicalJson(undefined)).toBe("undefined");
    expect(canonicalJson(null)).toBe("null");
  });

  it("throws a typed error on cycles", () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => canonicalJson(a)).toThrow(InvalidArgumentError);
  });

  it("equals JSON.stringify(JSON.parse(...)) after re-sorting for any JSON value (property)", () => {
    fc.assert(
      fc.property(jsonValue(), (v) => {
        expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });

  it("jsonEqual ignores key order (property)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(jsonEqual(obj, reversed)).toBe(true);
      }),
    );
    expect(jsonEqual({ a: 1 }, { a: 2 })).toBe(false);
  });
});
