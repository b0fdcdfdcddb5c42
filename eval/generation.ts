/**
 * Eval generations: which version of the suite a run was measured with. A results file is
 * append-only, so runs of several generations can sit in it (and in the files a report merges);
 * a batch redoes a run whose record is of an older generation, and a report keeps, per config,
 * only the runs of that config's newest generation.
 */
import type { RunRecord } from "./run-record.js";

/**
 * The generation every new record is stamped with (the harness does it).
 *
 * Bump it when a run recorded before a change would measure something other than a run of the
 * same key after it: a scenario's tools, data, prompt, validation or ideal iteration count
 * changed, a scenario renamed, an ablation preset's limits changed, or the harness counts a
 * field differently. Adding a scenario alone needs no bump: its keys are new and simply run.
 *
 * 1: every record written before records carried a generation.
 * 2: the suite aligned with forge's: new and renamed scenarios, forge's ablation limits
 *    (reforged retries five times per step; no_nudge also turns rescue off), validator errors
 *    recorded apart from wrong answers, reasoning messages counted.
 */
export const EVAL_GENERATION = 2;

/** One config whose runs of older generations were left out of a merge. */
export interface Superseded {
  config: string;
  /** The config's newest generation: the one kept. */
  generation: number;
  /** The older generations seen, ascending. */
  older: number[];
  /** Runs of those older generations left out. */
  runs: number;
}

export interface MergedRecords {
  /** What is kept, in input order. */
  records: RunRecord[];
  superseded: Superseded[];
  /** Runs left out because a later record has the same key at the same generation. */
  duplicates: number;
}

/**
 * Merge the records of several results files (concatenated in the order given): per config,
 * only the runs of its newest generation are kept; a key recorded twice at that generation
 * keeps the later record. Whole-config (not per scenario), as forge selects generations: a
 * config re-run at a new generation is judged only on its new runs.
 *
 * @example mergeGenerations([...readRecords("old.jsonl"), ...readRecords("new.jsonl")]).records
 */
export function mergeGenerations(records: readonly RunRecord[]): MergedRecords {
  const newest = new Map<string, number>();
  for (const r of records) newest.set(r.config, Math.max(newest.get(r.config) ?? 0, r.generation));
  const older = new Map<string, { generations: Set<number>; runs: number }>();
  const seen = new Set<string>();
  const kept: RunRecord[] = [];
  let duplicates = 0;
  // Backwards, so the first record of a key met is the later one in the input.
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (r.generation < newest.get(r.config)!) {
      const o = older.get(r.config) ?? { generations: new Set<number>(), runs: 0 };
      o.generations.add(r.generation);
      o.runs++;
      older.set(r.config, o);
    } else if (seen.has(r.key)) {
      duplicates++;
    } else {
      seen.add(r.key);
      kept.push(r);
    }
  }
  const superseded = [...older]
    .map(([config, o]) => ({ config, generation: newest.get(config)!, older: [...o.generations].sort((a, b) => a - b), runs: o.runs }))
    .sort((a, b) => a.config.localeCompare(b.config));
  return { records: kept.reverse(), superseded, duplicates };
}

/**
 * The one-line notes a report prints about a merge (none when nothing was left out).
 *
 * @example mergeNotes(mergeGenerations(records)) // ["superseded: 12 run(s) of older generations left out (sim:small-model@bare: gen 1 → 2, 12 runs)"]
 */
export function mergeNotes(merged: Pick<MergedRecords, "superseded" | "duplicates">): string[] {
  const notes: string[] = [];
  if (merged.superseded.length > 0) {
    const total = merged.superseded.reduce((n, s) => n + s.runs, 0);
    const each = merged.superseded.map((s) => `${s.config}: gen ${s.older.join(", ")} → ${s.generation}, ${s.runs} run(s)`);
    notes.push(`superseded: ${total} run(s) of older generations left out (${each.join("; ")})`);
  }
  if (merged.duplicates > 0) notes.push(`duplicates: ${merged.duplicates} run(s) recorded again at the same generation; the later record of each key kept`);
  return notes;
}

/**
 * The keys of the runs recorded at the current generation: what a batch skips. A run whose
 * only record is of an older generation is run again (its old record stays: the file is
 * append-only, and a report leaves the old one out).
 *
 * @example runEval({ ...plan, skip: currentKeys(readRecords("eval_results.jsonl")) })
 */
export function currentKeys(records: readonly RunRecord[], generation = EVAL_GENERATION): Set<string> {
  return new Set(records.filter((r) => r.generation === generation).map((r) => r.key));
}
