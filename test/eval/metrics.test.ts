import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compareConfigs, computeMetrics, liftByScenario, metricsByConfig } from "../../eval/metrics.js";
import { record } from "./fixtures.js";

describe("metrics", () => {
  it("computes score, accuracy, completeness, efficiency and wasted calls", () => {
    const rs = [
      record({ runIndex: 0 }),
      record({ runIndex: 1, iterations: 4, wastedCalls: 2 }),
      record({ runIndex: 2, correct: false, errorType: "ValidationFailed", iterations: 2 }),
      record({ runIndex: 3, completed: false, correct: false, iterations: 6, wastedCalls: 4, compactions: 2, compactionPhases: [1, 2] }),
    ];
    const m = computeMetrics(rs);
    expect(m.runs).toBe(4);
    expect(m.score.rate).toBe(0.5);
    expect(m.accuracy.rate).toBeCloseTo(2 / 3);
    expect(m.completeness.rate).toBe(0.75);
    expect(m.efficiency).toBeCloseTo((1 + 0.5 + 1) / 3);
    expect(m.wastedCalls).toBe(1.5);
    expect(m.compactionRuns).toBe(1);
    expect(m.maxPhase).toBe(2);
  });

  it("groups by config, sorts by score and keeps per-scenario breakdowns consistent", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ cfg: fc.constantFrom("a@reforged", "a@bare", "b@reforged"), sc: fc.constantFrom("s1", "s2"), ok: fc.boolean(), i: fc.nat(9) }), { minLength: 1, maxLength: 60 }),
        (rows) => {
          const rs = rows.map((r, n) => record({ config: r.cfg, scenario: r.sc, correct: r.ok, runIndex: r.i, key: `k${n}` }));
          const ms = metricsByConfig(rs);
          expect(ms.reduce((n, m) => n + m.runs, 0)).toBe(rs.length);
          for (let i = 1; i < ms.length; i++) expect(ms[i - 1]!.score.rate).toBeGreaterThanOrEqual(ms[i]!.score.rate);
          for (const m of ms) {
            const own = rs.filter((r) => r.config === m.config);
            expect(m.correct).toBe(own.filter((r) => r.correct).length);
            expect(Object.values(m.scenarios).reduce((n, s) => n + s.correct, 0)).toBe(m.correct);
          }
        },
      ),
    );
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
