import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/core/errors.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { checkpointOf, runStoreContract } from "./support/run-store-contract.js";

runStoreContract("MemoryRunStore", () => new MemoryRunStore(), {
  async plantLock(store, runId, pid) {
    (store as MemoryRunStore).locks.set(runId, pid);
  },
  async corruptCheckpoint(store, runId) {
    (store as MemoryRunStore).corrupt(runId, '{"runId":"' + runId);
  },
});

describe("MemoryRunStore", () => {
  it("copies values in and out: a caller changing what it saved or read changes nothing stored", async () => {
    const store = new MemoryRunStore();
    const checkpoint = checkpointOf("r1", 1);
    await store.putCheckpoint(checkpoint);
    checkpoint.state = "changed";
    const read = (await store.latest("r1"))!;
    read.workflow = "changed";
    expect(await store.latest("r1")).toMatchObject({ state: "inferring", workflow: "wf" });
  });

  it("never replaces a checkpoint with an older one", async () => {
    const store = new MemoryRunStore();
    await store.putCheckpoint(checkpointOf("r1", 2));
    await expect(store.putCheckpoint(checkpointOf("r1", 1))).rejects.toBeInstanceOf(StoreError);
    expect((await store.latest("r1"))?.seq).toBe(2);
  });
});
