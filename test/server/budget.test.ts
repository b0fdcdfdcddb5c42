import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BudgetResolutionError, ContextDiscoveryError, InvalidArgumentError } from "../../src/core/errors.js";
import {
  BudgetMode,
  assertBudgetMode,
  halfBudget,
  ollamaTierBudget,
  parsePropsContext,
  resolveOllamaBudget,
  validateManualTokens,
} from "../../src/server/budget.js";

const hw = (gb: number) => ({ gpuName: "GPU", vramTotalMb: Math.round(gb * 1024), vramTotalGb: gb, gpus: [] });

describe("budget resolution (pure)", () => {
  it("BudgetMode values are the seed's strings", () => {
    expect(BudgetMode).toEqual({ BACKEND: "backend", MANUAL: "manual", FORGE_FULL: "forge-full", FORGE_FAST: "forge-fast" });
    expect(() => assertBudgetMode("full")).toThrow(InvalidArgumentError);
  });

  it.each([
    [8, 4096], [12, 4096], [22.9, 4096], [23, 32768], [23.99, 32768], [24, 32768], [32, 32768], [46.9, 32768], [47, 262144], [48, 262144], [80, 262144],
  ])("%d GiB → %d tokens (Ollama's 23/47 GiB cut-offs)", (gb, tokens) => {
    expect(ollamaTierBudget(gb * 1024)).toBe(tokens);
    expect(resolveOllamaBudget("forge-full", hw(gb))).toBe(tokens);
    expect(resolveOllamaBudget("forge-fast", hw(gb))).toBe(tokens / 2);
  });

  it("a 24 GB card as nvidia-smi reports it (RTX 4090: 24564 MiB = 23.99 GiB) gets Ollama's 32K tier, not 4K", () => {
    expect(ollamaTierBudget(24_564)).toBe(32_768);
    expect(ollamaTierBudget(49_140)).toBe(262_144); // two of them: Ollama sums every GPU
    expect(ollamaTierBudget(12_282)).toBe(4_096); // RTX 3060 12 GB
  });

  it("property: tiers are monotonic in VRAM", () => {
    fc.assert(
      fc.property(fc.nat(200_000), fc.nat(200_000), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(ollamaTierBudget(lo)).toBeLessThanOrEqual(ollamaTierBudget(hi));
      }),
    );
  });

  it("no GPU: forge modes fail, backend mode is Ollama's own 4096", () => {
    expect(() => resolveOllamaBudget("forge-full", undefined)).toThrow(BudgetResolutionError);
    expect(() => resolveOllamaBudget("forge-fast", undefined)).toThrow(/manual/);
    expect(resolveOllamaBudget("backend", undefined)).toBe(4096);
  });

  it("manual needs a positive integer", () => {
    expect(validateManualTokens(1)).toBe(1);
    for (const bad of [undefined, 0, -5, 1.5, "8000"]) expect(() => validateManualTokens(bad)).toThrow(InvalidArgumentError);
  });

  it("halves down", () => {
    expect(halfBudget(32769)).toBe(16384);
  });

  it("parses /props n_ctx and rejects anything else with the body attached", () => {
    expect(parsePropsContext('{"default_generation_settings":{"n_ctx":8192},"total_slots":1}')).toBe(8192);
    for (const body of ["<html>", "{}", '{"default_generation_settings":{}}', '{"default_generation_settings":{"n_ctx":"8192"}}', '{"default_generation_settings":{"n_ctx":0}}', "null"]) {
      const error = (() => {
        try {
          parsePropsContext(body);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ContextDiscoveryError);
      expect((error as ContextDiscoveryError).body).toBe(body);
    }
  });
});
