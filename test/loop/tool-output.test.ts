import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ToolResultError } from "../../src/core/index.js";
import { toolOutput } from "../../src/loop/tool-output.js";
import { jsonValue } from "../support/arbitraries.js";

describe("toolOutput", () => {
  it("strings pass as they are; undefined is empty; other values are their JSON", () => {
    expect(toolOutput("t", "plain", false)).toEqual({ content: "plain" });
    expect(toolOutput("t", "plain", true)).toEqual({ content: "plain", result: "plain" });
    expect(toolOutput("t", undefined, true)).toEqual({ content: "" });
    expect(toolOutput("t", { a: [1, null] }, false)).toEqual({ content: '{"a":[1,null]}' });
    expect(toolOutput("t", new Date(0), true)).toEqual({ content: '"1970-01-01T00:00:00.000Z"', result: "1970-01-01T00:00:00.000Z" });
  });

  it.each<[string, unknown, RegExp]>([
    ["BigInt", { n: 1n }, /BigInt/],
    ["a cycle", (() => { const o: Record<string, unknown> = {}; o.o = o; return o; })(), /circular/i],
    ["a throwing toJSON", { toJSON: () => { throw new Error("nope"); } }, /nope/],
    ["a function", () => 1, /function has no JSON form/],
    ["a symbol", Symbol("s"), /symbol has no JSON form/],
  ])("%s is a ToolResultError carrying the tool and whether it is terminal", (_name, value, reason) => {
    for (const terminal of [false, true]) {
      let caught: unknown;
      try {
        toolOutput("lookup", value, terminal);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ToolResultError);
      expect(caught).toMatchObject({ toolName: "lookup", terminal, reason: expect.stringMatching(reason) });
    }
  });

  it("property: a terminal result of any JSON value round-trips and its content is its JSON text", () => {
    fc.assert(
      fc.property(jsonValue(), (value) => {
        const out = toolOutput("t", value, true);
        if (typeof value === "string") expect(out).toEqual({ content: value, result: value });
        else expect(out).toEqual({ content: JSON.stringify(value), result: value });
        expect(JSON.parse(JSON.stringify(out))).toEqual(out);
      }),
    );
  });
});
