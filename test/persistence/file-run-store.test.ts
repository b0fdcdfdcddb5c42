import { mkdtempSync, readFileSync, writeFileSync, appendFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/core/errors.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { checkpointOf, runStoreContract } from "./support/run-store-contract.js";

const freshDir = () => mkdtempSync(path.join(tmpdir(), "forge-store-"));
const runDir = (store: RunStore, runId: string) => path.join((store as FileRunStore).dir, "runs", runId);

runStoreContract("FileRunStore", () => new FileRunStore({ dir: freshDir() }), {
  async plantLock(store, runId, pid) {
    const dir = runDir(store, runId);
    (await import("node:fs")).mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "lock"), String(pid));
  },
  async corruptCheckpoint(store, runId) {
    const file = path.join(runDir(store, runId), "checkpoint.json");
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.slice(0, Math.floor(text.length / 2)));
  },
});

describe("FileRunStore on disk", () => {
  it("replaces the checkpoint by rename: no temporary file is left behind", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    await store.putCheckpoint(checkpointOf("r1", 1));
    await store.putCheckpoint(checkpointOf("r1", 2));
    expect(readdirSync(runDir(store, "r1")).sort()).toEqual(["checkpoint.json"]);
  });

  it("a log line torn by a crash at the end is left out; one in the middle is a StoreError naming the file", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    await store.appendEvents("r1", [{ type: "end", state: "done" }]);
    const file = path.join(runDir(store, "r1"), "events.jsonl");
    appendFileSync(file, '{"type":"resp');
    expect(await store.events("r1")).toEqual([{ type: "end", state: "done" }]);
    appendFileSync(file, "\n" + JSON.stringify({ type: "end", state: "failed" }) + "\n");
    const error = await store.events("r1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ runId: "r1", location: file });
  });

  it("an append after a crash-torn line cuts the torn fragment off first: the log stays readable", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    await store.appendEvents("r1", [{ type: "end", state: "failed" }]);
    const file = path.join(runDir(store, "r1"), "events.jsonl");
    appendFileSync(file, '{"type":"message","mess');
    await store.appendEvents("r1", [{ type: "end", state: "done" }]);
    expect(await store.events("r1")).toEqual([{ type: "end", state: "failed" }, { type: "end", state: "done" }]);
    // a log that is nothing but a torn line
    const other = path.join(runDir(store, "r2"), "events.jsonl");
    await store.appendEvents("r2", []);
    (await import("node:fs")).mkdirSync(path.dirname(other), { recursive: true });
    writeFileSync(other, '{"type":"en');
    await store.appendEvents("r2", [{ type: "end", state: "done" }]);
    expect(await store.events("r2")).toEqual([{ type: "end", state: "done" }]);
  });

  it("a checkpoint that names another run, or lacks its fields, is refused", async () => {
    const store = new FileRunStore({ dir: freshDir() });
    await store.putCheckpoint(checkpointOf("r1", 1));
    const file = path.join(runDir(store, "r1"), "checkpoint.json");
    writeFileSync(file, JSON.stringify({ ...checkpointOf("r2", 1) }));
    await expect(store.latest("r1")).rejects.toThrow(/names run "r2"/);
    writeFileSync(file, JSON.stringify({ runId: "r1" }));
    await expect(store.latest("r1")).rejects.toThrow(/seq/);
  });

  it("a store directory that cannot be created is a StoreError naming the run and the path", async () => {
    const dir = freshDir();
    const blocker = path.join(dir, "file");
    writeFileSync(blocker, "not a directory");
    const store = new FileRunStore({ dir: path.join(blocker, "store") });
    const error = await store.putCheckpoint(checkpointOf("r1", 1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toContain("r1");
    expect((error as StoreError).location).toContain(blocker);
  });
});
