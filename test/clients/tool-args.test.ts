import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeToolArguments, readToolArguments } from "../../src/clients/tool-args.js";
import { MAX_DECODED_JSON_DEPTH } from "../../src/core/json-text.js";
import { jsonValue } from "../support/arbitraries.js";

describe("decodeToolArguments", () => {
  it("parses a JSON string once", () => {
    expect(decodeToolArguments('{"city":"Paris"}')).toEqual({ city: "Paris" });
    // Double-encoded stays a string after one decode: the validator reports it.
    expect(decodeToolArguments(JSON.stringify('{"city":"Paris"}'))).toBe('{"city":"Paris"}');
  });

  it("keeps malformed strings as-is, never {}", () => {
    expect(decodeToolArguments('{"city":')).toBe('{"city":');
    expect(decodeToolArguments("{")).toBe("{");
  });

  it("passes non-strings through untouched", () => {
    const obj = { city: "Paris" };
    expect(decodeToolArguments(obj)).toBe(obj);
    expect(decodeToolArguments(null)).toBeNull();
    expect(decodeToolArguments(undefined)).toBeUndefined();
    expect(decodeToolArguments([1, 2])).toEqual([1, 2]);
  });

  it("property: objects round-trip through their JSON string", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), jsonValue()), (obj) => {
        const wire = JSON.parse(JSON.stringify(obj)) as unknown;
        expect(decodeToolArguments(JSON.stringify(obj))).toEqual(wire);
      }),
    );
  });

  it("property: a non-empty string that is not JSON comes back identical", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        let isJson = true;
        try {
          JSON.parse(s);
        } catch {
          isJson = false;
        }
        fc.pre(!isJson && s.trim() !== "");
        expect(decodeToolArguments(s)).toBe(s);
      }),
    );
  });
});

describe("decodeToolArguments: empty arguments", () => {
  it('treats "" (a call to a tool without parameters) as {}', () => {
    expect(decodeToolArguments("")).toEqual({});
    expect(decodeToolArguments("  \n")).toEqual({});
  });
});

describe("decodeToolArguments: depth", () => {
  const nested = (n: number) => "[".repeat(n) + "]".repeat(n);

  it("keeps a string nested deeper than the bound raw (the validator refuses it), and says so", () => {
    const deep = nested(100_000);
    expect(decodeToolArguments(deep)).toBe(deep);
    expect(readToolArguments(deep, 64)).toEqual({ value: deep, tooDeep: true });
    expect(decodeToolArguments(nested(MAX_DECODED_JSON_DEPTH))).toHaveLength(1);
    expect(readToolArguments(nested(64), 64).tooDeep).toBe(false);
    expect(readToolArguments("{", 64)).toEqual({ value: "{", tooDeep: false });
  });

  it("a __proto__ key stays an own key", () => {
    const args = decodeToolArguments('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.keys(args)).toEqual(["__proto__"]);
  });
});
