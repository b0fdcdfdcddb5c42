import { describe, expect, it } from "vitest";
import type { BenchRow } from "../../eval/bench/harness.js";
import { checkedRows, missedTargets } from "../../eval/bench/targets.js";

const row = (suite: string, name: string, value: number, extra?: Record<string, number>): BenchRow => ({ suite, case: name, value, unit: "ms", ...(extra ? { extra } : {}) });

describe("bench --check", () => {
  it("passes rows that meet the README's targets and lists those that miss", () => {
    const rows = [
      row("compaction", "TieredCompact 2,000 msgs", 1.2),
      row("compaction", "TieredCompact 10,000 msgs", 9), // no target for this size
      row("proxy", "added latency p50, guarded (tools, validated)", 1.4),
      row("proxy", "added latency p50, minimal pass-through proxy (floor)", 5), // the floor has no target
      row("proxy", "200 concurrent streaming clients, 30 s", 1000, { errors: 2 }),
      row("snapshot", "persist + restore", 1.8),
      row("durability", "floor: one 1 KB append + fsync", 0.2),
      row("durability", "FileRunStore: commit, mean / median, N = 10", 0.3),
      row("durability", "SqlRunStore: commit, mean / median, N = 10", 0.5),
      row("chaos", "FileRunStore: lost", 0),
      row("runner", "ratio forge reused/ai-sdk7 N=1000", Number.NaN),
    ];
    const missed = missedTargets(rows).map((m) => `${m.row.case}: ${m.figure} (${m.target.text})`);
    expect(missed).toEqual([
      "added latency p50, guarded (tools, validated): 1.4 (p50 ≤ 1 ms)",
      "200 concurrent streaming clients, 30 s: 2 (0 errors)",
      "ratio forge reused/ai-sdk7 N=1000: NaN (≤ 0.2)",
      "SqlRunStore: commit, mean / median, N = 10: 0.5 (≤ 2× floor)",
    ]);
    expect(checkedRows(rows)).toBe(8);
  });
});
