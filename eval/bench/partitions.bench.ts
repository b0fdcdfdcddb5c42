/**
 * `npm run bench -- partitions`: the partitions harness (partitions-harness.ts) once per fault
 * kind, each a batch of FORGE_BENCH_PARTITIONS_RUNS runs and session turns (default 200) on test
 * hosts (network namespaces: PostgreSQL and Redis on `db`, a worker on each of w1–w3, two
 * producers on `p`). FORGE_BENCH_PARTITIONS_KINDS picks the kinds (default all);
 * FORGE_BENCH_PARTITIONS_KEEP=1 keeps each batch's directory (effects file, workers' stderr),
 * which is kept anyway when a check fails. Needs root. Prints one row per kind; the README rows
 * say the same.
 */
import { phaseProgress } from "../progress.js";
import type { Spread } from "./chaos-harness.js";
import { fig, mdRow, row, type BenchRow, type BenchSuite } from "./harness.js";
import { FAULT_KINDS, LINK, partitionsBatch, SKEW_SECONDS, spreadFor, type FaultKind, type PartitionReport } from "./partitions-harness.js";

const RUNS = Number(process.env.FORGE_BENCH_PARTITIONS_RUNS ?? 200);
/** The model's time per answer: runs of about a second, so that each fault finds runs in flight on its victim (the move-on figures). */
const THINK_MS = 200;
const KINDS = (process.env.FORGE_BENCH_PARTITIONS_KINDS ?? FAULT_KINDS.join(",")).split(",") as FaultKind[];

/** Faults per batch of each kind: server restarts take a second or two each, link faults and stops several. */
export const FAULTS_PER_KIND: Record<FaultKind, number> = { cut: 6, down: 6, lossy: 6, slow: 6, skew: 8, "pg-restart": 3, "redis-restart": 3, kill: 10, stop: 8 };

/** What each kind does, as the table says it. */
const WHAT: Record<FaultKind, string> = {
  cut: `worker's link drops every packet for ${LINK.cutMs[0] / 1000}–${LINK.cutMs[1] / 1000} s (past the lease; connections hang)`,
  down: `worker's link down for ${LINK.cutMs[0] / 1000}–${LINK.cutMs[1] / 1000} s (connections fail at once)`,
  lossy: `${LINK.lossPercent}% of a worker's packets dropped, both ways, ${LINK.lossMs[0] / 1000}–${LINK.lossMs[1] / 1000} s`,
  slow: `worker's link shaped to ${LINK.rateKbit} kbit/s, both ways, ${LINK.lossMs[0] / 1000}–${LINK.lossMs[1] / 1000} s`,
  skew: `w2's clock ${SKEW_SECONDS / 60} min ahead, w3's ${SKEW_SECONDS / 60} min behind; SIGSTOPs past the lease move runs between them`,
  "pg-restart": "PostgreSQL stopped at once (immediate) and started again",
  "redis-restart": "Redis killed and started again",
  kill: "kill -9 of a worker driving a run (a replacement starts on its host)",
  stop: "SIGSTOP of a worker past its lease, then SIGCONT",
};

/** The move-on figure of a kind: the victim's runs elsewhere, or for a server restart the next tool start. */
function moveOn(kind: FaultKind, r: PartitionReport): Spread {
  if (kind === "kill") return r.moveOnMs;
  if (kind === "stop" || kind === "skew") return r.moveOnAfter.stopped;
  if (kind === "pg-restart" || kind === "redis-restart") return r.resumeMs;
  return r.moveOnAfter.cut;
}

/** The figures of one kind, in print order: [case, value, unit, note]. */
function figures(kind: FaultKind, r: PartitionReport): [string, number, string, string][] {
  const injected = Object.values(r.faults).reduce((a, b) => a + b, 0);
  const m = moveOn(kind, r);
  return [
    ["faults injected", injected, "count", `${Object.entries(r.faults).map(([k, n]) => `${n} ${k}`).join(", ")}; worker clocks ${[...new Set(r.clockOffsetsMs.map((ms) => Math.round(ms / 1000)))].join(" / ")} s off`],
    ["runs enqueued", r.enqueued, "count", `of ${r.planned} planned; ${r.sessions} sessions; ${r.seconds.toFixed(0)} s`],
    ["finished correctly", r.correct, "count", "result and store as expected"],
    ["wrong outcomes", r.wrong, "count", "must be 0"],
    ["lost", r.lost, "count", "must be 0"],
    ["recorded tools re-run", r.recordedReruns, "count", "must be 0"],
    ["double holders", r.fenceRegressions + r.runsTwice, "count", `must be 0: fences going down in the database's log (${r.fenceRegressions}), tool starts under a superseded lease (${r.staleStarts}); ${r.handedOver} runs changed hands`],
    ["tool starts past the lease while cut off", r.startsPastLease, "count", "must be 0"],
    ["late holders not told FORGE_LOCK_LOST", r.unnoticedSteals, "count", `must be 0, of ${r.stolenFromStopped} runs taken over during a fault`],
    ["leases taken from a live holder", r.liveSteals, "count", "must be 0"],
    ["session order violations", r.orderViolations, "count", "must be 0"],
    ["jammed sessions", r.jammedSessions, "count", "must be 0"],
    ["workers not recovered", r.unrecovered + r.workerCrashes, "count", `must be 0 (${r.workerCrashes} crashes)`],
    ["mid-call re-runs (at-least-once)", r.midCallReruns, "count", ""],
    ["run moves on, median", m.median, "ms", `${m.count} runs; ${kind.endsWith("restart") ? "from the restart to the next tool start" : "from the fault's start to the victim's run's next tool start elsewhere"}`],
    ["run moves on, max", m.max, "ms", ""],
    ["victim takes a run again, median", r.recoveryMs.median, "ms", `${r.recoveryMs.count} victims; from the fault's end to the victim's next lease`],
    ["victim takes a run again, max", r.recoveryMs.max, "ms", ""],
    ["outcome commit on the faulted link, median", r.commitMs.faulted.median, "ms", `${r.commitMs.faulted.count} commits; a call's end to its outcome durable in the store, by a worker whose link was faulted at the time (lossy, slow, cut, down)`],
    ["outcome commit on the faulted link, max", r.commitMs.faulted.max, "ms", ""],
    ["outcome commit elsewhere, median", r.commitMs.clean.median, "ms", `${r.commitMs.clean.count} commits`],
  ];
}

