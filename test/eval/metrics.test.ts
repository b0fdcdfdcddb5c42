import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compareConfigs, computeMetrics, efficiencyOf, liftByScenario, metricsByConfig } from "../../eval/metrics.js";
import { mergeGenerations, mergeNotes } from "../../eval/generation.js";
import type { RunRecord } from "../../eval/run-record.js";
import { record } from "./fixtures.js";

/** A consistent run record: correct only when validated, a validator error only on a completed run. */
const arbRecord = fc
  .record({
    config: fc.constantFrom("sim:a@reforged", "sim:a@bare", "sim:b@reforged"),
    scenario: fc.constantFrom("basic_2step", "error_recovery", "compaction_stress"),
    runIndex: fc.nat(4),
    generation: fc.integer({ min: 1, max: 3 }),
    completed: fc.boolean(),
    pass: fc.boolean(),
    throws: fc.boolean(),
    iterations: fc.integer({ min: 1, max: 12 }),
    idealIterations: fc.integer({ min: 1, max: 6 }),
    reasoningMessages: fc.nat(3),
    elapsedMs: fc.integer({ min: 0, max: 5000 }),
  })
  .map((x): RunRecord => {
    const validationError = x.completed && x.throws ? "TypeError: boom" : undefined;
    return record({
      config: x.config,
      scenario: x.scenario,
      tags: x.scenario === "compaction_stress" ? ["plumbing", "compaction"] : ["plumbing"],
      runIndex: x.runIndex,
      generation: x.generation,
      completed: x.completed,
      correct: x.completed && !validationError && x.pass,
      ...(validationError ? { validationError, errorType: "ValidationError" } : {}),
      iterations: x.iterations,
      idealIterations: x.idealIterations,
      wastedCalls: Math.max(0, x.iterations - x.idealIterations),
      reasoningMessages: x.reasoningMessages,
      elapsedMs: x.elapsedMs,
    });
  });

