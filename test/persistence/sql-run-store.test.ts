import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient, type InStatement } from "@libsql/client";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/core/errors.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import { checkpointOf, runStoreContract } from "./support/run-store-contract.js";

const freshDir = () => mkdtempSync(path.join(tmpdir(), "forge-sql-store-"));
const freshUrl = () => "file:" + path.join(freshDir(), "runs.db");

/** Write to the store's database over a second connection, as another process would. */
async function writeBehind(store: RunStore, statement: InStatement): Promise<void> {
  await store.listRuns(); // the store creates its schema on first use
  const client = createClient({ url: (store as SqlRunStore).url });
  try {
    await client.execute(statement);
  } finally {
    client.close();
  }
}

runStoreContract("SqlRunStore", () => new SqlRunStore({ url: freshUrl() }), {
  async plantLock(store, runId, pid) {
    await writeBehind(store, { sql: "INSERT INTO locks (run_id, pid, taken_at, token) VALUES (?, ?, ?, ?)", args: [runId, pid, Date.now(), "planted"] });
  },
  async corruptCheckpoint(store, runId) {
    await writeBehind(store, { sql: "UPDATE checkpoints SET snapshot = substr(snapshot, 1, length(snapshot) / 2) WHERE run_id = ?", args: [runId] });
  },
});

describe("SqlRunStore", () => {
  it("works on an in-memory database", async () => {
    const store = new SqlRunStore({ url: ":memory:" });
    await store.putCheckpoint(checkpointOf("r1", 1, { sessionId: "s" }));
    await store.appendEvents("r1", [{ type: "end", state: "done" }]);
    expect((await store.latest("r1"))?.seq).toBe(1);
    expect(await store.events("r1")).toEqual([{ type: "end", state: "done" }]);
    expect((await store.listSessions()).map((s) => s.sessionId)).toEqual(["s"]);
    await store.close();
  });

  it("never lets a run's checkpoint go back: an older (or the same) seq is a StoreError and the newer one stays", async () => {
    const store = new SqlRunStore({ url: freshUrl() });
    await store.putCheckpoint(checkpointOf("r1", 2, { state: "second" }));
    const error = await store.putCheckpoint(checkpointOf("r1", 1, { state: "first" })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ runId: "r1", location: `sqlite:${store.url}#checkpoints/r1` });
    expect((error as StoreError).message).toMatch(/checkpoint 1 of run r1 is not newer than the stored checkpoint 2/);
    await expect(store.putCheckpoint(checkpointOf("r1", 2, { state: "forked" }))).rejects.toBeInstanceOf(StoreError);
    expect(await store.latest("r1")).toMatchObject({ seq: 2, state: "second" });
    await store.close();
  });

  it("a second store on the same file sees the first one's runs, events and locks", async () => {
    const url = freshUrl();
    const first = new SqlRunStore({ url });
    await first.putCheckpoint(checkpointOf("r1", 1, { sessionId: "s", status: "done", state: "done" }));
    await first.appendEvents("r1", [{ type: "end", state: "done" }]);
    const lock = await first.lock("r1");
    const second = new SqlRunStore({ url });
    expect(await second.latest("r1")).toEqual(await first.latest("r1"));
    expect(await second.events("r1")).toEqual([{ type: "end", state: "done" }]);
    expect((await second.listRuns()).map((r) => r.runId)).toEqual(["r1"]);
    await expect(second.lock("r1")).rejects.toMatchObject({ code: "FORGE_RUN_LOCKED", holderPid: process.pid });
    await lock.release();
    await (await second.lock("r1")).release();
    await first.close();
    await second.close();
  });

  it("a corrupt row is a StoreError naming the run: an event body, a column of the wrong type", async () => {
    const store = new SqlRunStore({ url: freshUrl() });
    await store.putCheckpoint(checkpointOf("r1", 1));
    await writeBehind(store, { sql: "INSERT INTO events (run_id, n, body) VALUES ('r1', 1, '{\"type\":')" });
    await expect(store.events("r1")).rejects.toMatchObject({ runId: "r1", location: `sqlite:${store.url}#events/r1` });
    await writeBehind(store, { sql: "UPDATE checkpoints SET status = 'paused' WHERE run_id = 'r1'" });
    await expect(store.latest("r1")).rejects.toThrow(/run r1 is malformed.*status/);
    await expect(store.listRuns()).rejects.toBeInstanceOf(StoreError);
    await store.close();
  });

  it("a database that cannot be opened is a StoreError naming the run, not a libSQL error", async () => {
    const dir = freshDir();
    const blocker = path.join(dir, "file");
    writeFileSync(blocker, "not a directory");
    for (const url of ["file:" + path.join(dir, "missing", "runs.db"), "file:" + path.join(blocker, "runs.db")]) {
      const store = new SqlRunStore({ url });
      const error = await store.putCheckpoint(checkpointOf("r1", 1)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).message).toContain("r1");
      expect(error).toMatchObject({ runId: "r1", location: `sqlite:${url}#checkpoints/r1` });
      await expect(store.latest("r1")).rejects.toBeInstanceOf(StoreError);
    }
  });

  it("runs on a client passed in, and leaves it open", async () => {
    const client = createClient({ url: ":memory:" });
    const store = new SqlRunStore({ client });
    await store.putCheckpoint(checkpointOf("r1", 1));
    await store.close();
    expect((await client.execute("SELECT seq FROM checkpoints")).rows[0]?.seq).toBe(1);
    client.close();
  });
});
