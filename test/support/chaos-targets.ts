/**
 * The chaos harness's figures that must be 0 (and every planned run enqueued and correct), with
 * the evidence when one is not: what the chaos and partitions tests assert.
 */
import type { ChaosReport } from "../../eval/bench/chaos-harness.js";

export const chaosTargets = (r: ChaosReport) => ({
  notEnqueued: r.planned - r.enqueued,
  notCorrect: r.enqueued - r.correct,
  lost: r.lost,
  runsTwice: r.runsTwice,
  recordedReruns: r.recordedReruns,
  orderViolations: r.orderViolations,
  jammedSessions: r.jammedSessions,
  unnoticedSteals: r.unnoticedSteals,
  workerCrashes: r.workerCrashes,
  firstProblems: r.problems.slice(0, 3),
});