describe("metrics (forge's definitions)", () => {
  it("computes every column by its formula", () => {
    const rs = [
      record({ runIndex: 0, reasoningMessages: 2, elapsedMs: 1000 }),
      record({ runIndex: 1, iterations: 4, wastedCalls: 2, elapsedMs: 3000 }),
      record({ runIndex: 2, correct: false, errorType: "ValidationFailed", iterations: 2, reasoningMessages: 1, elapsedMs: 2000 }),
      record({ runIndex: 3, correct: false, validationError: "TypeError: x is undefined", errorType: "ValidationError", iterations: 3, elapsedMs: 4000 }),
      record({ runIndex: 4, completed: false, correct: false, iterations: 6, wastedCalls: 4, compactions: 2, compactionPhases: [1, 2], elapsedMs: 9000 }),
      record({ runIndex: 0, scenario: "compaction_stress", tags: ["compaction"], iterations: 3, idealIterations: 3, elapsedMs: 60_000 }),
    ];
    const m = computeMetrics(rs);
    expect(m).toMatchObject({ attempted: 6, completed: 5, validated: 4, correct: 3, validationErrors: 1, runsPerScenario: 5 });
    expect(m.score.rate).toBe(3 / 6);
    expect(m.validatedAccuracy!.rate).toBe(3 / 4); // the validator error is neither right nor wrong
    expect(m.completeness.rate).toBe(5 / 6);
    expect(m.efficiency).toBeCloseTo((2 + 2 + 3) / (2 + 4 + 3)); // correct runs only, ratio of sums
    expect(m.wastedCalls).toBeCloseTo((0 + 2 + 0 + 1 + 0) / 5); // completed runs: the validator-error run wasted 1
    expect(m.speedSeconds).toBeCloseTo((1 + 3 + 2 + 4) / 4); // completed, compaction-tagged left out
    expect(m.reasoning.meanMessages).toBe(3 / 6);
    expect(m.reasoning.withReasoning).toMatchObject({ validated: 2, correct: 1 });
    expect(m.reasoning.withoutReasoning).toMatchObject({ validated: 2, correct: 2 });
    expect(m.compactionRuns).toBe(1);
    expect(m.maxPhase).toBe(2);
  });

  it("an empty denominator is null, not a number that looks measured", () => {
    const m = computeMetrics([record({ completed: false, correct: false }), record({ runIndex: 1, correct: false, validationError: "Error: x" })]);
    expect(m.validatedAccuracy).toBeNull();
    expect(m.efficiency).toBeNull();
    expect(m.speedSeconds).not.toBeNull();
    expect(computeMetrics([record({ completed: false, correct: false })]).wastedCalls).toBeNull();
    expect(computeMetrics([record({ tags: ["compaction"] })]).speedSeconds).toBeNull();
  });

  it("rates lie in [0, 1] and agree with their counts", () => {
    fc.assert(
      fc.property(fc.array(arbRecord, { minLength: 1, maxLength: 40 }), (rs) => {
        const m = computeMetrics(rs);
        for (const r of [m.score, m.completeness, m.validatedAccuracy, m.reasoning.withReasoning.accuracy, m.reasoning.withoutReasoning.accuracy]) {
          if (r === null) continue;
          expect(r.rate).toBeGreaterThanOrEqual(0);
          expect(r.rate).toBeLessThanOrEqual(1);
          expect(r.low).toBeLessThanOrEqual(r.rate + 1e-12);
          expect(r.high).toBeGreaterThanOrEqual(r.rate - 1e-12);
        }
        if (m.efficiency !== null) {
          expect(m.efficiency).toBeGreaterThan(0);
          expect(m.efficiency).toBeLessThanOrEqual(1);
        }
        expect(m.correct).toBeLessThanOrEqual(m.validated);
        expect(m.validated + m.validationErrors).toBe(m.completed);
        expect(m.score.rate).toBeLessThanOrEqual(m.completeness.rate);
        expect(m.reasoning.withReasoning.validated + m.reasoning.withoutReasoning.validated).toBe(m.validated);
        expect(m.wastedCalls === null || m.wastedCalls >= 0).toBe(true);
      }),
    );
  });

  it("efficiency is 1 when every correct run took the ideal path, whatever the failed runs did", () => {
    fc.assert(
      fc.property(fc.array(arbRecord, { minLength: 1, maxLength: 30 }), (rs) => {
        const ideal = rs.map((r) => (r.correct ? { ...r, iterations: r.idealIterations } : r));
        expect(efficiencyOf(ideal)).toBe(ideal.some((r) => r.correct) ? 1 : null);
      }),
    );
  });

  it("validated accuracy ignores validator errors; score counts them as attempted", () => {
    fc.assert(
      fc.property(fc.array(arbRecord, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 5 }), (rs, extra) => {
        const before = computeMetrics(rs);
        const errors = Array.from({ length: extra }, (_, i) => record({ runIndex: 100 + i, correct: false, validationError: "RangeError: no", errorType: "ValidationError" }));
        const after = computeMetrics([...rs, ...errors]);
        expect(after.validatedAccuracy).toEqual(before.validatedAccuracy);
        expect(after.validated).toBe(before.validated);
        expect(after.attempted).toBe(before.attempted + extra);
        expect(after.score.rate).toBeLessThanOrEqual(before.score.rate);
      }),
    );
  });

  it("groups by config, ranks best first and keeps per-scenario breakdowns consistent", () => {
    fc.assert(
      fc.property(fc.array(arbRecord, { minLength: 1, maxLength: 60 }), (rs) => {
        const ms = metricsByConfig(rs);
        expect(ms.reduce((n, m) => n + m.attempted, 0)).toBe(rs.length);
        for (let i = 1; i < ms.length; i++) expect(ms[i - 1]!.score.rate).toBeGreaterThanOrEqual(ms[i]!.score.rate);
        for (const m of ms) {
          const own = rs.filter((r) => r.config === m.config);
          expect(m.correct).toBe(own.filter((r) => r.correct).length);
          expect(m.generation).toBe(Math.max(...own.map((r) => r.generation)));
          expect(Object.values(m.scenarios).reduce((n, s) => n + s.correct, 0)).toBe(m.correct);
          expect(m.runsPerScenario).toBe(Math.max(...Object.values(m.scenarios).map((s) => s.attempted)));
        }
      }),
    );
  });

  it("ties on score rank by completeness, then efficiency, then speed", () => {
    const rs = [
      record({ config: "c@slow", elapsedMs: 5000 }),
      record({ config: "c@fast", elapsedMs: 1000 }),
      record({ config: "c@wasteful", iterations: 4, elapsedMs: 1 }),
      record({ config: "c@incomplete" }),
      record({ config: "c@incomplete", runIndex: 1, completed: false, correct: false }),
      record({ config: "c@slow", runIndex: 1, correct: false, errorType: "ValidationFailed" }),
      record({ config: "c@fast", runIndex: 1, correct: false, errorType: "ValidationFailed" }),
      record({ config: "c@wasteful", runIndex: 1, correct: false, errorType: "ValidationFailed" }),
    ];
    expect(metricsByConfig(rs).map((m) => m.config)).toEqual(["c@fast", "c@slow", "c@wasteful", "c@incomplete"]);
  });

  it("compares two configs on shared (scenario, run index) pairs", () => {
    const rs = [0, 1, 2, 3, 4, 5, 6, 7].flatMap((i) => [
      record({ config: "x@reforged", ablation: "reforged", runIndex: i }),
      record({ config: "x@bare", ablation: "bare", runIndex: i, correct: i === 0 }),
    ]);
    const c = compareConfigs(rs, "x@reforged", "x@bare");
    expect(c).toMatchObject({ pairs: 8, onlyA: 7, onlyB: 0, bothPass: 1 });
    expect(c.pValue).toBeCloseTo(2 / 128, 10);
    expect(c.significant).toBe(true);
    expect(liftByScenario(rs, "x@reforged", "x@bare")).toEqual([{ scenario: "basic_2step", a: 1, b: 0.125, lift: 0.875 }]);
  });
});

