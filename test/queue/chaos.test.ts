/**
 * The chaos harness (eval/bench/chaos-harness.ts) small, on every store: three worker processes
 * on a real redis-server and a shared file, libSQL or PostgreSQL store take 40 runs and session
 * turns from two racing producers while workers are killed with kill -9, SIGSTOPped past their
 * lease, and Redis is restarted. Every run must end as expected, none lost, none run twice, no
 * recorded tool run again, sessions in order and none jammed. `npm run bench -- chaos` runs the
 * same at 500 runs and 50 faults per store.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { chaosHarness } from "../../eval/bench/chaos-harness.js";
import type { ChaosStoreKind } from "../../eval/bench/chaos-workflow.js";
import { analyzeEffects, parseEffects } from "../../eval/bench/effects.js";
import { chaosTargets } from "../support/chaos-targets.js";
import { builtModule } from "../support/cli.js";

/** Effects lines as the workers write them, `<pid> <kind> <key> [fields] <ms>`, one per line of `text`. */
const analyze = (text: string, sessions: Record<string, string[]> = {}) =>
  analyzeEffects(parseEffects(text.trim().replace(/^\s+/gm, "")), new Map(Object.entries(sessions)), "finish");

const CLEAN_RUN = `
  1 lease r 1 10
  1 start r:1:0 step 11
  1 end r:1:0 step 12
  1 recorded r:1:0 13
  1 start r:2:0 finish 14
  1 end r:2:0 finish 15
  1 recorded r:2:0 16
  1 released r 1 17`;


describe("chaos harness checks (effects file analysis)", () => {
  it("a clean run shows nothing", () => {
    const f = analyze(CLEAN_RUN);
    expect(f).toMatchObject({ recordedReruns: 0, midCallReruns: 0, staleStarts: 0, orderViolations: 0, unnoticedSteals: 0, problems: [] });
    expect(f.runsTwice.size).toBe(0);
  });

  it("a call started again after its outcome was recorded; one cut off mid-call; the move-on time after a kill", () => {
    const f = analyze(`
      1 lease r 1 10
      1 start r:1:0 step 11
      1 end r:1:0 step 12
      1 recorded r:1:0 13
      1 start r:1:1 step 14
      0 killed 1 100
      2 lease r 2 2000
      2 start r:1:0 step 2100
      2 start r:1:1 step 2101`);
    expect(f).toMatchObject({ recordedReruns: 1, midCallReruns: 1, moveOnMs: [2000] });
    const g = analyze(`
      1 lease r 1 10
      1 start r:1:0 step 11
      0 killed 1 100
      2 lease r 2 2000
      2 start r:1:0 step 2100`);
    expect(g).toMatchObject({ recordedReruns: 0, midCallReruns: 1, staleStarts: 0, problems: [] });
  });

  it("a stopped worker that starts a tool after another took the run over drove it twice, and must report the lost lease", () => {
    const f = analyze(`
      1 lease r 1 10
      1 start r:1:0 step 11
      0 stopped 1 20
      2 lease r 2 2000
      2 start r:1:0 step 2001
      2 end r:1:0 step 2002
      0 resumed 1 3000
      1 end r:1:0 step 3001
      1 start r:1:1 step 3002`);
    expect(f).toMatchObject({ staleStarts: 1, stolenFromStopped: 1, unnoticedSteals: 1 });
    expect([...f.runsTwice]).toEqual(["r"]);
  });

  it("a stopped worker's in-flight terminal call ending late is at-least-once, not a run twice", () => {
    const f = analyze(`
      1 lease r 1 10
      1 start r:2:0 finish 11
      0 stopped 1 20
      2 lease r 2 2000
      2 start r:2:0 finish 2001
      2 end r:2:0 finish 2002
      2 recorded r:2:0 2003
      2 released r 2 2004
      0 resumed 1 3000
      1 end r:2:0 finish 3001
      1 refused r 1 3002`);
    expect(f).toMatchObject({ staleStarts: 0, midCallReruns: 1, stolenFromStopped: 1, unnoticedSteals: 0, problems: [] });
    expect(f.runsTwice.size).toBe(0);
  });

  it("a lease noted late (its holder was stopped in between) is no fencing failure; one fence given twice is", () => {
    const late = analyze(`
      2 lease r 2 2000
      2 released r 2 2001
      1 lease r 1 3000
      1 released r 1 3001`);
    expect(late.problems).toEqual([]);
    expect([...analyze("1 lease r 1 10\n2 lease r 1 20").runsTwice]).toEqual(["r"]);
  });

  it("a terminal tool completed in two processes with no fault in between is a run twice", () => {
    const f = analyze(`
      1 lease r 1 10
      1 start r:2:0 finish 11
      1 end r:2:0 finish 12
      2 lease r 2 2000
      2 start r:2:0 finish 2001
      2 end r:2:0 finish 2002`);
    expect([...f.runsTwice]).toEqual(["r"]);
  });

  it("a session turn that starts before the turn before it finished, or although it never ran, is out of order", () => {
    const early = analyze(`
      1 lease a 1 10
      1 start a:1:0 step 11
      2 lease b 1 12
      2 start b:1:0 step 13
      1 end a:1:0 step 14
      1 recorded a:1:0 15`, { s: ["a", "b"] });
    expect(early.orderViolations).toBe(1);
    const skipped = analyze(`
      2 lease b 1 12
      2 start b:1:0 step 13`, { s: ["a", "b"] });
    expect(skipped.orderViolations).toBe(1);
    expect(analyze(`${CLEAN_RUN}\n2 lease b 1 20\n2 start b:1:0 step 21`, { s: ["r", "b"] }).orderViolations).toBe(0);
    // A holder stopped between its commit and its "recorded" line writes it late, after the
    // next turn began; the takeover read that commit, so the order held.
    const late = analyze(`
      1 lease a 1 10
      1 start a:1:0 step 11
      1 end a:1:0 step 12
      2 lease a 2 20
      2 start a:2:0 finish 21
      2 end a:2:0 finish 22
      2 recorded a:2:0 23
      2 released a 2 24
      2 lease b 1 25
      2 start b:1:0 step 26
      1 recorded a:1:0 30
      1 refused a 1 31`, { s: ["a", "b"] });
    expect(late).toMatchObject({ orderViolations: 0, staleStarts: 0 });
  });
});

