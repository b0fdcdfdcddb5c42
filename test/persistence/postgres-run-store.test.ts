/**
 * PostgresRunStore against a real PostgreSQL server (Debian's postgresql package): one server for
 * this file, one schema per store so that tests do not see each other's runs.
 */
import net from "node:net";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startPostgres, type TestPostgres } from "../../eval/bench/postgres-server.js";
import { InvalidArgumentError, RunLockLostError, StoreError } from "../../src/core/errors.js";
import { PostgresRunStore, type PostgresRunStoreOptions } from "../../src/postgres.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { commitOf, runStoreContract, snapshotOf, type StoreOptions } from "./support/run-store-contract.js";
import { readableRuns } from "../support/readable-runs.js";
import { startRelay, type FrozenRelay } from "../support/frozen-relay.js";

let server: TestPostgres;
let admin: pg.Pool;

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Pool({ connectionString: server.url });
}, 120_000);

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

let schemas = 0;
const opened: PostgresRunStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** A store in a fresh schema, or in `like`'s (a second process on the same data). */
function open(options: StoreOptions & Partial<PostgresRunStoreOptions> = {}, like?: RunStore): PostgresRunStore {
  const schema = like ? (like as PostgresRunStore).schema : `t${++schemas}`;
  const store = new PostgresRunStore({ url: server.url, schema, ...options });
  opened.push(store);
  return store;
}

/** Wait until the run's lease has run out on the database's clock, the one the store decides by. */
async function expired(store: PostgresRunStore, runId: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const { rows } = await admin.query(`SELECT expires_at <= now() AS expired FROM "${store.schema}".forge_leases WHERE run_id = $1`, [runId]);
      if (rows[0]?.expired !== true) throw new Error(`the lease of ${runId} has not run out yet`);
    },
    { timeout: 20_000, interval: 20 },
  );
}

/** The run's log rows as the database holds them. */
async function logOf(store: PostgresRunStore, runId: string): Promise<{ seq: number; fence: number }[]> {
  const { rows } = await admin.query(`SELECT seq::int, fence::int FROM "${store.schema}".forge_log WHERE run_id = $1 ORDER BY seq`, [runId]);
  return rows as { seq: number; fence: number }[];
}

runStoreContract("PostgresRunStore", {
  make: (options) => open(options),
  reopen: (store, options) => open(options, store),
  async corruptLast(store, runId) {
    const schema = (store as PostgresRunStore).schema;
    const { rows } = await admin.query(`UPDATE "${schema}".forge_log SET body = left(body, length(body) / 2) WHERE run_id = $1 AND seq = (SELECT max(seq) FROM "${schema}".forge_log WHERE run_id = $1) RETURNING seq::int`, [runId]);
    return `postgres:forge#${schema}.forge_log/${runId}@${(rows[0] as { seq: number }).seq}`;
  },
  async corruptListed(store, runId) {
    const schema = (store as PostgresRunStore).schema;
    await admin.query(`UPDATE "${schema}".forge_runs SET status = 'paused' WHERE run_id = $1`, [runId]);
    return `postgres:forge#${schema}.forge_runs/${runId}`;
  },
  close: (store) => (store as PostgresRunStore).close(),
});

