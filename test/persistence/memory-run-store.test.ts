import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/core/errors.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { commitOf, runStoreContract, snapshotOf } from "./support/run-store-contract.js";

runStoreContract("MemoryRunStore", {
  make: (options) => new MemoryRunStore(options),
  reopen: (store, options) => new MemoryRunStore({ ...options, data: (store as MemoryRunStore).data }),
  corruptLast: async (store, runId) => cutLast(store as MemoryRunStore, runId),
  // Listing reads the last record: the same one.
  corruptListed: async (store, runId) => cutLast(store as MemoryRunStore, runId),
});

function cutLast(store: MemoryRunStore, runId: string): string {
  const log = store.data.logs.get(runId)!;
  store.corrupt(runId, log.at(-1)!.slice(0, 10));
  return `memory#${runId}:${log.length}`;
}

describe("MemoryRunStore", () => {
  it("copies records in and out: changing a committed snapshot or a returned one changes nothing stored", async () => {
    const store = new MemoryRunStore();
    const lease = await store.lock("r1");
    const snapshot = snapshotOf([], { note: "before" });
    await store.commit(commitOf(lease, 1, { snapshot }));
    (snapshot.context as unknown as Record<string, unknown>).note = "after";
    const read = await store.latest("r1");
    (read!.snapshot.context as unknown as Record<string, unknown>).note = "changed";
    expect((await store.latest("r1"))!.snapshot.context).toMatchObject({ note: "before" });
    await lease.release();
  });

  it("refuses options that are not an object", () => {
    expect(() => new MemoryRunStore(null as never)).toThrow(/options/);
    expect(() => new MemoryRunStore({ leaseMs: 5 })).toThrow(/leaseMs/);
    expect(StoreError).toBeDefined();
  });
});
