/**
 * kill -9 at random moments of real child processes on a FileRunStore and a SqlRunStore (a CI-sized count;
 * `npm run bench -- durability` runs 500+): every run completes with the uninterrupted result,
 * no finished tool runs again, no checkpoint is torn, nothing hangs.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { killHarness } from "../../eval/bench/durability-harness.js";
import { builtModule } from "../support/cli.js";

describe("kill -9 durability", () => {
  for (const store of ["file", "sql"] as const) {
    it(`${store} store: every killed run resumes to the same result without re-running a finished tool`, async () => {
      // Kills within the first 60 ms after "ready": the run takes longer than that (about ten
      // tool calls of 3-11 ms each), so every planned kill lands, however loaded the machine.
      // A 3 s lease, not the bench's 300 ms: beside other test files a live child's renewals can
      // be held up past 300 ms, and it then stops, rightly, on a lease it can no longer prove (the
      // likely cause of one run of six ending without its result in a CI run with four files at
      // once). A killed child's lease costs the next process at most 3 s of waiting.
      // The child as built JavaScript (test/support/cli-build.ts): tsx would cost 2 s of CPU per process.
      const report = await killHarness(6, { seed: 20261123, store, maxKillMs: 60, leaseMs: 3_000, childModule: builtModule(path.resolve("eval/bench/durability-child.ts")) });
      expect(report.kills).toBeGreaterThanOrEqual(6);
      // The first failing run's error lines (or result) in the message: the diff shows counts only.
      expect(report, report.firstFailure).toMatchObject({ completed: 6, finishedReexecuted: 0, recordedReexecuted: 0, tornCheckpoints: 0, corruptLogs: 0, hangs: 0, wrongResults: 0 });
    }, 600_000); // a deadline for a hang: the harness's kill-and-resume cycles slow down with the machine
  }
});
