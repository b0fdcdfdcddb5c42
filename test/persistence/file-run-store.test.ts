import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { StoreError } from "../../src/core/errors.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { commitOf, runStoreContract, snapshotOf } from "./support/run-store-contract.js";

const freshDir = () => mkdtempSync(path.join(tmpdir(), "forge-store-"));
const runDir = (store: FileRunStore, runId: string) => path.join(store.dir, "runs", runId);
const logOf = (store: FileRunStore, runId: string) => path.join(runDir(store, runId), "log.jsonl");

runStoreContract("FileRunStore", {
  make: (options) => new FileRunStore({ dir: freshDir(), ...options }),
  reopen: (store, options) => new FileRunStore({ dir: (store as FileRunStore).dir, ...options }),
  async corruptLast(store, runId) {
    const file = logOf(store as FileRunStore, runId);
    const lines = readFileSync(file, "utf8").split("\n");
    lines[lines.length - 2] = lines[lines.length - 2]!.slice(0, 20);
    writeFileSync(file, lines.join("\n"));
  },
});

describe("FileRunStore on disk", () => {
  it("keeps a run as one append-only log and one lease file; no temporary file is left behind", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    const lease = await store.lock("r1");
    await store.commit(commitOf(lease, 1, { snapshot: snapshotOf() }));
    await store.commit(commitOf(lease, 2, { events: [{ type: "end", state: "done" }] }));
    await lease.release();
    expect(readdirSync(runDir(store, "r1")).sort()).toEqual(["lease.1.json", "log.jsonl"]);
    expect(readFileSync(logOf(store, "r1"), "utf8").trimEnd().split("\n")).toHaveLength(2);
  });

  it("a log line torn by a crash at the end is left out, and the next append cuts it off first; one in the middle is a StoreError naming the file", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    const lease = await store.lock("r1");
    await store.commit(commitOf(lease, 1, { snapshot: snapshotOf(), events: [{ type: "end", state: "failed" }] }));
    const file = logOf(store, "r1");
    appendFileSync(file, '{"seq":2,"fence":1,"events":[{"type":"resp');
    expect(await store.events("r1")).toEqual([{ type: "end", state: "failed" }]);
    expect((await store.listRuns()).map((r) => r.seq)).toEqual([1]);
    // The next process (a new store object) to append cuts the torn fragment off first.
    await new FileRunStore({ dir: store.dir }).commit(commitOf(lease, 2, { events: [{ type: "end", state: "done" }] }));
    expect(await store.events("r1")).toEqual([{ type: "end", state: "failed" }, { type: "end", state: "done" }]);
    appendFileSync(file, "not json\n" + JSON.stringify(commitOf(lease, 3)) + "\n");
    const error = await store.events("r1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ runId: "r1", location: file });
    await lease.release();
  });

  it("a line a fenced-out writer appended after the takeover marker never counts", async () => {
    // 1 s: the first commit fits in the lease however slow the machine is.
    const store = new FileRunStore({ dir: freshDir(), leaseMs: 1_000, autoRenew: false });
    const old = await store.lock("r1");
    await store.commit(commitOf(old, 1, { snapshot: snapshotOf() }));
    const taker = new FileRunStore({ dir: store.dir });
    const lease = await vi.waitFor(() => taker.lock("r1"), { timeout: 20_000, interval: 20 }); // once the lease has run out
    // The old holder's append raced the takeover and landed after the marker.
    appendFileSync(logOf(store, "r1"), JSON.stringify({ ...commitOf(old, 2, { state: "stale" }), runId: undefined }) + "\n");
    expect(await store.latest("r1")).toMatchObject({ seq: 1, state: "inferring" });
    expect((await store.listRuns())[0]).toMatchObject({ seq: 1, state: "inferring" });
    await lease.release();
  });

  it("a run stored by forge-ts 0.1 (checkpoint.json) is refused loudly, not listed as absent", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    mkdirSync(runDir(store, "old"), { recursive: true });
    writeFileSync(path.join(runDir(store, "old"), "checkpoint.json"), "{}");
    await expect(store.listRuns()).rejects.toThrow(/older forge-ts/);
    await expect(store.latest("old")).rejects.toThrow(/older forge-ts/);
  });

  it("a store directory that cannot be created is a StoreError naming the run and the path", async () => {
    const dir = freshDir();
    const blocker = path.join(dir, "file");
    writeFileSync(blocker, "not a directory");
    const store = new FileRunStore({ dir: path.join(blocker, "store") });
    const error = await store.lock("r1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toContain("r1");
    expect((error as StoreError).location).toContain(blocker);
  });
});
