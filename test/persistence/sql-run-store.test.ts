import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient, type InStatement, type ResultSet } from "@libsql/client";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/core/errors.js";
import type { RunEvent, RunStore } from "../../src/persistence/run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import { commitOf, runStoreContract, snapshotOf } from "./support/run-store-contract.js";

const freshDir = () => mkdtempSync(path.join(tmpdir(), "forge-sql-store-"));
const freshUrl = () => "file:" + path.join(freshDir(), "runs.db");

/** Write to the store's database over a second connection, as another process would. */
async function writeBehind(store: RunStore, statement: InStatement): Promise<ResultSet> {
  await store.listRuns(); // the store creates its schema on first use
  const client = createClient({ url: (store as SqlRunStore).url });
  try {
    return await client.execute(statement);
  } finally {
    client.close();
  }
}

runStoreContract("SqlRunStore", {
  make: (options) => new SqlRunStore({ url: freshUrl(), ...options }),
  reopen: (store, options) => new SqlRunStore({ url: (store as SqlRunStore).url, ...options }),
  async corruptLast(store, runId) {
    const { rows } = await writeBehind(store, { sql: "UPDATE forge_log SET body = substr(body, 1, length(body) / 2) WHERE run_id = ? AND seq = (SELECT MAX(seq) FROM forge_log WHERE run_id = ?) RETURNING seq", args: [runId, runId] });
    return `sqlite:${(store as SqlRunStore).url}#forge_log/${runId}@${String(rows[0]?.seq)}`;
  },
  async corruptListed(store, runId) {
    await writeBehind(store, { sql: "UPDATE forge_runs SET status = 'paused' WHERE run_id = ?", args: [runId] });
    return `sqlite:${(store as SqlRunStore).url}#forge_runs/${runId}`;
  },
  close: (store) => (store as SqlRunStore).close(),
});

/** A run with one base commit (and `events`), released. */
async function seeded(store: SqlRunStore, runId: string, events: RunEvent[] = []): Promise<void> {
  const lease = await store.lock(runId);
  await store.commit(commitOf(lease, 1, { snapshot: snapshotOf(), events }));
  await lease.release();
}

describe("SqlRunStore", () => {
  it("works on an in-memory database", async () => {
    const store = new SqlRunStore({ url: ":memory:" });
    const lease = await store.lock("r1");
    await store.commit(commitOf(lease, 1, { snapshot: snapshotOf(), sessionId: "s", events: [{ type: "end", state: "done" }] }));
    expect((await store.latest("r1"))?.seq).toBe(1);
    expect(await store.events("r1")).toEqual([{ type: "end", state: "done" }]);
    expect((await store.listSessions()).map((s) => s.sessionId)).toEqual(["s"]);
    await lease.release();
    await store.close();
  });

  it("a corrupt row is a CorruptRecordError naming the table, run and seq; a bad head row is listed as damaged with its session, whose next turn is refused", async () => {
    const store = new SqlRunStore({ url: freshUrl() });
    await seeded(store, "r1");
    await writeBehind(store, { sql: "UPDATE forge_log SET events = '[{\"type\":' WHERE run_id = 'r1'" });
    await expect(store.events("r1")).rejects.toMatchObject({ code: "FORGE_CORRUPT_RECORD", runId: "r1", location: `sqlite:${store.url}#forge_log/r1@1`, snippet: '[{"type":' });
    await writeBehind(store, { sql: "UPDATE forge_runs SET status = 'paused', session_id = 's' WHERE run_id = 'r1'" });
    const where = `sqlite:${store.url}#forge_runs/r1`;
    const damaged = { runId: "r1", sessionId: "s", damaged: { where, message: expect.stringMatching(/status is not one of active, waiting, done, failed, cancelled/) } };
    expect(await store.listRuns()).toEqual([damaged]);
    expect(await store.listRuns({ sessionId: "s" })).toEqual([damaged]);
    await expect(store.history("s")).rejects.toThrow(/session s holds run r1, which cannot be read/);
    await store.close();
  });

  it("a database that cannot be opened is a StoreError naming the run, not a libSQL error", async () => {
    const dir = freshDir();
    const blocker = path.join(dir, "file");
    writeFileSync(blocker, "not a directory");
    for (const url of ["file:" + path.join(dir, "missing", "runs.db"), "file:" + path.join(blocker, "runs.db")]) {
      const store = new SqlRunStore({ url });
      const error = await store.lock("r1").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).message).toContain("r1");
      expect(error).toMatchObject({ runId: "r1", location: `sqlite:${url}#forge_leases/r1` });
      await expect(store.latest("r1")).rejects.toBeInstanceOf(StoreError);
    }
  });

  it("a database written by forge-ts 0.1 (table checkpoints) is refused loudly", async () => {
    const url = freshUrl();
    const client = createClient({ url });
    await client.execute("CREATE TABLE checkpoints (run_id TEXT PRIMARY KEY)");
    client.close();
    await expect(new SqlRunStore({ url }).listRuns()).rejects.toThrow(/older forge-ts/);
  });

  it("runs on a client passed in, and leaves it open", async () => {
    const client = createClient({ url: ":memory:" });
    const store = new SqlRunStore({ client });
    await seeded(store, "r1");
    await store.close();
    expect((await client.execute("SELECT seq FROM forge_runs")).rows[0]?.seq).toBe(1);
    client.close();
  });
});
