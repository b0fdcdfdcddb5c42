import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capResult, maxResultCharsProblem, truncationMarker } from "../../src/loop/result-cap.js";
import { capToolOutput } from "../../src/loop/tool-output.js";

describe("capResult", () => {
  it("leaves text at or under the cap untouched", () => {
    expect(capResult("abc", 3)).toEqual({ content: "abc" });
    expect(capResult("abc", undefined)).toEqual({ content: "abc" });
  });

  it("cuts longer text and says how much of how much was left out", () => {
    expect(capResult("x".repeat(20_000), 7_655)).toEqual({
      content: `${"x".repeat(7_655)}… [truncated 12,345 of 20,000 chars]`,
      truncated: { total: 20_000, kept: 7_655 },
    });
  });

  it("never splits a surrogate pair", () => {
    const capped = capResult("a😀b", 2);
    expect(capped.content).toBe(`a${truncationMarker(3, 4)}`);
    expect(capped.truncated).toEqual({ total: 4, kept: 1 });
  });

  it("property: never longer than the cap plus its marker, untouched under the cap, the marker states the true sizes", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 400 }), fc.integer({ min: 1, max: 500 }), (text, max) => {
        const { content, truncated } = capResult(text, max);
        if (text.length <= max) {
          expect(content).toBe(text);
          expect(truncated).toBeUndefined();
          return;
        }
        const marker = truncationMarker(text.length - truncated!.kept, text.length);
        expect(content.endsWith(marker)).toBe(true);
        expect(content.length).toBeLessThanOrEqual(max + marker.length);
        expect(truncated!.total).toBe(text.length);
        expect(text.startsWith(content.slice(0, -marker.length))).toBe(true);
        const [, removed, total] = /truncated ([\d,]+) of ([\d,]+) chars/.exec(marker)!;
        expect(Number(removed!.replaceAll(",", ""))).toBe(text.length - truncated!.kept);
        expect(Number(total!.replaceAll(",", ""))).toBe(text.length);
      }),
    );
  });
});

describe("capToolOutput", () => {
  it("keeps the whole text and a terminal result beside the cut content", () => {
    expect(capToolOutput({ content: "abcdef", result: "abcdef" }, 4)).toEqual({ content: `abcd${truncationMarker(2, 6)}`, result: "abcdef", fullContent: "abcdef" });
    const small = { content: "ab" };
    expect(capToolOutput(small, 4)).toBe(small);
  });
});

describe("maxResultCharsProblem", () => {
  it("accepts positive integers only", () => {
    expect(maxResultCharsProblem(1)).toBeUndefined();
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity, "10", null]) expect(maxResultCharsProblem(bad)).toMatch(/positive integer/);
  });
});
