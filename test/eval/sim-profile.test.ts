import { describe, expect, it } from "vitest";
import { resolveFaultProfile } from "../../src/clients/fault-profiles.js";
import { familyOf, SCENARIO_FAMILIES } from "../../eval/families.js";
import { evalFaultProfile } from "../../eval/sim-profile.js";
import { ALL_SCENARIOS } from "../../eval/scenarios/index.js";

const mistakes = (rates: Record<string, number | undefined>) => Object.entries(rates).filter(([k]) => k !== "reasoning").reduce((n, [, r]) => n + (r ?? 0), 0);

describe("the simulated model's eval profile", () => {
  it("reads a family from tags, first match wins, plumbing when none matches", () => {
    expect(familyOf(["stateful", "advanced", "reasoning"])).toBe("advanced");
    expect(familyOf(["plumbing", "compaction"])).toBe("compaction");
    expect(familyOf(["stateful"])).toBe("plumbing");
    // Every scenario of the suite lands in one of the families.
    for (const s of ALL_SCENARIOS) expect(SCENARIO_FAMILIES).toContain(familyOf(s.tags));
  });

  it("small-model makes plumbing mistakes on 6–9% of turns by family, chaotic three times that, clean none", () => {
    for (const family of SCENARIO_FAMILIES) {
      const small = mistakes(evalFaultProfile("small-model", [family]).rates);
      expect(small).toBeGreaterThanOrEqual(0.06 - 1e-9);
      expect(small).toBeLessThanOrEqual(0.09 + 1e-9);
      expect(mistakes(evalFaultProfile("chaotic", [family]).rates)).toBeCloseTo(3 * small);
      expect(mistakes(evalFaultProfile("clean", [family]).rates)).toBe(0);
      expect(evalFaultProfile("clean", [family]).rates.reasoning).toBe(0);
    }
  });

  it("every profile it builds is one the simulated client accepts", () => {
    for (const profile of ["clean", "small-model", "chaotic"]) {
      for (const family of SCENARIO_FAMILIES) expect(() => resolveFaultProfile(evalFaultProfile(profile, [family]))).not.toThrow();
    }
  });

  it("an unknown profile name is refused, naming the known ones", () => {
    expect(() => evalFaultProfile("tiny", ["plumbing"])).toThrow(/profiles are clean, small-model, chaotic; got "tiny"/);
  });
});
