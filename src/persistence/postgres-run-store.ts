/**
 * A run store in PostgreSQL, for runners on several machines sharing one database. Each commit
 * is one statement (so one transaction and one round trip) that checks the writer's lease and
 * appends to the run's log; leases expire on the database's clock. The SQL is in
 * postgres-plans.ts.
 *
 * Needs the optional package pg, which is why it is exported from "forge-ts/postgres" and not
 * from the main entry.
 */
import type { Pool } from "pg";
import { ForgeError, InvalidArgumentError, RunLockedError, RunLockLostError, StoreError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { parseEvents, parseRecord, rebuildCheckpoint, recordOf, seqBound } from "./commit-log.js";
import { Lease, newHolderId } from "./lease.js";
import { postgresPlans, SCHEMA_NAME, type PostgresPlans } from "./postgres-plans.js";
import { redactedSpec, storeKindOf } from "./store-spec.js";
import { assertRunId, checkedRunInfo, damagedRun, leaseMsOption, listingOrder, SessionViews, type Checkpoint, type Commit, type ListedRun, type RunEvent, type RunLease, type RunStore } from "./run-store.js";
import { optionalPackages } from "../core/optional-package.js";

// pg is an optional peer: without it, importing this module fails here, with one line naming it.
const { default: pg } = await optionalPackages("forge-ts/postgres", ["pg"], () => import("pg"));

export interface PostgresRunStoreOptions {
  /** `postgres://user:password@host:5432/database` (or `postgresql://`): the store opens a pool on it and ends it on close(). */
  url?: string;
  /** A pool you configured (TLS, auth, size): used as it is and never ended by the store. Give `url` or `pool`. */
  pool?: Pool;
  /** How long a lease lasts without renewal (ms, on the database's clock); default 30 s. */
  leaseMs?: number;
  /** false: leases are not renewed in the background (a paused holder; for tests). */
  autoRenew?: boolean;
  /** The schema holding the tables, created if missing; default "public". */
  schema?: string;
  /**
   * How long a statement may go unanswered before its call fails with a StoreError (ms); default
   * 15 s. For the pool the store opens from `url`; a pool you pass keeps its own settings (give
   * it `query_timeout`, `keepAlive` and `connectionTimeoutMillis` yourself).
   */
  queryTimeoutMs?: number;
}

const KNOWN = new Set(["url", "pool", "leaseMs", "autoRenew", "schema", "queryTimeoutMs"]);

/** How long connecting may take before a call fails (a database that is down must not hang a run). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * How long a statement may go unanswered (pg's client-side query_timeout) before its call fails:
 * a database that went silent (a partition that drops packets, a stopped server) would otherwise
 * hold the call until the kernel gives up on the connection, about 15 minutes. Every statement of
 * this store is one short autocommit statement (milliseconds on a healthy server, no lock held
 * past its own statement), so 15 s fires on a dead peer or a server in deep trouble, not on a
 * slow commit; and it is well under the default 30 s lease, so a run stuck on a dead connection
 * has failed, and that connection is gone, while its lease may still be released for the next
 * runner on a fresh one. pg-pool drops a client whose query timed out (and destroys its socket)
 * rather than reading a late answer on it.
 *
 * No server-side statement_timeout: pg would send it as a startup parameter, which connection
 * poolers such as PgBouncer refuse ("unsupported startup parameter"), breaking a URL that works
 * today; and the store gains little from it: a statement the client gave up on finishes on the
 * server in milliseconds, and if it is a commit that lands after all, the fencing token and the
 * seq check decide it as they decide any late write. Add `?options=-c%20statement_timeout%3D15000`
 * to the URL to have it anyway.
 */
const QUERY_TIMEOUT_MS = 15_000;

/**
 * TCP keepalive on every connection: after this long without traffic the OS probes the server
 * (Node asks for 10 probes a second apart), so a connection whose host vanished is found dead in
 * about 20 s, idle in the pool or waiting for an answer to a statement the server acknowledged.
 */
const KEEPALIVE_DELAY_MS = 10_000;

/** setTimeout's ceiling: a longer delay fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** PostgreSQL's unique_violation: a log row for this seq exists already. */
const UNIQUE_VIOLATION = "23505";

/**
 * @example
 * import { PostgresRunStore } from "forge-ts/postgres";
 * const store = new PostgresRunStore({ url: process.env.DATABASE_URL });
 * const runner = new WorkflowRunner({ client, contextManager, store });
 */
export class PostgresRunStore extends SessionViews implements RunStore {
  /** The database as the CLI and errors name it: its URL with any password shown as "***". */
  readonly label: string;
  readonly schema: string;
  readonly #url: string | undefined;
  readonly #given: Pool | undefined;
  readonly #database: string;
  readonly #plans: PostgresPlans;
  readonly #leaseMs: number;
  readonly #autoRenew: boolean | undefined;
  /** The query timeout of the pool in use (ours, or one a given pool was configured with), for the error that says it ran out. */
  readonly #queryTimeoutMs: number | undefined;
  #ready: Promise<Pool> | undefined;
  #closed = false;

  constructor(options: PostgresRunStoreOptions) {
    super();
    if (!isPlainObject(options)) throw new InvalidArgumentError("options", "expected { url } or { pool }, with leaseMs?, autoRenew?, schema?, queryTimeoutMs?");
    for (const key of Object.keys(options)) {
      if (!KNOWN.has(key)) throw new InvalidArgumentError(key, `unknown option; expected one of ${[...KNOWN].join(", ")}`);
    }
    const { url, pool, autoRenew, schema = "public" } = options;
    if ((url === undefined) === (pool === undefined)) throw new InvalidArgumentError("url", "give either url (a postgres:// URL) or pool (a pg Pool), not both or neither");
    if (url !== undefined && (typeof url !== "string" || storeKindOf(url) !== "postgres")) {
      throw new InvalidArgumentError("url", `expected a postgres:// or postgresql:// URL such as "postgres://user:password@localhost:5432/forge", got ${typeof url === "string" ? JSON.stringify(redactedSpec(url)) : typeof url}`);
    }
    if (pool !== undefined && !isPool(pool)) {
      throw new InvalidArgumentError("pool", "expected a pg Pool (new Pool({ ... }) from the pg package)");
    }
    if (autoRenew !== undefined && typeof autoRenew !== "boolean") throw new InvalidArgumentError("autoRenew", `expected a boolean, got ${JSON.stringify(autoRenew)}`);
    if (typeof schema !== "string" || !SCHEMA_NAME.test(schema)) {
      throw new InvalidArgumentError("schema", `expected a schema name of letters, digits and "_" (at most 63), got ${JSON.stringify(schema)}`);
    }
    const { queryTimeoutMs } = options;
    if (queryTimeoutMs !== undefined) {
      if (pool !== undefined) throw new InvalidArgumentError("queryTimeoutMs", "applies to the pool the store opens from url; a pool you pass keeps its own settings: give it query_timeout yourself");
      if (typeof queryTimeoutMs !== "number" || !Number.isSafeInteger(queryTimeoutMs) || queryTimeoutMs < 1 || queryTimeoutMs > MAX_TIMER_MS) {
        throw new InvalidArgumentError("queryTimeoutMs", `expected a positive integer number of milliseconds (at most ${MAX_TIMER_MS}), got ${JSON.stringify(queryTimeoutMs)}`);
      }
    }
    this.#queryTimeoutMs = pool !== undefined ? pool.options?.query_timeout : (queryTimeoutMs ?? QUERY_TIMEOUT_MS);
    this.#leaseMs = leaseMsOption(options.leaseMs);
    this.#autoRenew = autoRenew;
    this.#url = url;
    this.#given = pool;
    this.schema = schema;
    this.#plans = postgresPlans(schema);
    this.#database = databaseOf(url ?? pool?.options?.connectionString) ?? pool?.options?.database ?? "postgres";
    this.label = url !== undefined ? redactedSpec(url) : `postgres:${this.#database}`;
  }

  async commit(commit: Commit): Promise<void> {
    const { runId, fence, seq } = commit;
    assertRunId(runId);
    // Both are compared in SQL as bigints: anything but a positive integer would fail there or compare wrongly.
    for (const [name, value] of [["fence", fence], ["seq", seq]] as const) {
      if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError(name, `${JSON.stringify(value)} is not a positive integer`);
    }
    const { events, ...body } = recordOf(commit);
    const args = [runId, fence, seq, commit.workflow, commit.sessionId ?? null, commit.state, commit.status, commit.createdAt, commit.savedAt, commit.snapshot !== undefined, JSON.stringify(events ?? []), JSON.stringify(body)];
    await this.#use(runId, "forge_log", async (pool, location) => {
      const written = await pool.query(this.#plans.commit, args).then(
        (result) => result.rowCount === 1,
        (error: unknown) => {
          // The log holds this seq already although the head is older (rows changed behind the store's back): refused like any older seq.
          if ((error as { code?: unknown })?.code === UNIQUE_VIOLATION) return false;
          throw error;
        },
      );
      if (written) return;
      // Nothing written: the lease is no longer ours, or the seq is not newer. Which one decides the error.
      const head = await this.#head(pool, runId);
      const lost = lostError(runId, location, fence, head.fence);
      if (lost) throw lost;
      throw new StoreError(`commit ${seq} of run ${runId} is not newer than the stored commit ${head.seq ?? 0} (${location}); a run never goes back`, runId, location);
    }, `commit ${seq} may or may not have been applied`);
  }

  async latest(runId: string, at: { seq?: number } = {}): Promise<Checkpoint | undefined> {
    assertRunId(runId);
    const upTo = seqBound(at);
    return this.#use(runId, "forge_log", async (pool, location) => {
      const { rows } = await pool.query<{ seq: string; body: string }>(this.#plans.latest, [runId, upTo]);
      return rebuildCheckpoint(runId, rows.map((row) => parseRecord(row.body, runId, `${location}@${row.seq}`)), location);
    });
  }

  async events(runId: string): Promise<RunEvent[]> {
    assertRunId(runId);
    return this.#use(runId, "forge_log", async (pool, location) => {
      const { rows } = await pool.query<{ seq: string; events: string }>(this.#plans.events, [runId]);
      return rows.flatMap((row) => parseEvents(row.events, runId, `${location}@${row.seq}`));
    });
  }

  async listRuns(filter: { sessionId?: string } = {}): Promise<ListedRun[]> {
    return this.#use(undefined, "forge_runs", async (pool) => {
      const { rows } = await pool.query<RunRow>(this.#plans.listRuns, [filter.sessionId ?? null]);
      return listingOrder(rows.map((row) => listedOf(row, this.#where("forge_runs", row.run_id))));
    });
  }

  async lock(runId: string): Promise<RunLease> {
    assertRunId(runId);
    return this.#use(runId, "forge_leases", async (pool, location) => {
      const holder = newHolderId();
      for (let attempt = 0; attempt < 3; attempt++) {
        const sentAt = performance.now();
        const taken = (await pool.query<{ fence: string; prev_fence: string | null; prev_unreleased: boolean | null }>(this.#plans.lock, [runId, holder, this.#leaseMs])).rows[0];
        if (taken) {
          const fence = Number(taken.fence);
          const takenOver = taken.prev_unreleased === true && Number(taken.prev_fence) + 1 === fence;
          return this.#lease(runId, fence, holder, sentAt, location, takenOver);
        }
        const held = (await pool.query<{ holder: string; expires_in_ms: number }>(this.#plans.holder, [runId])).rows[0];
        if (held && held.expires_in_ms > 0) throw new RunLockedError(runId, location, held.holder, held.expires_in_ms);
        // Released or expired between the two statements: take it now.
      }
      throw new StoreError(`cannot lock run ${runId}: its lease keeps changing hands (${location})`, runId, location);
    }, `the lease may or may not have been taken (if it was, it runs out after ${this.#leaseMs} ms)`);
  }

  async deleteRun(runId: string): Promise<void> {
    assertRunId(runId);
    // Taking the lease refuses a live holder and keeps a new one out while the rows go.
    const lease = await this.lock(runId);
    try {
      await this.#use(runId, "forge_log", async (pool, location) => {
        const { rows } = await pool.query<{ held: number }>(this.#plans.deleteRun, [runId, lease.fence]);
        if (rows[0]?.held !== 1) throw lostError(runId, location, lease.fence, (await this.#head(pool, runId)).fence) ?? new RunLockLostError(runId, location, lease.fence, "the lease changed while deleting");
      }, "the run may or may not have been deleted");
    } finally {
      await lease.release();
    }
  }

  /** End the pool this store opened (a pool passed in is left to its owner); later calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = await this.#ready?.catch(() => undefined);
    this.#ready = undefined;
    if (pool !== undefined && pool !== this.#given) await pool.end();
  }

  #lease(runId: string, fence: number, holder: string, sentAt: number, location: string, takenOver: boolean): Lease {
    return new Lease(runId, fence, holder, {
      leaseMs: this.#leaseMs,
      location,
      sentAt,
      autoRenew: this.#autoRenew,
      takenOver,
      ops: {
        renew: () =>
          this.#use(runId, "forge_leases", async (pool) => {
            const { rowCount } = await pool.query(this.#plans.renew, [runId, fence, this.#leaseMs]);
            if (rowCount === 0) throw lostError(runId, location, fence, (await this.#head(pool, runId)).fence) ?? new RunLockLostError(runId, location, fence, "the lease could not be renewed");
          }, "the lease may or may not have been renewed"),
        release: () =>
          this.#use(runId, "forge_leases", (pool) => pool.query(this.#plans.release, [runId, fence]).then(() => undefined), `the lease may or may not have been released (if not, it runs out within ${this.#leaseMs} ms)`),
      },
    });
  }

  /** The run's current fence and stored seq (undefined: none). */
  async #head(pool: Pool, runId: string): Promise<{ fence?: number; seq?: number }> {
    const row = (await pool.query<{ fence: string | null; seq: string | null }>(this.#plans.head, [runId])).rows[0];
    return { ...(row?.fence == null ? {} : { fence: Number(row.fence) }), ...(row?.seq == null ? {} : { seq: Number(row.seq) }) };
  }

  /** `postgres:<database>#<table>/<runId>`, the schema named when it is not "public". */
  #where(table: string, runId?: string): string {
    const qualified = this.schema === "public" ? table : `${this.schema}.${table}`;
    return `postgres:${this.#database}#${qualified}${runId === undefined ? "" : `/${runId}`}`;
  }

  /**
   * Runs `op` on the pool; any failure becomes a StoreError naming the run and where. `unsure`
   * says what a write may have done when its statement got no answer: the server may have
   * applied it and only the answer was lost.
   */
  async #use<T>(runId: string | undefined, table: string, op: (pool: Pool, location: string) => Promise<T>, unsure?: string): Promise<T> {
    const location = this.#where(table, runId);
    const what = runId === undefined ? "" : ` for run ${runId}`;
    if (this.#closed) throw new StoreError(`the run store ${this.label} was closed${what} (${location})`, runId, location);
    let pool: Pool;
    try {
      pool = await this.#pool();
    } catch (error) {
      throw new StoreError(`cannot open the run store database ${this.label}${what} (${location}): ${this.#describe(error)}`, runId, location, { cause: error, unreachable: unreachable(error) });
    }
    try {
      return await op(pool, location);
    } catch (error) {
      if (ForgeError.isInstance(error)) throw error;
      const after = isQueryTimeout(error) && unsure !== undefined ? `; ${unsure}` : "";
      throw new StoreError(`run store database failed${what} at ${location}: ${this.#describe(error)}${after}`, runId, location, { cause: error, unreachable: unreachable(error) });
    }
  }

  /** A driver error as text, a query that timed out as what happened. */
  #describe(error: unknown): string {
    if (!isQueryTimeout(error)) return describe(error);
    return `no answer within ${this.#queryTimeoutMs === undefined ? "the pool's query_timeout" : `${this.#queryTimeoutMs} ms`} (the connection is dropped)`;
  }

  /** The pool with the tables in place, on first use (so a database that is down fails a call, naming its run). */
  #pool(): Promise<Pool> {
    this.#ready ??= this.#open().catch((error: unknown) => {
      this.#ready = undefined; // the next call tries again: the database may be up by then
      throw error;
    });
    return this.#ready;
  }

  async #open(): Promise<Pool> {
    if (this.#given) {
      await this.#given.query(this.#plans.create);
      return this.#given;
    }
    const pool = new pg.Pool({
      connectionString: this.#url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: this.#queryTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      allowExitOnIdle: true,
    });
    // An idle connection the server dropped (a restart) is removed from the pool and replaced on
    // the next query; without a listener its error would crash the process.
    pool.on("error", () => {});
    try {
      await pool.query(this.#plans.create);
      return pool;
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
  }
}

interface RunRow {
  run_id: string;
  seq: string;
  workflow: unknown;
  session_id: unknown;
  state: unknown;
  status: unknown;
  created_at: unknown;
  saved_at: unknown;
}

/** A forge_runs row's envelope, checked (bigints come back as strings), or the run as damaged. */
function listedOf(row: RunRow, location: string): ListedRun {
  const { seq, workflow, session_id: sessionId, state, status, created_at: createdAt, saved_at: savedAt } = row;
  try {
    return checkedRunInfo({ seq: Number(seq), workflow, sessionId: sessionId ?? undefined, state, status, createdAt, savedAt }, row.run_id, location);
  } catch (error) {
    return damagedRun(row.run_id, error, typeof sessionId === "string" ? sessionId : undefined);
  }
}

/** Why a write under `fence` was refused, when the run's lease is no longer it (undefined: it still is). */
function lostError(runId: string, location: string, fence: number, current: number | undefined): RunLockLostError | undefined {
  if (current === undefined) return new RunLockLostError(runId, location, fence, "the run has no lease");
  if (current > fence) return new RunLockLostError(runId, location, fence, `a newer holder took the lease over (lease ${current})`);
  if (current < fence) return new RunLockLostError(runId, location, fence, `no such lease was granted (the run's lease is ${current})`);
  return undefined;
}

/** Enough of a pg Pool to run queries on (a Pool from another copy of pg is one too). */
function isPool(value: unknown): value is Pool {
  return typeof value === "object" && value !== null && typeof (value as { query?: unknown }).query === "function";
}

/** The database a connection string names, if it names one. */
function databaseOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * pg's client-side query_timeout ran out: the statement got no answer in time. pg-pool then
 * removes that client and destroys its socket, so no later query reads the late answer.
 */
/** Node's codes for a connection that could not be made or was cut. */
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN", "EAI_AGAIN"]);
/** PostgreSQL's: too many connections, the server shutting down (admin or crash), or starting up. */
const SERVER_AWAY = new Set(["53300", "57P01", "57P02", "57P03"]);

/**
 * Whether a driver error means the database did not answer (rather than refusing the request):
 * a connection refused, cut or timed out (Node's codes, pg's own messages for a connection that
 * ended or a query with no answer), SQLSTATE class 08 (connection exception), or a server
 * shutting down or starting up. A wrong password, database or statement is none of these.
 */
function unreachable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(unreachable);
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (CONNECTION_CODES.has(code) || SERVER_AWAY.has(code) || code.startsWith("08"))) return true;
  return typeof message === "string" && /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout)/.test(message);
}

function isQueryTimeout(error: unknown): boolean {
  return (error as Error | undefined)?.message === "Query read timeout";
}

/** A driver error as text: connection failures to several addresses come as an AggregateError without a message. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(describe).join("; ");
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
  if (typeof message === "string" && message.length > 0) return message;
  return typeof code === "string" ? code : String(error);
}
