/**
 * The visualizer's run list from a store: status words as the store has them (a cancelled run
 * is "cancelled"), and a run whose stored record cannot be read listed as "damaged" beside the
 * others instead of failing the list.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import type { Commit } from "../../src/persistence/run-store.js";
import type { RunSummary } from "../../visualizer/protocol.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";
import { commitOf, snapshotOf } from "../persistence/support/run-store-contract.js";

const open: Visualizer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((v) => v.close()));
});

async function seed(store: MemoryRunStore, runId: string, parts: Partial<Commit>): Promise<void> {
  const lease = await store.lock(runId);
  await store.commit(commitOf(lease, 1, { snapshot: snapshotOf(), ...parts }));
  await lease.release();
}

describe("the run list of a store", () => {
  it("serves each stored run's status in the store's words and a damaged run as damaged, with where and why", async () => {
    const store = new MemoryRunStore();
    await seed(store, "finished", { createdAt: 1, state: "done", status: "done" });
    await seed(store, "stopped", { createdAt: 2, state: "cancelled", status: "done" }); // as forge-ts 0.1 stored it
    await seed(store, "broken", { createdAt: 3 });
    store.corrupt("broken", "{not json");
    const viz = createVisualizer({ store });
    open.push(viz);
    const { url } = await viz.listen({ port: 0 });
    const { runs } = (await (await fetch(`${url}/api/runs`)).json()) as { runs: RunSummary[] };
    const byId = Object.fromEntries(runs.map((r) => [r.runId, r]));
    expect(Object.keys(byId).sort()).toEqual(["broken", "finished", "stopped"]);
    expect(byId.finished).toMatchObject({ status: "done", state: "done", iteration: 0, stored: true });
    expect(byId.stopped).toMatchObject({ status: "cancelled", state: "cancelled" });
    expect(byId.broken).toMatchObject({
      status: "damaged",
      stored: true,
      replayable: false,
      iteration: null,
      damaged: { where: "memory#broken:1", message: expect.stringContaining("run broken's stored record at memory#broken:1 cannot be read") },
      unreadable: expect.stringContaining("memory#broken:1"),
    });
  });
});