// One retry, on purpose: a SIGSTOP that lands in the microseconds between a worker's last lease
// check and its tool's first instruction lets that tool start after waking, under a lease that
// has passed to another worker. No lease can fence a side effect already under way; the check
// makes the window microseconds wide, and a rerun is a fresh draw of the faults' timing. Seen once
// in about ten runs of this test; the 500-run bench met every target (README).
describe("chaos: kill -9, SIGSTOP and Redis restarts under queued runs and sessions", { retry: 1 }, () => {
  it.each<ChaosStoreKind>(["file", "sql", "postgres"])(
    "%s store: nothing lost, run twice, re-run after recording, out of order or jammed",
    async (store) => {
      // The workers as built JavaScript (test/support/cli-build.ts): tsx would cost 2 s of CPU per process.
      const report = await chaosHarness({ store, runs: 40, kills: 6, stops: 6, redisRestarts: 2, spreadMs: 9_000, settleMs: 120_000, seed: 7, workerModule: builtModule(path.resolve("eval/bench/chaos-worker.ts")) });
      expect(chaosTargets(report)).toEqual({ notEnqueued: 0, notCorrect: 0, lost: 0, runsTwice: 0, recordedReruns: 0, orderViolations: 0, jammedSessions: 0, unnoticedSteals: 0, workerCrashes: 0, firstProblems: [] });
      // The faults happened, and failing turns were among the runs.
      expect(report.faults).toEqual({ kill: 6, stop: 6, redisRestart: 2 });
      expect(report.failingTurns).toBeGreaterThan(0);
      console.log(
        `[chaos] ${store}: ${report.correct}/${report.enqueued} correct in ${report.seconds.toFixed(1)} s; ${report.midCallReruns} mid-call re-runs, ${report.stolenFromStopped} runs taken from stopped workers, move-on median ${report.moveOnMs.median} ms`,
      );
    },
    // A deadline for a hang: the faults take 9 s, settling ends as soon as every run has (the
    // harness waits up to 120 s for that, which a loaded machine needs).
    600_000,
  );
});
