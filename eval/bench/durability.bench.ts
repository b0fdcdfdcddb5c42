/**
 * `npm run bench -- durability`: the kill -9 harness at scale, for each store (FORGE_BENCH_KILLS
 * runs per store, default 500; FORGE_BENCH_STORES=file,sql by default). Each run is killed at a
 * random moment and resumed in a new process, a third of them killed again.
 */
import { killHarness, type StoreKind } from "./durability-harness.js";
import { fig, mdRow, row, type BenchRow, type BenchSuite } from "./harness.js";

const RUNS = Number(process.env.FORGE_BENCH_KILLS ?? 500);
const STORES = (process.env.FORGE_BENCH_STORES ?? "file,sql").split(",") as StoreKind[];
const LABEL: Record<StoreKind, string> = { file: "FileRunStore", sql: "SqlRunStore" };

export const suite: BenchSuite = {
  name: "durability",
  async run() {
    const rows: BenchRow[] = [];
    for (const store of STORES) {
      if (!(store in LABEL)) throw new Error(`FORGE_BENCH_STORES: unknown store "${store}" (file, sql)`);
      const started = performance.now();
      const r = await killHarness(RUNS, { seed: 42, store });
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
  },
  readme(rows) {
    return STORES.map((store) => {
      const v = (name: string) => fig(row(rows, `${LABEL[store]}: ${name}`).value);
      return mdRow(
        "durability",
        `kill -9 at random moments, ${LABEL[store]}, resumed in a new process (${v("kill -9 points")} kills)`,
        `${v("runs completed with the uninterrupted result")} of ${RUNS} runs completed; finished tools re-run ${v("finished tools re-executed")}, torn checkpoints ${v("torn or corrupt checkpoints")}, unreadable logs ${v("event logs unreadable after the run")}, hangs ${v("hangs")}, wrong results ${v("wrong results")}; in-flight calls re-run ${v("in-flight calls re-executed (at-least-once)")}`,
        "0 / 0 / 0 / 0 / 0",
      );
    });
  },
};
