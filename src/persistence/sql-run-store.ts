/**
 * A run store in one SQLite database through libSQL: a single file instead of a directory
 * tree, or a libSQL server. Tables:
 *
 *   forge_runs    each run's head (seq, state, status, …): what listing reads
 *   forge_log     the commits, one row each: the events, and the state whole (base) or as a delta
 *   forge_leases  each run's lease: fencing token, holder, expiry (never deleted: the token only grows)
 *
 * A commit is one transaction whose every statement is conditioned on the lease row still
 * carrying the commit's fence, so a fenced-out writer changes nothing. Lease expiry is read on
 * the database's clock (`julianday('now')` is evaluated where the database runs), never the
 * runner's. A file database runs in WAL mode with synchronous=FULL, so once a promise resolves
 * its write survives kill -9 (and power loss).
 *
 * Needs the optional package @libsql/client, which is why it is exported from "forge-ts/sql"
 * and not from the main entry.
 */
import type { Client, InStatement, Row } from "@libsql/client";
import { InvalidArgumentError, RunLockedError, RunLockLostError, StoreError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { parseEvents, parseRecord, rebuildCheckpoint, recordOf, seqBound } from "./commit-log.js";
import { Lease, newHolderId } from "./lease.js";
import { redactedSpec, storeKindOf } from "./store-spec.js";
import { assertRunId, checkedRunInfo, damagedRun, leaseMsOption, listingOrder, SessionViews, type Checkpoint, type Commit, type CommitRecord, type ListedRun, type RunEvent, type RunLease, type RunStore } from "./run-store.js";
import { optionalPackages } from "../core/optional-package.js";

// @libsql/client is an optional peer: without it, importing this module fails here, with one line naming it.
const { createClient } = await optionalPackages("forge-ts/sql", ["@libsql/client"], () => import("@libsql/client"));

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS forge_runs (
    run_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, workflow TEXT NOT NULL, session_id TEXT,
    state TEXT NOT NULL, status TEXT NOT NULL, created_at REAL NOT NULL, saved_at REAL NOT NULL)`,
  "CREATE INDEX IF NOT EXISTS forge_runs_by_session ON forge_runs (session_id)",
  `CREATE TABLE IF NOT EXISTS forge_log (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, fence INTEGER NOT NULL, base INTEGER NOT NULL,
    events TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq))`,
  "CREATE TABLE IF NOT EXISTS forge_leases (run_id TEXT PRIMARY KEY, fence INTEGER NOT NULL, holder TEXT NOT NULL, expires_at REAL NOT NULL)",
];

/** Milliseconds since the epoch on the database's clock. */
const NOW = "((julianday('now') - 2440587.5) * 86400000.0)";
const INFO = "run_id, seq, workflow, session_id, state, status, created_at, saved_at";
const FENCED = "EXISTS (SELECT 1 FROM forge_leases WHERE run_id = ? AND fence = ?)";

// Each statement of a commit runs only while the lease still carries the commit's fence, and
// only for a seq newer than the stored one: rowsAffected 0 says it was refused.
const APPEND = `INSERT INTO forge_log (run_id, seq, fence, base, events, body)
  SELECT ?, ?, ?, ?, ?, ? WHERE ${FENCED} AND ? > (SELECT COALESCE(MAX(seq), 0) FROM forge_log WHERE run_id = ?)`;
const HEAD = `INSERT INTO forge_runs (${INFO}) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE ${FENCED}
  ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, workflow = excluded.workflow, session_id = excluded.session_id,
    state = excluded.state, status = excluded.status, created_at = excluded.created_at, saved_at = excluded.saved_at
  WHERE excluded.seq > forge_runs.seq`;
// A new run's lease, a released one or an expired one (taken over); a live one stays and no row comes back.
const ACQUIRE = `INSERT INTO forge_leases (run_id, fence, holder, expires_at) VALUES (?, 1, ?, ${NOW} + ?)
  ON CONFLICT (run_id) DO UPDATE SET fence = forge_leases.fence + 1, holder = excluded.holder, expires_at = excluded.expires_at
  WHERE forge_leases.expires_at <= ${NOW}
  RETURNING fence`;
const RENEW = `UPDATE forge_leases SET expires_at = ${NOW} + ? WHERE run_id = ? AND fence = ?`;
const RELEASE = "UPDATE forge_leases SET expires_at = 0 WHERE run_id = ? AND fence = ?";
const PREVIOUS = "SELECT fence, expires_at FROM forge_leases WHERE run_id = ?";
const HOLDER = `SELECT fence, holder, expires_at - ${NOW} AS left_ms FROM forge_leases WHERE run_id = ?`;
/** The rows a checkpoint is rebuilt from: the last base and everything after it. */
const FROM_BASE = `SELECT seq, fence, body FROM forge_log WHERE run_id = ? AND seq <= ?
  AND seq >= (SELECT COALESCE(MAX(seq), 0) FROM forge_log WHERE run_id = ? AND base = 1 AND seq <= ?) ORDER BY seq`;

/** How long a write waits for another process's transaction on the same file (ms). */
const BUSY_TIMEOUT = 5_000;

export type SqlRunStoreOptions = (
  /** A libSQL URL: "file:/path/to/runs.db", "file:runs.db" (relative to the cwd), ":memory:", "libsql://…". */
  | { url: string; client?: undefined }
  /** A client you configured (a remote with auth, say); `url` only names the database in errors. The store never closes it. */
  | { client: Client; url?: string }
) & {
  /** How long a lease lasts unless renewed (default 30 s). */
  leaseMs?: number;
  /** false: leases are not renewed in the background. */
  autoRenew?: boolean;
};

/**
 * @example
 * import { SqlRunStore } from "forge-ts/sql";
 * const store = new SqlRunStore({ url: "file:.forge/runs.db" });
 * const runner = new WorkflowRunner({ client, contextManager, store });
 */
export class SqlRunStore extends SessionViews implements RunStore {
  /** The database, as named in error locations (`sqlite:<url>#<table>/<runId>`), without credentials. */
  readonly url: string;
  readonly #given: Client | undefined;
  /** The URL as given, credentials included: for connecting only. */
  readonly #url: string;
  readonly #leaseMs: number;
  readonly #autoRenew: boolean | undefined;
  #ready: Promise<Client> | undefined;

  constructor(options: SqlRunStoreOptions) {
    super();
    if (!isPlainObject(options)) throw new InvalidArgumentError("options", "expected { url } or { client }");
    const { url, client } = options;
    if (client === undefined && (typeof url !== "string" || storeKindOf(url) !== "libsql")) {
      throw new InvalidArgumentError("url", `expected a libSQL URL such as "file:runs.db", "libsql://host" or ":memory:", got ${typeof url === "string" ? JSON.stringify(redactedSpec(url)) : typeof url}`);
    }
    this.#url = url ?? "client";
    this.url = url === undefined ? "client" : redactedSpec(url);
    this.#given = client;
    this.#leaseMs = leaseMsOption(options.leaseMs);
    this.#autoRenew = options.autoRenew;
  }

  async commit(commit: Commit): Promise<void> {
    const { runId, seq, fence } = commit;
    assertRunId(runId);
    // Seqs and fences are compared in SQL: anything but a positive integer would compare wrongly.
    if (!Number.isSafeInteger(seq) || seq < 1) throw new InvalidArgumentError("seq", `${JSON.stringify(seq)} is not a positive integer`);
    if (!Number.isSafeInteger(fence) || fence < 1) throw new InvalidArgumentError("fence", `${JSON.stringify(fence)} is not a positive integer`);
    await this.#use(runId, "forge_log", async (db, location) => {
      const { events, ...body } = recordOf(commit);
      const head = [runId, seq, commit.workflow, commit.sessionId ?? null, commit.state, commit.status, commit.createdAt, commit.savedAt];
      const [appended] = await db.batch(
        [
          { sql: APPEND, args: [runId, seq, fence, body.snapshot === undefined ? 0 : 1, JSON.stringify(events), JSON.stringify(body), runId, fence, seq, runId] },
          { sql: HEAD, args: [...head, runId, fence] },
        ],
        "write",
      );
      if (appended?.rowsAffected === 1) return;
      // Refused: find out why (the batch changed nothing either way).
      const lease = (await db.execute({ sql: HOLDER, args: [runId] })).rows[0];
      if (lease === undefined || Number(lease.fence) !== fence) {
        throw new RunLockLostError(runId, location, fence, lease === undefined ? "the run has no lease" : `a newer holder (lease ${String(lease.fence)}) took it over`);
      }
      const stored = (await db.execute({ sql: "SELECT MAX(seq) AS seq FROM forge_log WHERE run_id = ?", args: [runId] })).rows[0]?.seq;
      throw new StoreError(`commit ${seq} of run ${runId} is not newer than the stored commit ${String(stored)} (${location}); a run never goes back`, runId, location);
    });
  }

  async latest(runId: string, at: { seq?: number } = {}): Promise<Checkpoint | undefined> {
    assertRunId(runId);
    const upTo = seqBound(at);
    return this.#use(runId, "forge_log", async (db, location) => {
      const { rows } = await db.execute({ sql: FROM_BASE, args: [runId, upTo, runId, upTo] });
      const records = rows.map((row) => ({ ...parseRecord(String(row.body), runId, `${location}@${String(row.seq)}`), events: [] }) as CommitRecord);
      return rebuildCheckpoint(runId, records, location);
    });
  }

  async events(runId: string): Promise<RunEvent[]> {
    assertRunId(runId);
    return this.#use(runId, "forge_log", async (db, location) => {
      const { rows } = await db.execute({ sql: "SELECT seq, events FROM forge_log WHERE run_id = ? ORDER BY seq", args: [runId] });
      return rows.flatMap((row) => parseEvents(String(row.events), runId, `${location}@${String(row.seq)}`));
    });
  }

  async listRuns(filter: { sessionId?: string } = {}): Promise<ListedRun[]> {
    return this.#use(undefined, "forge_runs", async (db) => {
      const { rows } =
        filter.sessionId === undefined
          ? await db.execute(`SELECT ${INFO} FROM forge_runs`)
          : await db.execute({ sql: `SELECT ${INFO} FROM forge_runs WHERE session_id = ?`, args: [filter.sessionId] });
      return listingOrder(rows.map((row) => this.#listed(row)));
    });
  }

  async lock(runId: string): Promise<RunLease> {
    assertRunId(runId);
    const holder = newHolderId();
    const run = (sql: InStatement) => this.#use(runId, "forge_leases", (db) => db.execute(sql));
    const sentAt = performance.now();
    // Read first to tell a takeover from a release (RELEASE writes expires_at 0); a new fence
    // one above the fence read proves the row read is the row replaced.
    const prev = (await run({ sql: PREVIOUS, args: [runId] })).rows[0];
    const taken = (await run({ sql: ACQUIRE, args: [runId, holder, this.#leaseMs] })).rows[0];
    const location = this.#where("forge_leases", runId);
    if (taken === undefined) {
      const current = (await run({ sql: HOLDER, args: [runId] })).rows[0];
      throw new RunLockedError(runId, location, String(current?.holder ?? "another holder"), Number(current?.left_ms ?? 0));
    }
    const fence = Number(taken.fence);
    const takenOver = prev !== undefined && Number(prev.fence) + 1 === fence && Number(prev.expires_at) !== 0;
    return new Lease(runId, fence, holder, {
      leaseMs: this.#leaseMs,
      location,
      sentAt,
      autoRenew: this.#autoRenew,
      takenOver,
      ops: {
        renew: async () => {
          const renewed = await run({ sql: RENEW, args: [this.#leaseMs, runId, fence] });
          if (renewed.rowsAffected === 0) throw new RunLockLostError(runId, location, fence, "a newer holder took the lease over");
        },
        release: async () => void (await run({ sql: RELEASE, args: [runId, fence] })),
      },
    });
  }

  async deleteRun(runId: string): Promise<void> {
    assertRunId(runId);
    // Taking the lease refuses a live holder and keeps a new one out while the rows go; the
    // lease row stays, so the next holder's fence is higher than any before.
    const lease = await this.lock(runId);
    try {
      await this.#use(runId, "forge_log", (db) =>
        db.batch(
          [
            { sql: "DELETE FROM forge_runs WHERE run_id = ?", args: [runId] },
            { sql: "DELETE FROM forge_log WHERE run_id = ?", args: [runId] },
          ],
          "write",
        ),
      );
    } finally {
      await lease.release();
    }
  }

  /** Close the connection this store opened (a client passed in is left to its owner); a later call reopens it. */
  async close(): Promise<void> {
    const ready = this.#ready;
    this.#ready = undefined;
    const client = await ready?.catch(() => undefined);
    if (client !== undefined && client !== this.#given) client.close();
  }

  /** A head row, checked (SQLite columns hold whatever was written to them), or the run as damaged. */
  #listed(row: Row): ListedRun {
    const runId = String(row.run_id);
    const { seq, workflow, session_id: sessionId, state, status, created_at: createdAt, saved_at: savedAt } = row;
    const fields = { seq, workflow, sessionId: sessionId === null ? undefined : sessionId, state, status, createdAt, savedAt };
    try {
      return checkedRunInfo(fields, runId, this.#where("forge_runs", runId));
    } catch (error) {
      return damagedRun(runId, error, typeof sessionId === "string" ? sessionId : undefined);
    }
  }

  #where(table: string, runId?: string): string {
    return `sqlite:${this.url}#${table}${runId === undefined ? "" : `/${runId}`}`;
  }

  /** Runs `op` on the database; any failure becomes a StoreError naming the run and where. */
  async #use<T>(runId: string | undefined, table: string, op: (db: Client, location: string) => Promise<T>): Promise<T> {
    const location = this.#where(table, runId);
    try {
      return await op(await this.#db(), location);
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const what = runId === undefined ? "" : ` for run ${runId}`;
      throw new StoreError(`run store database failed${what} at ${location}: ${(error as Error).message}`, runId, location, { cause: error });
    }
  }

  /** The client with the schema in place, opened on first use (so an unopenable database fails a call, naming its run). */
  #db(): Promise<Client> {
    this.#ready ??= this.#open().catch((error: unknown) => {
      this.#ready = undefined; // the next call tries again: the directory may exist by then
      throw error;
    });
    return this.#ready;
  }

  async #open(): Promise<Client> {
    // One connection for a local database: PRAGMA synchronous is per connection, and libSQL runs
    // each statement synchronously, so a pool would add nothing but connections without it.
    const local = /^(file:|:memory:)/i.test(this.#url);
    const client = this.#given ?? createClient({ url: this.#url, ...(local ? { concurrency: 1, timeout: BUSY_TIMEOUT } : {}) });
    try {
      if (client.protocol === "file") {
        await client.execute("PRAGMA journal_mode=WAL");
        await client.execute("PRAGMA synchronous=FULL");
      }
      const old = await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'");
      if (old.rows.length > 0) {
        throw new StoreError(`${this.url} holds runs stored by an older forge-ts (table checkpoints); this version keeps a commit log (forge_log) and cannot read them`, undefined, this.#where("checkpoints"));
      }
      await client.batch(SCHEMA, "write");
      return client;
    } catch (error) {
      if (client !== this.#given) client.close();
      throw error;
    }
  }
}
