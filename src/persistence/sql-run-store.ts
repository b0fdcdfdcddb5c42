/**
 * A run store in one SQLite database through libSQL: a single file instead of a directory
 * tree, or a libSQL server. Tables:
 *
 *   checkpoints  the latest checkpoint per run (upserted; `snapshot` is its JSON)
 *   events       the append-only event log, numbered 1, 2, 3, … per run
 *   locks        the process driving each run, with a token naming the holder in that process
 *
 * Every write is one transaction. A file database runs in WAL mode with synchronous=FULL, so
 * once a promise resolves its write survives kill -9 (and power loss).
 *
 * Needs the optional package @libsql/client, which is why it is exported from "forge-ts/sql"
 * and not from the main entry.
 */
import { randomUUID } from "node:crypto";
import { createClient, type Client, type Row } from "@libsql/client";
import { InvalidArgumentError, RunLockedError, StoreError } from "../core/errors.js";
import { isPlainObject } from "../core/messages.js";
import { assertRunId, byStart, checkedRunInfo, isProcessAlive, SessionViews, type Checkpoint, type RunEvent, type RunInfo, type RunLock, type RunStore } from "./run-store.js";
import type { PersistedRun } from "./snapshot.js";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS checkpoints (
    run_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, workflow TEXT NOT NULL, session_id TEXT,
    state TEXT NOT NULL, status TEXT NOT NULL, created_at REAL NOT NULL, saved_at REAL NOT NULL, snapshot TEXT NOT NULL)`,
  "CREATE INDEX IF NOT EXISTS checkpoints_by_session ON checkpoints (session_id)",
  "CREATE TABLE IF NOT EXISTS events (run_id TEXT NOT NULL, n INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, n))",
  "CREATE TABLE IF NOT EXISTS locks (run_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, taken_at REAL NOT NULL, token TEXT)",
];

/** A checkpoint's columns without its snapshot: what listing reads. */
const INFO = "run_id, seq, workflow, session_id, state, status, created_at, saved_at";

// The WHERE keeps a checkpoint from replacing one as new or newer; rowsAffected 0 says it was refused.
const UPSERT = `INSERT INTO checkpoints (${INFO}, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, workflow = excluded.workflow, session_id = excluded.session_id,
    state = excluded.state, status = excluded.status, created_at = excluded.created_at, saved_at = excluded.saved_at,
    snapshot = excluded.snapshot
  WHERE excluded.seq > checkpoints.seq`;

const APPEND = "INSERT INTO events (run_id, n, body) SELECT ?, COALESCE(MAX(n), 0) + 1, ? FROM events WHERE run_id = ?";

/** How long a write waits for another process's transaction on the same file (ms). */
const BUSY_TIMEOUT = 5_000;

/** Tokens of the locks this process holds (a second runner here is refused like another process). */
const held = new Set<string>();

export type SqlRunStoreOptions =
  /** A libSQL URL: "file:/path/to/runs.db", "file:runs.db" (relative to the cwd), ":memory:", "libsql://…". */
  | { url: string; client?: undefined }
  /** A client you configured (a remote with auth, say); `url` only names the database in errors. The store never closes it. */
  | { client: Client; url?: string };

/**
 * @example
 * import { SqlRunStore } from "forge-ts/sql";
 * const store = new SqlRunStore({ url: "file:.forge/runs.db" });
 * const runner = new WorkflowRunner({ client, contextManager, store });
 */
export class SqlRunStore extends SessionViews implements RunStore {
  /** The database, as named in error locations (`sqlite:<url>#<table>/<runId>`). */
  readonly url: string;
  readonly #given: Client | undefined;
  #ready: Promise<Client> | undefined;

  constructor(options: SqlRunStoreOptions) {
    super();
    if (!isPlainObject(options)) throw new InvalidArgumentError("options", "expected { url } or { client }");
    const { url, client } = options;
    if (client === undefined && (typeof url !== "string" || url.length === 0)) {
      throw new InvalidArgumentError("url", 'expected a libSQL URL such as "file:runs.db" or ":memory:"');
    }
    this.url = url ?? "client";
    this.#given = client;
  }

  async putCheckpoint(checkpoint: Checkpoint): Promise<void> {
    const { runId, seq } = checkpoint;
    assertRunId(runId);
    // The refusal of older checkpoints compares seqs in SQL: anything but a positive integer would compare wrongly.
    if (!Number.isSafeInteger(seq) || seq < 1) throw new InvalidArgumentError("seq", `${JSON.stringify(seq)} is not a positive integer`);
    await this.#use(runId, "checkpoints", async (db, location) => {
      const args = [runId, seq, checkpoint.workflow, checkpoint.sessionId ?? null, checkpoint.state, checkpoint.status, checkpoint.createdAt, checkpoint.savedAt, JSON.stringify(checkpoint.snapshot)];
      const [put, stored] = await db.batch([{ sql: UPSERT, args }, { sql: "SELECT seq FROM checkpoints WHERE run_id = ?", args: [runId] }], "write");
      if (put?.rowsAffected === 0) {
        throw new StoreError(`checkpoint ${seq} of run ${runId} is not newer than the stored checkpoint ${String(stored?.rows[0]?.seq)} (${location}); a run's checkpoints never go back`, runId, location);
      }
    });
  }

  async appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    assertRunId(runId);
    if (events.length === 0) return;
    await this.#use(runId, "events", (db) => db.batch(events.map((event) => ({ sql: APPEND, args: [runId, JSON.stringify(event), runId] })), "write"));
  }

  async latest(runId: string): Promise<Checkpoint | undefined> {
    assertRunId(runId);
    return this.#use(runId, "checkpoints", async (db, location) => {
      const row = (await db.execute({ sql: `SELECT ${INFO}, snapshot FROM checkpoints WHERE run_id = ?`, args: [runId] })).rows[0];
      if (row === undefined) return undefined;
      const info = this.#info(row);
      let snapshot: unknown;
      try {
        snapshot = JSON.parse(String(row.snapshot));
      } catch (error) {
        throw new StoreError(`checkpoint of run ${runId} is not JSON (${location}): ${(error as Error).message}`, runId, location, { cause: error });
      }
      // Only the envelope is checked here; the snapshot itself is checked by the resume path.
      if (!isPlainObject(snapshot)) throw new StoreError(`checkpoint of run ${runId} is malformed (${location}): snapshot is not an object`, runId, location);
      return { ...info, snapshot: snapshot as unknown as PersistedRun };
    });
  }

  async events(runId: string): Promise<RunEvent[]> {
    assertRunId(runId);
    return this.#use(runId, "events", async (db, location) => {
      const { rows } = await db.execute({ sql: "SELECT n, body FROM events WHERE run_id = ? ORDER BY n", args: [runId] });
      return rows.map((row) => {
        try {
          return JSON.parse(String(row.body)) as RunEvent;
        } catch (error) {
          throw new StoreError(`event log of run ${runId} has a corrupt entry ${String(row.n)} (${location})`, runId, location, { cause: error });
        }
      });
    });
  }

  async listRuns(filter: { sessionId?: string } = {}): Promise<RunInfo[]> {
    return this.#use(undefined, "checkpoints", async (db) => {
      const { rows } =
        filter.sessionId === undefined
          ? await db.execute(`SELECT ${INFO} FROM checkpoints`)
          : await db.execute({ sql: `SELECT ${INFO} FROM checkpoints WHERE session_id = ?`, args: [filter.sessionId] });
      return rows.map((row) => this.#info(row)).sort(byStart);
    });
  }

  async lock(runId: string): Promise<RunLock> {
    assertRunId(runId);
    return this.#use(runId, "locks", async (db, location) => {
      const token = randomUUID();
      for (let attempt = 0; attempt < 2; attempt++) {
        const taken = await db.execute({ sql: "INSERT INTO locks (run_id, pid, taken_at, token) VALUES (?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING", args: [runId, process.pid, Date.now(), token] });
        if (taken.rowsAffected === 1) return this.#holding(runId, token);
        const row = (await db.execute({ sql: "SELECT pid, token FROM locks WHERE run_id = ?", args: [runId] })).rows[0];
        if (row === undefined) continue; // released in between
        const holder = Number(row.pid);
        const ours = holder === process.pid && typeof row.token === "string" && held.has(row.token);
        if (ours || (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && isProcessAlive(holder))) {
          throw new RunLockedError(runId, location, holder);
        }
        // Stale: its process is gone (killed mid-run). Replace that very row, so of two racing takers one wins.
        const over = await db.execute({
          sql: "UPDATE locks SET pid = ?, taken_at = ?, token = ? WHERE run_id = ? AND pid IS ? AND token IS ?",
          args: [process.pid, Date.now(), token, runId, row.pid ?? null, row.token ?? null],
        });
        if (over.rowsAffected === 1) return this.#holding(runId, token);
      }
      throw new StoreError(`cannot lock run ${runId}: another process keeps taking the lock (${location})`, runId, location);
    });
  }

  async deleteRun(runId: string): Promise<void> {
    assertRunId(runId);
    // Taking the lock refuses a live holder and keeps a new one out while the rows go.
    const lock = await this.lock(runId);
    try {
      await this.#use(runId, "checkpoints", (db) =>
        db.batch(
          [
            { sql: "DELETE FROM checkpoints WHERE run_id = ?", args: [runId] },
            { sql: "DELETE FROM events WHERE run_id = ?", args: [runId] },
          ],
          "write",
        ),
      );
    } finally {
      await lock.release();
    }
  }

  /** Close the connection this store opened (a client passed in is left to its owner); a later call reopens it. */
  async close(): Promise<void> {
    const ready = this.#ready;
    this.#ready = undefined;
    const client = await ready?.catch(() => undefined);
    if (client !== undefined && client !== this.#given) client.close();
  }

  #holding(runId: string, token: string): RunLock {
    held.add(token);
    return {
      release: async () => {
        if (!held.delete(token)) return;
        await this.#use(runId, "locks", (db) => db.execute({ sql: "DELETE FROM locks WHERE run_id = ? AND token = ?", args: [runId, token] }));
      },
    };
  }

  /** A checkpoint row's envelope, checked: SQLite columns hold whatever was written to them. */
  #info(row: Row): RunInfo {
    const runId = String(row.run_id);
    const { seq, workflow, session_id: sessionId, state, status, created_at: createdAt, saved_at: savedAt } = row;
    const fields = { seq, workflow, sessionId: sessionId === null ? undefined : sessionId, state, status, createdAt, savedAt };
    return checkedRunInfo(fields, runId, this.#where("checkpoints", runId));
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
    const local = /^(file:|:memory:)/i.test(this.url);
    const client = this.#given ?? createClient({ url: this.url, ...(local ? { concurrency: 1, timeout: BUSY_TIMEOUT } : {}) });
    try {
      if (client.protocol === "file") {
        await client.execute("PRAGMA journal_mode=WAL");
        await client.execute("PRAGMA synchronous=FULL");
      }
      await client.batch(SCHEMA, "write");
      return client;
    } catch (error) {
      if (client !== this.#given) client.close();
      throw error;
    }
  }
}
