import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { samplePattern } from "../../src/clients/pattern-sample.js";

describe("samplePattern", () => {
  it.each([
    ["^PN-\\d{4}$", {}, "PN-0000"],
    ["^[a-z]+$", {}, "a"],
    ["^[a-z]+$", { minLength: 3 }, "aaa"],
    ["mid", {}, "mid"],
    ["^(?:red|green)-[0-9]{2,3}$", {}, "red-00"],
    ["^(?<year>\\d{4})-\\d\\d$", {}, "0000-00"],
    ["^[^A-Z]*$", { minLength: 2 }, "aa"],
    ["b$", { minLength: 3 }, "xxb"],
    ["^[^a0x]$", {}, "A"],
    ["^\\w+@\\w+\\.com$", {}, "a@a.com"],
    ["^\\x41\\u0042\\.\\*$", {}, "AB.*"],
    ["^a*?b$", {}, "b"],
    ["^[]a]", {}, undefined],
  ])("%s %j → %j", (pattern, bounds, expected) => {
    const got = samplePattern(pattern, bounds);
    if (expected === undefined) return expect(got).toBeUndefined();
    expect(got).toBe(expected);
    expect(new RegExp(pattern, "u").test(got!)).toBe(true);
  });

  it.each(["(?=a)a", "(?!a)b", "(?<=a)b", "(a)\\1", "\\p{L}", "a{2,1}"])("is undefined for a pattern that is not simple: %s", (pattern) => {
    expect(samplePattern(pattern)).toBeUndefined();
  });

  it("is undefined when no string within the length bounds matches", () => {
    expect(samplePattern("^abc$", { maxLength: 2 })).toBeUndefined();
    expect(samplePattern("^a{2}$", { minLength: 3 })).toBeUndefined();
  });

  it("pads an unanchored pattern to its minLength", () => {
    expect(samplePattern("^ab", { minLength: 4 })).toBe("abxx");
  });

  // Simple patterns built from pieces: each sample matches, within the bounds asked for.
  const piece = fc.oneof(
    fc.constantFrom("a", "Z", "-", "\\.", "\\d", "\\w", "\\s", "[a-f]", "[^0-9]", "[A-Z_]", "(?:ab|cd)", "(x|y)", "."),
    fc.stringMatching(/^[a-z0-9]{1,3}$/),
  );
  const quantifier = fc.constantFrom("", "?", "*", "+", "{2}", "{1,3}", "{0,}", "+?");
  const pattern = fc
    .tuple(fc.boolean(), fc.array(fc.tuple(piece, quantifier), { minLength: 1, maxLength: 6 }), fc.boolean())
    .map(([start, parts, end]) => `${start ? "^" : ""}${parts.map(([p, q]) => (p.length > 1 && !p.startsWith("\\") && !p.startsWith("[") && !p.startsWith("(") && q ? `(?:${p})${q}` : p + q)).join("")}${end ? "$" : ""}`);

  it("samples a string every generated simple pattern matches, reaching minLength when it can", () => {
    fc.assert(
      fc.property(pattern, fc.integer({ min: 0, max: 8 }), (p, minLength) => {
        const got = samplePattern(p);
        expect(got, p).toBeDefined();
        expect(new RegExp(p, "u").test(got!)).toBe(true);
        const longer = samplePattern(p, { minLength });
        if (longer !== undefined) {
          expect(new RegExp(p, "u").test(longer)).toBe(true);
          expect([...longer].length).toBeGreaterThanOrEqual(minLength);
        } else {
          // Only a pattern anchored at both ends with bounded quantifiers can fall short.
          expect(p.startsWith("^") && p.endsWith("$")).toBe(true);
        }
      }),
      { numRuns: 300, seed: 32 },
    );
  });
});
