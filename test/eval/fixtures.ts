import { EVAL_GENERATION } from "../../eval/generation.js";
import type { RunRecord } from "../../eval/run-record.js";

/** A valid run record with overridable fields (test fixture). */
export function record(over: Partial<RunRecord> = {}): RunRecord {
  const base: RunRecord = {
    key: "", config: "sim:small-model@reforged", backend: "sim", model: "small-model", ablation: "reforged",
    scenario: "basic_2step", tags: ["plumbing"], runIndex: 0, seed: 1, generation: EVAL_GENERATION, completed: true, correct: true,
    iterations: 2, idealIterations: 2, wastedCalls: 0, elapsedMs: 10, compactions: 0, compactionPhases: [],
    streamRetries: 0, inputTokens: 100, outputTokens: 20, retryNudges: 0, stepNudges: 0, prereqNudges: 0,
    rescues: 0, toolErrors: 0, reasoningMessages: 0, timestamp: "2026-01-01T00:00:00.000Z",
  };
  const r = { ...base, ...over };
  return { ...r, key: r.key || `${r.config}|${r.scenario}|${r.runIndex}` };
}
