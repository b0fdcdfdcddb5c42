/**
 * `npm run bench -- chaos`: the chaos harness (chaos-harness.ts) on each store: 3 worker
 * processes take FORGE_BENCH_CHAOS_RUNS runs and session turns (default 500) from two producers
 * while FORGE_BENCH_CHAOS_FAULTS faults (default 50: two Redis restarts, a third of the rest
 * SIGSTOPs past the lease, the others kill -9) hit them. FORGE_BENCH_CHAOS_STORES picks the
 * stores (default file,sql,postgres); FORGE_BENCH_CHAOS_KEEP=1 keeps each store's directory
 * (effects file, workers' stderr), which is kept anyway when a check fails. Prints a table of
 * the stores side by side; the README rows say the same.
 */
import { phaseProgress, type PhaseProgress } from "../progress.js";
import { chaosHarness, type ChaosReport } from "./chaos-harness.js";
import type { ChaosStoreKind } from "./chaos-workflow.js";
import { fig, mdRow, row, type BenchRow, type BenchSuite } from "./harness.js";

const RUNS = Number(process.env.FORGE_BENCH_CHAOS_RUNS ?? 500);
const FAULTS = Number(process.env.FORGE_BENCH_CHAOS_FAULTS ?? 50);
const STORES = (process.env.FORGE_BENCH_CHAOS_STORES ?? "file,sql,postgres").split(",") as ChaosStoreKind[];
const LABEL: Record<ChaosStoreKind, string> = { file: "FileRunStore", sql: "SqlRunStore", postgres: "PostgresRunStore" };

/** The faults of FAULTS by kind. */
export function faultMix(faults: number): { kills: number; stops: number; redisRestarts: number } {
  const redisRestarts = Math.min(2, faults);
  const stops = Math.round((faults - redisRestarts) / 3);
  return { kills: faults - redisRestarts - stops, stops, redisRestarts };
}

/** The figures of one store, in print order: [case, value, unit, note]. */
function figures(r: ChaosReport): [string, number, string, string][] {
  return [
    ["runs enqueued", r.enqueued, "count", `of ${r.planned} planned; ${r.sessions} sessions; ${r.failingTurns} failing turns, ${r.failedFast} turns after them; ${r.seconds.toFixed(0)} s`],
    ["finished correctly", r.correct, "count", "result and store as expected (typed failure for failing turns and their followers)"],
    ["wrong outcomes", r.wrong, "count", "must be 0"],
    ["lost", r.lost, "count", "must be 0: no final state by the deadline, or active in the store"],
    ["run twice", r.runsTwice, "count", `must be 0 (${r.staleStarts} tool starts under a superseded lease)`],
    ["recorded tools re-run", r.recordedReruns, "count", "must be 0"],
    ["mid-call re-runs (at-least-once)", r.midCallReruns, "count", ""],
    ["session order violations", r.orderViolations, "count", "must be 0"],
    ["jammed sessions", r.jammedSessions, "count", `must be 0, of ${r.sessions}`],
    ["faults: kill -9", r.faults.kill ?? 0, "count", ""],
    ["faults: SIGSTOP past the lease", r.faults.stop ?? 0, "count", `${r.stolenFromStopped} runs taken over while stopped; ${r.unnoticedSteals} not told FORGE_LOCK_LOST (must be 0)`],
    ["faults: Redis restart", r.faults.redisRestart ?? 0, "count", ""],
    ["killed worker's run moves on, median", r.moveOnMs.median, "ms", `kill to first tool start elsewhere, ${r.moveOnMs.count} runs`],
    ["killed worker's run moves on, max", r.moveOnMs.max, "ms", ""],
    ["worker crashes", r.workerCrashes, "count", "must be 0"],
  ];
}

/** The per-store table the suite prints, a problem list under it when there is one. */
function printTable(reports: ChaosReport[]): void {
  const names = figures(reports[0]!).map(([name]) => name);
  const lines = [`| | ${reports.map((r) => LABEL[r.store]).join(" | ")} |`, `|---|${reports.map(() => "---:").join("|")}|`];
  for (const [i, name] of names.entries()) lines.push(`| ${name} | ${reports.map((r) => fig(figures(r)[i]![1])).join(" | ")} |`);
  console.log(`\nchaos: ${RUNS} runs and ${FAULTS} faults per store, 3 worker processes\n\n${lines.join("\n")}\n`);
  for (const r of reports.filter((r) => r.problems.length > 0)) {
    console.log(`${LABEL[r.store]}: first problems (files kept in ${r.keptDir}):\n${r.problems.slice(0, 5).map((p) => `  - ${p}`).join("\n")}\n`);
  }
}

export const suite: BenchSuite = {
  name: "chaos",
  async run() {
    const rows: BenchRow[] = [];
    const reports: ChaosReport[] = [];
    for (const store of STORES) {
      if (!(store in LABEL)) throw new Error(`FORGE_BENCH_CHAOS_STORES: unknown store "${store}" (file, sql, postgres)`);
      // Spread wide enough that the workers are busy through every fault, even the late ones.
      const spreadMs = Math.max(RUNS * 80, FAULTS * 800);
      let settling: PhaseProgress | undefined;
      const onSettled = (done: number, total: number) => (settling ??= phaseProgress(`chaos ${store}: runs settled`, total)).update(done);
      const report = await chaosHarness({ store, runs: RUNS, ...faultMix(FAULTS), spreadMs, settleMs: 120_000, seed: 42, keep: process.env.FORGE_BENCH_CHAOS_KEEP === "1", log: (line) => process.stderr.write(`${line}\n`), onSettled });
      settling?.done();
      reports.push(report);
      for (const [name, value, unit, note] of figures(report)) rows.push({ suite: "chaos", case: `${LABEL[store]}: ${name}`, value, unit, note });
    }
    printTable(reports);
    return rows;
  },
  readme(rows) {
    return STORES.map((store) => {
      const v = (name: string) => fig(row(rows, `${LABEL[store]}: ${name}`).value);
      return mdRow(
        "chaos",
        `3 worker processes on ${LABEL[store]} + Redis, two producers, sessions; ${v("faults: kill -9")} kill -9, ${v("faults: SIGSTOP past the lease")} SIGSTOP, ${v("faults: Redis restart")} Redis restarts`,
        `${v("finished correctly")} of ${v("runs enqueued")} runs correct; lost ${v("lost")}, run twice ${v("run twice")}, recorded tools re-run ${v("recorded tools re-run")}, order violations ${v("session order violations")}, jammed sessions ${v("jammed sessions")}; mid-call re-runs ${v("mid-call re-runs (at-least-once)")}; a killed worker's run moves on in ${v("killed worker's run moves on, median")} ms (max ${v("killed worker's run moves on, max")})`,
        "0 / 0 / 0 / 0 / 0",
      );
    });
  },
};
