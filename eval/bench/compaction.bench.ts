/**
 * Compaction cost on realistic loop histories (`npm run bench -- compaction`). The trigger is 0
 * so TieredCompact runs all three phases and writes its summary: the worst case per call.
 * Each figure is the best of three measured rounds.
 * Target: 2,000 messages ≤ 2 ms and linear growth (the "ratio 10k/1k" rows should be ≈ 10).
 */
import { createMessage, type Message } from "../../src/core/messages.js";
import type { CompactStrategy } from "../../src/context/compact-strategy.js";
import { SlidingWindowCompact } from "../../src/context/sliding-window-compact.js";
import { TieredCompact } from "../../src/context/tiered-compact.js";
import { fig, mdRow, measure, row, type BenchRow, type BenchSuite } from "./harness.js";

const SIZES = [100, 1_000, 2_000, 10_000] as const;
const FILLER = "Supplier ACME, SKU 4411, price 10.69 at MOQ 100, lead time 14 days, rating 4.2/5. ";

/** mulberry32: a seeded PRNG so every run measures the same histories. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const body = (length: number) => FILLER.repeat(Math.ceil(length / FILLER.length) + 1).slice(0, length);

/** System, user input, then iterations (reasoning, 1–3 call batch, results of 0–2000 chars, nudges). */
export function realisticHistory(size: number, seed = 42): Message[] {
  const r = rng(seed);
  const out: Message[] = [
    createMessage("system", "You are a procurement analyst. Use the tools, then call answer.", "system_prompt"),
    createMessage("user", "Audit the five suppliers and recommend one.", "user_input"),
  ];
  for (let step = 0; out.length < size; step++) {
    const at = { stepIndex: step };
    if (r() < 0.1) {
      out.push(createMessage("assistant", body(150), "text_response", at));
      out.push(createMessage("user", "Respond with a tool call.", "retry_nudge", at));
    }
    if (r() < 0.7) out.push(createMessage("assistant", body(Math.floor(r() * 600)), "reasoning", at));
    const calls = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, k) => ({
      name: `lookup_${k}`,
      args: { supplier: `S${step}`, field: k },
      callId: `c${step}_${k}`,
    }));
    out.push(createMessage("assistant", "", "tool_call", { ...at, toolCalls: calls }));
    for (const c of calls) {
      out.push(createMessage("tool", body(Math.floor(r() * 2001)), "tool_result", { ...at, toolName: c.name, toolCallId: c.callId }));
    }
    if (r() < 0.1) out.push(createMessage("tool", "[StepEnforcementError] call lookup_0 first", "step_nudge", at));
    if (r() < 0.05) out.push(createMessage("tool", "[PrereqError] lookup_1 needs lookup_0", "prerequisite_nudge", at));
  }
  return out.slice(0, size);
}

const STRATEGIES: [string, CompactStrategy][] = [
  ["TieredCompact", new TieredCompact()],
  ["SlidingWindowCompact", new SlidingWindowCompact()],
];

export const suite: BenchSuite = {
  name: "compaction",
  async run() {
    const rows: BenchRow[] = [];
    const histories = new Map(SIZES.map((n) => [n, realisticHistory(n)] as const));
    for (const [name, strategy] of STRATEGIES) {
      const perSize = new Map<number, number>();
      for (const n of SIZES) {
        const history = histories.get(n)!;
        const { phase } = strategy.compact(history, 0, { stepHint: "[Steps completed: lookup_0]" });
        const call = () => strategy.compact(history, 0, { stepHint: "[Steps completed: lookup_0]" });
        // best of 3 rounds: the machine is shared, and the minimum is the least disturbed figure
        let ms = Number.POSITIVE_INFINITY;
        for (let round = 0; round < 3; round++) {
          ms = Math.min(ms, await measure(call, { warmup: 20, minIterations: 50, minMs: 150 }));
        }
        perSize.set(n, ms);
        const note = `phase ${phase}` + (name === "TieredCompact" && n === 2_000 ? ", target <= 2 ms" : "");
        rows.push({ suite: "compaction", case: `${name} ${n.toLocaleString("en")} msgs`, value: ms, unit: "ms/call", note });
      }
      const ratio = perSize.get(10_000)! / perSize.get(1_000)!;
      rows.push({ suite: "compaction", case: `${name} ratio 10k/1k`, value: ratio, unit: "x", note: "~10 = linear" });
    }
    return rows;
  },
  readme(rows) {
    const sizes = SIZES.map((n) => n.toLocaleString("en")).join(" / ");
    const per = (name: string) => SIZES.map((n) => fig(row(rows, `${name} ${n.toLocaleString("en")} msgs`).value)).join(" / ");
    return [
      mdRow("compaction", `TieredCompact, phase 3, ${sizes} messages`, `${per("TieredCompact")} ms per call`, "2,000 msgs ≤ 2 ms"),
      mdRow(
        "compaction",
        `SlidingWindowCompact, ${sizes} messages`,
        `${per("SlidingWindowCompact")} ms per call`,
        `linear (10k / 1k = ${fig(row(rows, "SlidingWindowCompact ratio 10k/1k").value)})`,
      ),
    ];
  },
};