export const suite: BenchSuite = {
  name: "partitions",
  async run() {
    const rows: BenchRow[] = [];
    const reports: [FaultKind, PartitionReport][] = [];
    const progress = phaseProgress("partitions: fault kinds done", KINDS.length);
    for (const kind of KINDS) {
      if (!FAULT_KINDS.includes(kind)) throw new Error(`FORGE_BENCH_PARTITIONS_KINDS: unknown kind "${kind}" (${FAULT_KINDS.join(", ")})`);
      const faults = FAULTS_PER_KIND[kind];
      const report = await partitionsBatch({
        runs: RUNS,
        faults: { [kind]: faults },
        spreadMs: spreadFor(RUNS),
        settleMs: 120_000,
        seed: 42,
        thinkMs: THINK_MS,
        keep: process.env.FORGE_BENCH_PARTITIONS_KEEP === "1",
        log: (line) => process.stderr.write(`${line}\n`),
      });
      reports.push([kind, report]);
      progress.update(reports.length);
      for (const [name, value, unit, note] of figures(kind, report)) rows.push({ suite: "partitions", case: `${kind}: ${name}`, value, unit, note });
    }
    progress.done();
    printTable(reports);
    return rows;
  },
  readme(rows) {
    return KINDS.map((kind) => {
      const v = (name: string) => show(row(rows, `${kind}: ${name}`).value);
      return mdRow(
        "partitions",
        `PostgresRunStore, 3 worker hosts: ${v("faults injected")} × ${WHAT[kind]}`,
        `${v("finished correctly")} of ${v("runs enqueued")} correct; lost ${v("lost")}, recorded re-run ${v("recorded tools re-run")}, double holders ${v("double holders")}, past-lease starts ${v("tool starts past the lease while cut off")}, unnoticed ${v("late holders not told FORGE_LOCK_LOST")}, live steals ${v("leases taken from a live holder")}, order ${v("session order violations")}, jams ${v("jammed sessions")}, unrecovered ${v("workers not recovered")}; a run moves on in ${v("run moves on, median")} ms (max ${v("run moves on, max")}), the victim works again after ${v("victim takes a run again, median")} ms (max ${v("victim takes a run again, max")})`,
        "all 0",
      );
    });
  },
};

/** A figure, or "–" for a spread of no values (no run of the victim's moved: it kept them). */
const show = (value: number): string => (Number.isFinite(value) ? fig(value) : "–");

/** One line per kind, the must-be-zero counts side by side; the first problems of any batch under it. */
function printTable(reports: [FaultKind, PartitionReport][]): void {
  const head = ["kind", "faults", "correct", "lost", "rec. re-run", "double", "past lease", "unnoticed", "live steals", "order", "jams", "unrecovered", "move-on median / max ms", "back to work median / max ms", "commit on the faulted link median / max ms (elsewhere median)"];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const [kind, r] of reports) {
    const f = Object.fromEntries(figures(kind, r).map(([name, value]) => [name, show(value)]));
    lines.push(
      `| ${kind} | ${f["faults injected"]} | ${f["finished correctly"]}/${f["runs enqueued"]} | ${f.lost} | ${f["recorded tools re-run"]} | ${f["double holders"]} | ${f["tool starts past the lease while cut off"]} | ${f["late holders not told FORGE_LOCK_LOST"]} | ${f["leases taken from a live holder"]} | ${f["session order violations"]} | ${f["jammed sessions"]} | ${f["workers not recovered"]} | ${f["run moves on, median"]} / ${f["run moves on, max"]} | ${f["victim takes a run again, median"]} / ${f["victim takes a run again, max"]} | ${f["outcome commit on the faulted link, median"]} / ${f["outcome commit on the faulted link, max"]} (${f["outcome commit elsewhere, median"]}) |`,
    );
  }
  console.log(`\npartitions: ${RUNS} runs per fault kind on PostgresRunStore, 3 worker hosts, 2 producers, the model answering in ${THINK_MS} ms\n\n${lines.join("\n")}\n`);
  for (const [kind, r] of reports.filter(([, r]) => r.problems.length > 0)) {
    console.log(`${kind}: first problems (files kept in ${r.keptDir}):\n${r.problems.slice(0, 5).map((p) => `  - ${p}`).join("\n")}\n`);
  }
}
