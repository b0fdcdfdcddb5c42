/**
 * Building blocks for scenario oracles: read `key=value` facts out of earlier tool results
 * and play an ordered plan, one step per turn, from whatever the view shows so far. Oracles
 * are pure functions of the view, so an injected fault (bare text, wrong tool) only costs the
 * simulated model a turn: on the next turn it resumes from the first unfinished step.
 */
import { createPrng, hashString } from "../../src/clients/prng.js";
import type { Oracle, OracleView, Slip } from "../scenario.js";

type Result = OracleView["results"][number];

/**
 * Our scenario tools never start a successful result with "["; runner error channels do.
 *
 * @example isSuccess({ tool: "t", args: {}, content: "[ToolError] x", isError: true }) // false
 */
export function isSuccess(r: Result): boolean {
  return !r.isError && !r.content.trimStart().startsWith("[");
}

/**
 * Every `key=value` pair in a tool result (values end at whitespace, comma or semicolon).
 *
 * @example facts("entity_id=42 name=Orion") // { entity_id: "42", name: "Orion" }
 */
export function facts(content: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of content.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=([^\s,;]+)/g)) out[m[1]!] = m[2]!;
  return out;
}

/**
 * Facts from the successful results seen so far, newest last.
 *
 * @example new Seen(view.results).get("search_companies", "entity_id", "42")
 */
export class Seen {
  constructor(readonly results: readonly Result[]) {}

  /** `key` from the latest successful result of `tool`, or `fallback` when it is not visible. */
  get(tool: string, key: string, fallback: string): string {
    for (let i = this.results.length - 1; i >= 0; i--) {
      const r = this.results[i]!;
      if (r.tool === tool && isSuccess(r)) {
        const v = facts(r.content)[key];
        if (v !== undefined) return v;
      }
    }
    return fallback;
  }

  /**
   * The content of the latest successful result of `tool`, or "" when none is visible: an
   * answer written from it then lacks the facts, as a model's answer would.
   */
  text(tool: string): string {
    return this.successes(tool).at(-1)?.content ?? "";
  }

  /** All successful results of `tool`. */
  successes(tool: string): Result[] {
    return this.results.filter((r) => r.tool === tool && isSuccess(r));
  }

  /** `tool` has at least one successful result. */
  succeeded(tool: string): boolean {
    return this.results.some((r) => r.tool === tool && isSuccess(r));
  }

  /**
   * A call to `tool` came back after the first successful result of `after`: how a slip that
   * starts once `after` is read ends after one attempt, whatever an earlier fault tried.
   */
  triedAfter(tool: string, after: string): boolean {
    const from = this.results.findIndex((r) => r.tool === after && isSuccess(r));
    return from >= 0 && this.results.slice(from + 1).some((r) => r.tool === tool);
  }

  tried(tool: string): boolean {
    return this.results.some((r) => r.tool === tool);
  }

  /** A person declined a call to `tool` (its `[Rejected]` result); the latest such, if any. */
  rejected(tool: string): Result | undefined {
    return this.results.findLast((r) => r.tool === tool && r.content.startsWith("[Rejected]"));
  }
}

/**
 * Turns of the run that brought no tool result: prose the runner answered with a retry nudge
 * (or an empty reply). A slip that answers in prose holds while this is 0, so it is played
 * once and the nudged model goes back to the plan. (A turn with parallel calls brings several
 * results; our plain oracles make one call per turn.)
 *
 * @example unansweredTurns({ results: [], userInput: "q", toolNames: [], turn: 1 }) // 1
 */
export function unansweredTurns(view: OracleView): number {
  return Math.max(0, view.turn - view.results.length);
}

export interface PlanStep {
  tool: string;
  /** Arguments of the correct call, computed from what has been seen. */
  args: (seen: Seen) => Record<string, unknown>;
  /** Arguments of a deliberately wrong first attempt (error-recovery scenarios). */
  firstTry?: Record<string, unknown>;
}

function sameArgs(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) return false;
  return true;
}

/**
 * An oracle that plays `steps` in order: each turn it makes the first step that has no
 * successful result with the same arguments yet. The last step is normally the terminal tool.
 *
 * @example
 * const oracle = planOracle([
 *   { tool: "get_weather", args: () => ({ city: "Paris" }) },
 *   { tool: "report_weather", args: (s) => ({ city: "Paris", temp_c: Number(s.get("get_weather", "temp_c", "18")) }) },
 * ]);
 */
