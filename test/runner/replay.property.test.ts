/**
 * Replay ≡ run: for generated small-model behaviour (retries, rescues, tool errors, premature
 * terminals, prerequisite blocks, parallel batches, loop breaks, compaction, cancellation), a
 * run recorded in a store and replayed from its event log, with no model and no tools, walks
 * the same states and ends with the same messages, steps and result.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ForgeError } from "../../src/core/index.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import { replayRun } from "../../src/runner/replay.js";
import { BEHAVIOURS, budgetArb, runnerOptions, scriptedModel, type Behaviour } from "../support/generated-runs.js";
import { loopWorkflow } from "../support/loop-fixtures.js";

let replays = 0;

describe("replayRun", () => {
  it("re-drives every generated run to the same states, messages, steps and result", async () => {
    // One workflow for every run, as an application keeps it (its machine is built once).
    const { workflow } = loopWorkflow();
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom<Behaviour>(...BEHAVIOURS, "cancel"), { maxLength: 14 }), budgetArb, async (script, budget) => {
        const store = new MemoryRunStore();
        const { client, controller } = scriptedModel(script);
        const states: string[] = [];
        const runner = new WorkflowRunner({ client, ...runnerOptions(budget), store, onStateChange: (s) => states.push(s) });
        let result: unknown;
        try {
          result = await runner.run(workflow, "go", { promptVars: { company: "Acme" }, signal: controller.signal, runId: "gen" });
        } catch (error) {
          if (!ForgeError.isInstance(error)) throw error;
        }
        const latest = (await store.latest("gen"))!;
        // The state rebuilt from the commit log (a base and deltas) is the run's own final state.
        expect(latest.snapshot).toEqual(JSON.parse(JSON.stringify(runner.snapshot())));
        const final = latest.snapshot.context;
        const outcome = runner.lastRunStats!.outcome;

        const replay = await replayRun(store, "gen", workflow, { contextManager: runnerOptions(budget).contextManager });
        replays++;
        expect(replay.state).toBe(outcome);
        expect(replay.messages).toEqual(final.messages);
        expect(replay.context.steps).toEqual(final.steps);
        expect(replay.context.counters).toEqual(final.counters);
        expect(replay.result).toEqual(result);
        // A cancelled run's last state came from outside the log (the cancel itself).
        if (outcome === "cancelled") expect(replay.states.slice(0, -1)).toEqual(states.slice(0, -1));
        else expect(replay.states).toEqual(states);
      }),
      { numRuns: 2000, seed: 20261123 },
    );
  }, 600_000);

  it("replayed at least a thousand generated runs", () => {
    expect(replays).toBeGreaterThanOrEqual(1000);
  });
});
