/**
 * `npm run bench -- durability`: what durability costs and whether it holds.
 * - Cost: per committed step on each store (FileRunStore, SqlRunStore on a file, PostgresRunStore
 *   on a local server) at 10, 100 and 1,000 iterations, against one 1 KB append + fsync measured
 *   in the same run; bytes per commit; one lease renewal.
 * - Faults: the kill -9 harness at scale (FORGE_BENCH_KILLS runs per store, default 500; 0 skips
 *   it; FORGE_BENCH_STORES=file,sql). Each run is killed at a random moment and resumed in a new
 *   process, a third of them killed again.
 */
import { phaseProgress } from "../progress.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import { appendFsyncFloor, asyncAppendFloor, commitCost, renewalCost, scratchDir, withoutStore } from "./commit-cost.js";
import { killHarness, type StoreKind } from "./durability-harness.js";
import { fig, mdRow, row, type BenchRow, type BenchSuite } from "./harness.js";
import { startPostgres } from "./postgres-server.js";

const RUNS = Number(process.env.FORGE_BENCH_KILLS ?? 500);
const STORES = (process.env.FORGE_BENCH_STORES ?? "file,sql").split(",") as StoreKind[];
const LABEL: Record<StoreKind, string> = { file: "FileRunStore", sql: "SqlRunStore" };
const SIZES = [10, 100, 1_000];
const COST_STORES = ["FileRunStore", "SqlRunStore", "PostgresRunStore"] as const;

async function costRows(): Promise<BenchRow[]> {
  const dir = scratchDir();
  const rows: BenchRow[] = [];
  const add = (name: string, value: number, unit: string, note = "") => rows.push({ suite: "durability", case: name, value, unit, note });
  add("floor: one 1 KB append + fsync", appendFsyncFloor(dir), "ms", "median of 300, same disk");
  add("floor: the same through fs.promises", await asyncAppendFloor(dir), "ms", "write + datasync on the thread pool, as an async store does");
  for (const n of SIZES) add(`no store, per iteration, N = ${n}`, await withoutStore(n), "ms");
  const pg = await startPostgres();
  try {
    const stores: Record<(typeof COST_STORES)[number], () => Promise<RunStore>> = {
      FileRunStore: async () => new FileRunStore({ dir }),
      SqlRunStore: async () => new SqlRunStore({ url: `file:${dir}/runs.db` }),
      PostgresRunStore: async () => new (await import("../../src/persistence/postgres-run-store.js")).PostgresRunStore({ url: pg.url }),
    };
    for (const label of COST_STORES) {
      const store = await stores[label]();
      for (const n of SIZES) {
        const c = await commitCost(store, n, `${label}-${n}`);
        add(`${label}: commit, mean / median, N = ${n}`, c.meanMs, "ms", `median ${c.medianMs.toFixed(3)} ms; ${c.commits} commits (${(c.commits / n).toFixed(1)} per iteration), ${c.wholeCommits} whole`);
        add(`${label}: bytes per commit, N = ${n}`, c.meanBytes, "B", `deltas and events only: ${c.meanDeltaBytes.toFixed(0)} B`);
        add(`${label}: per iteration with the store, N = ${n}`, c.perIterationMs, "ms");
      }
      add(`${label}: lease renewal`, await renewalCost(store), "ms", "median of 100; one per lease/3 (10 s by default), not per step");
      await (store as { close?: () => Promise<void> }).close?.();
    }
  } finally {
    await pg.stop();
  }
  return rows;
}

async function killRows(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const store of STORES) {
    if (!(store in LABEL)) throw new Error(`FORGE_BENCH_STORES: unknown store "${store}" (file, sql)`);
    const started = performance.now();
    const progress = phaseProgress(`durability ${store}: kill -9 runs`, RUNS);
    const r = await killHarness(RUNS, { seed: 42, store, onRun: (done) => progress.update(done) });
    progress.done();
    const seconds = (performance.now() - started) / 1000;
    const count = (name: string, value: number, note = ""): BenchRow => ({ suite: "durability", case: `${LABEL[store]}: ${name}`, value, unit: "count", note });
    rows.push(
      count("kill -9 points", r.kills, `${RUNS} runs, ${r.processes} processes, ${seconds.toFixed(0)} s`),
      count("runs completed with the uninterrupted result", r.completed, `of ${RUNS}`),
      count("finished tools re-executed", r.finishedReexecuted, "must be 0"),
      count("recorded tools re-executed", r.recordedReexecuted, "must be 0"),
      count("in-flight calls re-executed (at-least-once)", r.inFlightReexecuted),
      count("torn or corrupt checkpoints", r.tornCheckpoints, "must be 0"),
      count("event logs unreadable after the run", r.corruptLogs, "must be 0"),
      count("hangs", r.hangs, "must be 0"),
      count("wrong results", r.wrongResults, r.firstFailure ? `must be 0; first: ${r.firstFailure}` : "must be 0"),
    );
  }
  return rows;
}

export const suite: BenchSuite = {
  name: "durability",
  async run() {
    return [...(await costRows()), ...(RUNS > 0 ? await killRows() : [])];
  },
  readme(rows) {
    const v = (name: string) => fig(row(rows, name).value);
    const floor = row(rows, "floor: one 1 KB append + fsync").value;
    const asyncFloor = row(rows, "floor: the same through fs.promises").value;
    const cost = COST_STORES.map((label) => {
      const means = SIZES.map((n) => row(rows, `${label}: commit, mean / median, N = ${n}`));
      const medians = means.map((r) => r.note?.match(/median ([\d.]+)/)?.[1] ?? "?");
      const bytes = SIZES.map((n) => fig(Number(row(rows, `${label}: bytes per commit, N = ${n}`).note?.match(/(\d+) B/)?.[1])));
      return mdRow(
        "durability",
        `${label}: one committed step (fenced commit), N = 10 / 100 / 1,000 iterations; floor ${fig(floor)} ms (1 KB append + fsync; ${fig(asyncFloor)} ms through fs.promises)`,
        `mean ${means.map((r) => fig(r.value)).join(" / ")} ms, median ${medians.join(" / ")} ms (${(means[2]!.value / floor).toFixed(1)}× the floor at 1,000); delta bytes ${bytes.join(" / ")}; lease renewal ${v(`${label}: lease renewal`)} ms`,
        "≤ 2× floor, flat",
      );
    });
    if (RUNS === 0) return cost;
    return [
      ...cost,
      ...STORES.map((store) => {
        const k = (name: string) => v(`${LABEL[store]}: ${name}`);
        return mdRow(
          "durability",
          `kill -9 at random moments, ${LABEL[store]}, resumed in a new process (${k("kill -9 points")} kills)`,
          `${k("runs completed with the uninterrupted result")} of ${RUNS} runs completed; finished tools re-run ${k("finished tools re-executed")}, recorded tools re-run ${k("recorded tools re-executed")}, torn checkpoints ${k("torn or corrupt checkpoints")}, unreadable logs ${k("event logs unreadable after the run")}, hangs ${k("hangs")}, wrong results ${k("wrong results")}; in-flight calls re-run ${k("in-flight calls re-executed (at-least-once)")}`,
          "0 / 0 / 0 / 0 / 0 / 0",
        );
      }),
    ];
  },
};