export function planOracle(steps: readonly PlanStep[]): Oracle {
  if (steps.length === 0) throw new Error("planOracle needs at least one step");
  return (view) => {
    const seen = new Seen(view.results);
    for (const step of steps) {
      const args = step.args(seen);
      const done = seen.successes(step.tool).some((r) => sameArgs(r.args, args));
      if (done) continue;
      if (step.firstTry && !seen.tried(step.tool)) return { tool: step.tool, args: step.firstTry };
      return { tool: step.tool, args };
    }
    // Every step succeeded but the run goes on (a terminal call was blocked): call it again.
    const last = steps[steps.length - 1]!;
    return { tool: last.tool, args: last.args(seen) };
  };
}

/**
 * An oracle that plays `plan` until a person declines a call to `tool` (a `[Rejected]`
 * result), then `recovery`: the way round the person asked for. Steps both plans share are
 * done already and skipped.
 *
 * @example
 * unlessRejected("issue_refund", [lookup, refund, reply], [lookup, escalate, replyEscalated]);
 */
export function unlessRejected(tool: string, plan: readonly PlanStep[], recovery: readonly PlanStep[]): Oracle {
  const first = planOracle(plan);
  const second = planOracle(recovery);
  return (view) => (new Seen(view.results).rejected(tool) ? second(view) : first(view));
}

/**
 * Deterministic filler text of about `chars` characters, for context-pressure scenarios.
 *
 * @example filler("log", 3000).length >= 3000 // true
 */
export function filler(label: string, chars: number): string {
  const words = ["ledger", "entry", "routine", "checksum", "nominal", "archived", "batch", "record", "sync", "window"];
  const out: string[] = [];
  let n = 0;
  let i = 0;
  while (n < chars) {
    const w = `${words[i % words.length]}-${label}-${i}`;
    out.push(w);
    n += w.length + 1;
    i++;
  }
  return out.join(" ");
}

/**
 * A per-run oracle that remembers every result it has seen, so results that compaction later
 * truncates or drops from the context stay known. The simulated model thereby measures the
 * loop's plumbing under compaction (does the run survive it?), not a model's recall.
 *
 * @example new SimulatedClient({ oracle: rememberingOracle(scenario.oracle), ... })
 */
export function rememberingOracle(oracle: Oracle): Oracle {
  const memory: Result[] = [];
  const known = new Set<string>();
  return (view) => {
    for (const r of view.results) {
      const key = `${r.callId ?? ""}|${r.tool}|${JSON.stringify(r.args)}|${r.content}`;
      if (known.has(key)) continue;
      known.add(key);
      memory.push(r);
    }
    return oracle({ ...view, results: [...memory] });
  };
}

/** How often each profile slips, relative to a Slip's `rate` (the small-model figure). */
const SLIP_FACTOR: Record<string, number> = { clean: 0, "small-model": 1, chaotic: 2 };

/**
 * The slips active in one run: each is rolled once from the run's seed and the slip's name,
 * so the same (seed, scenario, run) slips the same way under every ablation, and reforged vs
 * bare compare the same model mistakes.
 *
 * @example activeSlips(scenario.slips ?? [], "small-model", 1234).map((s) => s.name)
 */
export function activeSlips(slips: readonly Slip[], profile: string, seed: number): Slip[] {
  const factor = SLIP_FACTOR[profile] ?? 1;
  return slips.filter((slip) => {
    if (!(slip.rate >= 0 && slip.rate <= 1)) throw new RangeError(`slip ${slip.name}: rate must be in [0, 1], got ${slip.rate}`);
    return createPrng(hashString(`${seed}|slip|${slip.name}`)).next() < Math.min(1, slip.rate * factor);
  });
}

/**
 * The oracle with this run's slips played over it: the first active slip whose `when` holds
 * decides the turn, else the oracle does.
 *
 * @example new SimulatedClient({ oracle: rememberingOracle(slippingOracle(s.oracle, activeSlips(s.slips ?? [], "small-model", seed))), ... })
 */
export function slippingOracle(oracle: Oracle, slips: readonly Slip[]): Oracle {
  if (slips.length === 0) return oracle;
  return (view) => {
    for (const slip of slips) if (slip.when(view)) return slip.step(view);
    return oracle(view);
  };
}
