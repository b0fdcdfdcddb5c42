import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { CorruptRecordError, StoreError } from "../../src/core/errors.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { Commit } from "../../src/persistence/run-store.js";
import { commitOf, runStoreContract, snapshotOf } from "./support/run-store-contract.js";
import { readableRuns } from "../support/readable-runs.js";

const freshDir = () => mkdtempSync(path.join(tmpdir(), "forge-store-"));
const runDir = (store: FileRunStore, runId: string) => path.join(store.dir, "runs", runId);
const logOf = (store: FileRunStore, runId: string) => path.join(runDir(store, runId), "log.jsonl");

runStoreContract("FileRunStore", {
  make: (options) => new FileRunStore({ dir: freshDir(), ...options }),
  reopen: (store, options) => new FileRunStore({ dir: (store as FileRunStore).dir, ...options }),
  corruptLast: async (store, runId) => cutLastLine(store as FileRunStore, runId),
  // Listing reads the end of the log: the same line.
  corruptListed: async (store, runId) => cutLastLine(store as FileRunStore, runId),
});

/** Cut the log's last complete line to 20 characters (its newline kept); `<file>:<line>`. */
function cutLastLine(store: FileRunStore, runId: string): string {
  const file = logOf(store, runId);
  const lines = readFileSync(file, "utf8").split("\n");
  lines[lines.length - 2] = lines[lines.length - 2]!.slice(0, 20);
  writeFileSync(file, lines.join("\n"));
  return `${file}:${lines.length - 1}`;
}

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

  it("a log line torn by a crash at the end is left out, and the next append cuts it off first; one in the middle is a CorruptRecordError naming the file and line", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    const lease = await store.lock("r1");
    await store.commit(commitOf(lease, 1, { snapshot: snapshotOf(), events: [{ type: "end", state: "failed" }] }));
    const file = logOf(store, "r1");
    appendFileSync(file, '{"seq":2,"fence":1,"events":[{"type":"resp');
    expect(await store.events("r1")).toEqual([{ type: "end", state: "failed" }]);
    expect(readableRuns(await store.listRuns()).map((r) => r.seq)).toEqual([1]);
    // The next process (a new store object) to append cuts the torn fragment off first.
    const next = new FileRunStore({ dir: store.dir });
    await next.commit(commitOf(lease, 2, { events: [{ type: "end", state: "done" }] }));
    expect(await store.events("r1")).toEqual([{ type: "end", state: "failed" }, { type: "end", state: "done" }]);
    appendFileSync(file, "not json\n" + JSON.stringify(commitOf(lease, 3)) + "\n");
    const error = await store.events("r1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptRecordError);
    expect(error).toMatchObject({ runId: "r1", location: `${file}:3`, snippet: "not json" });
    await lease.release();
    // `next` keeps its log open for commits under that lease until it takes a lease of its own.
    await (await next.lock("r1")).release();
  });

  it("a damaged line in the middle of one run's log: every other run is listed, the damaged one marked with its file, line and session; its session does not go on past it; delete removes it", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    const write = async (runId: string, commits: number, parts: Partial<Commit> = {}) => {
      const lease = await store.lock(runId);
      for (let seq = 1; seq <= commits; seq++) await store.commit(commitOf(lease, seq, { ...(seq === 1 ? { snapshot: snapshotOf() } : {}), ...parts }));
      await lease.release();
    };
    await write("first", 2, { sessionId: "s", createdAt: 1, state: "done", status: "done" });
    await write("second", 5, { sessionId: "s", createdAt: 2 });
    await write("other", 1, { createdAt: 3 });
    const file = logOf(store, "second");
    const lines = readFileSync(file, "utf8").split("\n");
    lines[2] = lines[2]!.slice(0, 30); // line 3 of 5
    writeFileSync(file, lines.join("\n"));

    const listed = await store.listRuns();
    expect(listed.map((r) => r.runId)).toEqual(["first", "other", "second"]);
    expect(listed[2]).toEqual({ runId: "second", sessionId: "s", damaged: { where: `${file}:3`, message: expect.stringMatching(/^run second's stored record at .*log\.jsonl:3 cannot be read \(not JSON: .*\); it begins "\{/) } });
    expect((await store.listRuns({ sessionId: "s" })).map((r) => r.runId)).toEqual(["first", "second"]);
    await expect(store.latest("second")).rejects.toMatchObject({ code: "FORGE_CORRUPT_RECORD", location: `${file}:3` });
    // The damaged turn may be the session's latest: its history is refused, not taken from "first".
    await expect(store.history("s")).rejects.toThrow(/session s holds run second, which cannot be read \(.*log\.jsonl:3\)/);
    expect(await store.latest("first")).toMatchObject({ seq: 2 });
    await store.deleteRun("second");
    expect((await store.listRuns()).map((r) => r.runId)).toEqual(["first", "other"]);
    expect(await store.history("s")).toEqual([]);
  });

  it("a damaged line is named by its number also when the log is longer than the window listing reads", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    const lease = await store.lock("big");
    await store.commit(commitOf(lease, 1, { snapshot: snapshotOf([], { pad: "x".repeat(100_000) }) }));
    for (let seq = 2; seq <= 5; seq++) await store.commit(commitOf(lease, seq));
    await lease.release();
    const file = logOf(store, "big");
    const lines = readFileSync(file, "utf8").split("\n");
    lines[3] = "{broken"; // line 4, inside the tail's window; line 1 is outside it
    writeFileSync(file, lines.join("\n"));
    expect(await store.listRuns()).toEqual([{ runId: "big", damaged: { where: `${file}:4`, message: expect.stringContaining('it begins "{broken"') } }]);
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