describe("merging results files by generation", () => {
  const keyOf = (r: RunRecord) => `${r.key}@${r.generation}`;
  const sorted = (rs: readonly RunRecord[]) => rs.map(keyOf).sort();

  it("keeps only each config's newest generation, and says what it left out", () => {
    fc.assert(
      fc.property(fc.array(arbRecord, { maxLength: 50 }), (rs) => {
        const merged = mergeGenerations(rs);
        for (const config of new Set(rs.map((r) => r.config))) {
          const newest = Math.max(...rs.filter((r) => r.config === config).map((r) => r.generation));
          const kept = merged.records.filter((r) => r.config === config);
          expect(kept.length).toBeGreaterThan(0);
          expect(kept.every((r) => r.generation === newest)).toBe(true);
          // Every key of the newest generation survives, once.
          expect(new Set(kept.map((r) => r.key))).toEqual(new Set(rs.filter((r) => r.config === config && r.generation === newest).map((r) => r.key)));
        }
        expect(new Set(merged.records.map((r) => r.key)).size).toBe(merged.records.length);
        const superseded = merged.superseded.reduce((n, s) => n + s.runs, 0);
        expect(merged.records.length + superseded + merged.duplicates).toBe(rs.length);
      }),
    );
  });

  it("is order-independent when no key repeats at one generation", () => {
    const unique = fc.uniqueArray(arbRecord, { selector: keyOf, maxLength: 40 });
    fc.assert(
      fc.property(unique.chain((rs) => fc.tuple(fc.constant(rs), fc.shuffledSubarray(rs, { minLength: rs.length, maxLength: rs.length }))), ([rs, shuffled]) => {
        const a = mergeGenerations(rs);
        const b = mergeGenerations(shuffled);
        expect(sorted(b.records)).toEqual(sorted(a.records));
        expect(b.superseded).toEqual(a.superseded);
        expect(a.duplicates).toBe(0);
      }),
    );
  });

  it("a key recorded twice at one generation keeps the later record", () => {
    const first = record({ generation: 2, correct: false, errorType: "ValidationFailed", timestamp: "2026-01-01T00:00:00.000Z" });
    const again = record({ generation: 2, timestamp: "2026-02-01T00:00:00.000Z" });
    const old = record({ generation: 1, runIndex: 7 });
    const merged = mergeGenerations([old, first, again]);
    expect(merged.records).toEqual([again]);
    expect(merged.duplicates).toBe(1);
    expect(merged.superseded).toEqual([{ config: "sim:small-model@reforged", generation: 2, older: [1], runs: 1 }]);
    expect(mergeGenerations([again, first]).records).toEqual([first]);
    expect(mergeNotes(merged)).toEqual([
      "superseded: 1 run(s) of older generations left out (sim:small-model@reforged: gen 1 → 2, 1 run(s))",
      "duplicates: 1 run(s) recorded again at the same generation; the later record of each key kept",
    ]);
    expect(mergeNotes(mergeGenerations([again]))).toEqual([]);
  });
});
