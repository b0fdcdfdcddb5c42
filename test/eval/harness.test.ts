import { describe, expect, it } from "vitest";
import { ABLATION_PRESETS, getAblation } from "../../eval/ablation.js";
import { clientFactory } from "../../eval/backends.js";
import { configName, runScenario, runSeed, type RunConfig } from "../../eval/harness.js";
import { selectScenarios } from "../../eval/scenarios/index.js";

const clean = (ablation: string, extra: Partial<RunConfig> = {}): RunConfig => ({
  backend: "sim", model: "clean", ablation: getAblation(ablation), compactStrategy: "tiered", stream: false, seed: 1,
  makeClient: clientFactory({ backend: "sim", model: "clean" }), ...extra,
});
const one = (name: string) => selectScenarios({ names: [name] })[0]!;

describe("harness", () => {
  it("records a clean run of the ideal path", async () => {
    const r = await runScenario(one("basic_2step"), clean("reforged"), 0);
    expect(r).toMatchObject({ key: "sim:clean@reforged|basic_2step|0", completed: true, correct: true, iterations: 2, wastedCalls: 0, ablation: "reforged" });
    expect(r.errorType).toBeUndefined();
    expect(r.inputTokens).toBeGreaterThan(0);
  });

  it("streams through sendStream with the same outcome", async () => {
    const r = await runScenario(one("sequential_3step"), clean("reforged", { stream: true }), 0);
    expect(r).toMatchObject({ correct: true, iterations: 3, streamRetries: 0 });
  });

  it("wires maxToolErrors: error_recovery_checked recovers when on, fails typed when off", async () => {
    // Its clean path sends a malformed id first; the plain error_recovery's clean path does not.
    const on = await runScenario(one("error_recovery_checked"), clean("reforged"), 0);
    expect(on).toMatchObject({ correct: true, iterations: 3, toolErrors: 1 });
    const off = await runScenario(one("error_recovery_checked"), clean("no_recovery"), 0);
    expect(off).toMatchObject({ correct: false, completed: false, errorType: "ToolExecutionError" });
  });

  it("wires compaction: the phase-2 audit needs it", async () => {
    const on = await runScenario(one("phase2_compaction"), clean("reforged"), 0);
    expect(on.correct).toBe(true);
    expect(Math.max(...on.compactionPhases)).toBeGreaterThanOrEqual(2);
    const off = await runScenario(one("phase2_compaction"), clean("no_compact"), 0);
    expect(off.errorType).toBe("ContextBudgetExceeded");
    const none = await runScenario(one("phase2_compaction"), clean("reforged", { compactStrategy: "none" }), 0);
    expect(none.errorType).toBe("ContextBudgetExceeded");
    expect(configName(clean("reforged", { compactStrategy: "sliding" }))).toBe("sim:clean@reforged+sliding");
  });

  it("ToolResolutionError is not a tool error even with recovery off", async () => {
    const r = await runScenario(one("basic_2step_stateful_tre"), clean("no_recovery"), 0);
    expect(r).toMatchObject({ correct: true, iterations: 3, toolErrors: 0 });
  });

  it("derives per-run seeds from (seed, scenario, run index) only", () => {
    expect(runSeed(1, "a", 0)).toBe(runSeed(1, "a", 0));
    expect(new Set([runSeed(1, "a", 0), runSeed(1, "a", 1), runSeed(2, "a", 0), runSeed(1, "b", 0)]).size).toBe(4);
  });

  it("has the seven presets, bare with everything off", () => {
    expect(Object.keys(ABLATION_PRESETS)).toEqual(["reforged", "no_rescue", "no_nudge", "no_steps", "no_recovery", "no_compact", "bare"]);
    expect(ABLATION_PRESETS.bare).toEqual({ name: "bare", rescueEnabled: false, maxRetries: 0, stepEnforcement: false, maxToolErrors: 0, compaction: false });
    expect(() => getAblation("nope")).toThrow(/unknown preset/);
    expect(() => clientFactory({ backend: "nope" as "sim", model: "x" })).toThrow(/unknown backend/);
  });
});