describe("PostgresRunStore", () => {
  it("of two stores racing commits of one seq under the same lease, exactly one gets in; a newer seq never lets an older one in after it", async () => {
    const a = open();
    const b = open({}, a);
    const lease = await a.lock("r1");
    await a.commit(commitOf(lease, 1, { snapshot: snapshotOf() }));
    for (let seq = 2; seq < 14; seq += 3) {
      const same = await Promise.allSettled([a.commit(commitOf(lease, seq, { state: "a" })), b.commit(commitOf(lease, seq, { state: "b" }))]);
      expect(same.filter((o) => o.status === "fulfilled").length).toBe(1);
      const refused = same.find((o) => o.status === "rejected") as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(StoreError);
      expect(refused.reason).not.toBeInstanceOf(RunLockLostError);
      // seq+1 and seq+2 at once: if the newer lands first, the older is refused, never appended after it.
      const [older, newer] = await Promise.allSettled([b.commit(commitOf(lease, seq + 1)), a.commit(commitOf(lease, seq + 2))]);
      expect(newer.status).toBe("fulfilled");
      if (older.status === "rejected") expect(older.reason).toBeInstanceOf(StoreError);
    }
    const log = await logOf(a, "r1");
    expect(log.at(-1)?.seq).toBe(13);
    expect((await b.latest("r1"))?.seq).toBe(13);
    expect(readableRuns(await a.listRuns())[0]?.seq).toBe(13);
    await lease.release();
  });

  it("racing a takeover, the old holder's commit is either in before the new fence or refused: fences never go back in the log", async () => {
    for (let round = 0; round < 10; round++) {
      // 250 ms: long enough for the first commit on a loaded machine, short for ten rounds.
      const paused = open({ leaseMs: 250, autoRenew: false });
      const taker = open({ leaseMs: 5_000 }, paused);
      const old = await paused.lock("r1");
      await paused.commit(commitOf(old, 1, { snapshot: snapshotOf() }));
      await expired(paused, "r1");
      const [write, take] = await Promise.allSettled([paused.commit(commitOf(old, 2, { state: "old" })), taker.lock("r1")]);
      expect(take.status).toBe("fulfilled");
      const lease = (take as PromiseFulfilledResult<Awaited<ReturnType<PostgresRunStore["lock"]>>>).value;
      const log = await logOf(paused, "r1");
      if (write.status === "rejected") {
        expect(write.reason).toBeInstanceOf(RunLockLostError);
        expect(log).toEqual([{ seq: 1, fence: old.fence }]);
      } else {
        expect(log).toEqual([{ seq: 1, fence: old.fence }, { seq: 2, fence: old.fence }]);
      }
      // From now on only the new holder writes.
      const next = log.length + 1;
      const [stale, fresh] = await Promise.allSettled([paused.commit(commitOf(old, next, { state: "old" })), taker.commit(commitOf(lease, next, { state: "new" }))]);
      expect(stale.status === "rejected" && stale.reason instanceof RunLockLostError).toBe(true);
      expect(fresh.status).toBe("fulfilled");
      expect((await logOf(paused, "r1")).at(-1)).toEqual({ seq: next, fence: lease.fence });
      await lease.release();
    }
  });

  it("a refused commit leaves no row: neither in the log nor in the listing", async () => {
    // 1 s: both commits below fit in the lease however slow the machine is.
    const paused = open({ leaseMs: 1_000, autoRenew: false });
    const taker = open({}, paused);
    const old = await paused.lock("r1");
    await paused.commit(commitOf(old, 1, { snapshot: snapshotOf(), sessionId: "s" }));
    await expect(paused.commit(commitOf(old, 1, { state: "again" }))).rejects.toThrow(/commit 1 of run r1 is not newer than the stored commit 1/);
    await expired(paused, "r1");
    const lease = await taker.lock("r1");
    const lost = await paused.commit(commitOf(old, 2, { state: "stale", sessionId: "other" })).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(RunLockLostError);
    expect(lost).toMatchObject({ runId: "r1", fence: old.fence, location: `postgres:forge#${paused.schema}.forge_log/r1` });
    expect((lost as RunLockLostError).reason).toMatch(/a newer holder took the lease over/);
    expect(await logOf(paused, "r1")).toEqual([{ seq: 1, fence: old.fence }]);
    expect(await taker.listRuns()).toMatchObject([{ runId: "r1", seq: 1, state: "inferring", sessionId: "s" }]);
    // A commit under a fence that was never granted, or for a run never locked, is refused too.
    await expect(taker.commit(commitOf({ runId: "r1", fence: lease.fence + 5 }, 2))).rejects.toBeInstanceOf(RunLockLostError);
    await expect(taker.commit(commitOf({ runId: "never", fence: 1 }, 1, { snapshot: snapshotOf() }))).rejects.toThrow(/the run has no lease/);
    expect(await taker.latest("never")).toBeUndefined();
    await lease.release();
  });

  it("a database that refuses connections is a StoreError naming the run, within the connect timeout", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const store = new PostgresRunStore({ url: `postgres://postgres:secret@127.0.0.1:${closed}/forge` });
    const error = await store.lock("r1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    // A server that is not there: the call may work once it is (a queue worker waits it out).
    expect(error).toMatchObject({ runId: "r1", location: "postgres:forge#forge_leases/r1", unreachable: true });
    expect((error as StoreError).message).toMatch(/cannot open the run store database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/forge for run r1.*ECONNREFUSED/);
    expect((error as StoreError).message).not.toContain("secret");
    // Refused at once, not given up on after waiting out the connect timeout.
    expect((error as StoreError).message).not.toMatch(/timeout/i);
    await expect(store.listRuns()).rejects.toBeInstanceOf(StoreError);
    await store.close();
  });

  it("a database that answers with a refusal (no such database) is a StoreError that waiting will not cure", async () => {
    const store = new PostgresRunStore({ url: server.urlOf("no_such_database") });
    const error = await store.lock("r1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ unreachable: false });
    expect((error as StoreError).message).toMatch(/database "no_such_database" does not exist/);
    await store.close();
  });

  it("creates its tables idempotently: several stores starting at once on a fresh database", async () => {
    await server.createDatabase("fresh");
    const stores = [1, 2, 3, 4].map(() => new PostgresRunStore({ url: server.urlOf("fresh") }));
    opened.push(...stores);
    expect(await Promise.all(stores.map((s) => s.listRuns()))).toEqual([[], [], [], []]);
    const lease = await stores[0]!.lock("r1");
    await stores[1]!.commit(commitOf(lease, 1, { snapshot: snapshotOf() }));
    expect((await stores[2]!.latest("r1"))?.seq).toBe(1);
    await lease.release();
    const later = new PostgresRunStore({ url: server.urlOf("fresh") });
    opened.push(later);
    expect((await later.listRuns()).map((r) => r.runId)).toEqual(["r1"]);
  });

  it("a corrupt events column is a StoreError naming the run and the commit", async () => {
    const store = open();
    const lease = await store.lock("r1");
    await store.commit(commitOf(lease, 1, { snapshot: snapshotOf(), events: [{ type: "end", state: "done" }] }));
    await lease.release();
    await admin.query(`UPDATE "${store.schema}".forge_log SET events = '[{"type":' WHERE run_id = 'r1'`);
    await expect(store.events("r1")).rejects.toThrow(/run r1's stored record at postgres:forge#t\d+\.forge_log\/r1@1 cannot be read \(not JSON: /);
    expect((await store.latest("r1"))?.seq).toBe(1); // the checkpoint does not read the events
  });

  it("runs on a pool passed in and leaves it open", async () => {
    const pool = new pg.Pool({ connectionString: server.url });
    const store = new PostgresRunStore({ pool, schema: `t${++schemas}` });
    const lease = await store.lock("r1");
    await store.commit(commitOf(lease, 1, { snapshot: snapshotOf() }));
    await lease.release();
    await store.close();
    await expect(store.listRuns()).rejects.toThrow(/the run store postgres:forge was closed/);
    expect((await pool.query(`SELECT count(*)::int AS n FROM "${store.schema}".forge_log`)).rows[0].n).toBe(1);
    await pool.end();
  });

  it("checks each option", () => {
    const bad: [unknown, string][] = [
      [undefined, "options"],
      [{}, "url"],
      [{ url: "postgres://h/db", pool: new pg.Pool() }, "url"],
      [{ url: "mysql://h/db" }, "url"],
      [{ pool: {} }, "pool"],
      [{ url: "postgres://h/db", schema: 'x"; DROP TABLE y; --' }, "schema"],
      [{ url: "postgres://h/db", leaseMs: 10 }, "leaseMs"],
      [{ url: "postgres://h/db", autoRenew: "yes" }, "autoRenew"],
      [{ url: "postgres://h/db", client: {} }, "client"],
      [{ url: "postgres://h/db", queryTimeoutMs: 0 }, "queryTimeoutMs"],
      [{ url: "postgres://h/db", queryTimeoutMs: 1.5 }, "queryTimeoutMs"],
      [{ url: "postgres://h/db", queryTimeoutMs: "15000" }, "queryTimeoutMs"],
      // A pool passed in keeps its own settings: the option would silently do nothing there.
      [{ pool: new pg.Pool(), queryTimeoutMs: 1_000 }, "queryTimeoutMs"],
    ];
    for (const [options, argument] of bad) {
      const error = (() => {
        try {
          new PostgresRunStore(options as PostgresRunStoreOptions);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ argument });
    }
    expect(new PostgresRunStore({ url: "postgresql://u:pw@h:5433/db" }).label).toBe("postgresql://u:***@h:5433/db");
  });
});

describe("PostgresRunStore and a database that stops answering (connected, silent: a partition or a paused server)", () => {
  let relay: FrozenRelay;
  /** The server's URL through the relay. */
  let relayed: string;
  beforeAll(async () => {
    relay = await startRelay(server.port);
    relayed = server.url.replace(`:${server.port}/`, `:${relay.port}/`);
  });
  afterAll(() => relay?.close());
  afterEach(() => relay.thaw());

  it("a statement with no answer fails after queryTimeoutMs, naming the run; its connection is dropped and the next call reads the right rows", async () => {
    const direct = open({ autoRenew: false });
    // 1 s: a loaded machine answers a statement well within it; a silent server never does.
    const store = open({ url: relayed, queryTimeoutMs: 1_000 }, direct);
    const lease = await direct.lock("r1");
    await direct.commit(commitOf(lease, 1, { snapshot: snapshotOf() }));
    expect((await store.latest("r1"))?.seq).toBe(1);

    // The commit reaches the server, its answer never comes back: the caller cannot know.
    relay.freeze("replies");
    const error = await store.commit(commitOf(lease, 2, { state: "answering" })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ runId: "r1", location: `postgres:forge#${store.schema}.forge_log/r1`, unreachable: true });
    expect((error as StoreError).message).toMatch(/^run store database failed for run r1 at \S+: no answer within 1000 ms \(the connection is dropped\); commit 2 may or may not have been applied$/);
    // It was applied: only the answer was lost.
    expect(await direct.latest("r1")).toMatchObject({ seq: 2, state: "answering" });

    // The server answers again: the next call goes out on a new connection (the one with an
    // answer owed on it was dropped, not reused) and reads what the database holds.
    const before = relay.accepted;
    relay.thaw();
    expect(await store.latest("r1")).toMatchObject({ seq: 2, state: "answering" });
    expect(relay.accepted).toBe(before + 1);

    // Nothing comes through at all, on the connection that just answered: a read fails the
    // same way, with nothing to be unsure of; then the server is back and so are the rows.
    relay.freeze("both");
    const read = await store.listRuns().catch((e: unknown) => e);
    expect(read).toMatchObject({ unreachable: true });
    expect((read as StoreError).message).toMatch(/^run store database failed at \S+: no answer within 1000 ms \(the connection is dropped\)$/);
    relay.thaw();
    expect(readableRuns(await store.listRuns())).toMatchObject([{ runId: "r1", seq: 2, state: "answering" }]);
    expect(relay.accepted).toBe(before + 2);
    await lease.release();
  });

  it("a server that accepts the connection and never answers fails the call within the connect timeout; the next call connects", async () => {
    relay.freeze();
    const store = open({ url: relayed });
    const error = await store.lock("r1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ runId: "r1", location: `postgres:forge#${store.schema}.forge_leases/r1`, unreachable: true });
    expect((error as StoreError).message).toMatch(/^cannot open the run store database postgres:\/\/postgres@127\.0\.0\.1:\d+\/forge for run r1 \(\S+\): Connection terminated due to connection timeout$/);
    relay.thaw();
    expect(await store.listRuns()).toEqual([]);
  });
});
