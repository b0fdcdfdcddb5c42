import { describe, expect, it } from "vitest";
import type { OracleView, Slip } from "../../eval/scenario.js";
import { activeSlips, slippingOracle } from "../../eval/scenarios/oracle-kit.js";

const view = (results: OracleView["results"] = []): OracleView => ({ results, userInput: "q", toolNames: ["a", "b"], turn: results.length });
const lure: Slip = { name: "lure", rate: 0.3, when: (v) => !v.results.some((r) => r.tool === "b"), step: () => ({ tool: "b", args: {} }) };

describe("slips", () => {
  it("are rolled per run: about `rate` of seeds for small-model, twice for chaotic, never for clean", () => {
    const seeds = Array.from({ length: 2000 }, (_, i) => i);
    const share = (profile: string) => seeds.filter((s) => activeSlips([lure], profile, s).length === 1).length / seeds.length;
    expect(share("small-model")).toBeGreaterThan(0.26);
    expect(share("small-model")).toBeLessThan(0.34);
    expect(share("chaotic")).toBeGreaterThan(0.55);
    expect(share("chaotic")).toBeLessThan(0.65);
    expect(share("clean")).toBe(0);
  });

  it("the same seed slips the same way every time", () => {
    for (let s = 0; s < 50; s++) expect(activeSlips([lure], "small-model", s)).toEqual(activeSlips([lure], "small-model", s));
  });

  it("an active slip decides the turns where `when` holds, then the oracle takes over", () => {
    const oracle = slippingOracle(() => ({ tool: "a", args: { x: 1 } }), [lure]);
    expect(oracle(view())).toEqual({ tool: "b", args: {} });
    expect(oracle(view([{ tool: "b", args: {}, content: "ok", isError: false }]))).toEqual({ tool: "a", args: { x: 1 } });
  });

  it("a rate outside [0, 1] is refused by name", () => {
    expect(() => activeSlips([{ ...lure, rate: 1.5 }], "small-model", 1)).toThrow(/slip lure: rate/);
  });
});
