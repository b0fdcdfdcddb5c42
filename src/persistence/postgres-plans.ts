/**
 * Every SQL statement PostgresRunStore runs, as plain strings in one place (pg-boss's plans.ts
 * is the model). Tables, in `schema`:
 *
 *   forge_runs    one row per run: its latest commit's envelope, what listing reads
 *   forge_log     the commit log: one row per commit, `base` when it holds a whole snapshot,
 *                 `events` and `body` (the record without its events) as JSON text
 *   forge_leases  one row per run ever locked: the fencing token, its holder and expiry
 *
 * Lease times are only ever compared on the database's clock (now()), never a client's: hosts
 * disagree about the time, the database is the one clock every holder shares. JSON is kept as
 * text, not jsonb, so a record reads back exactly as it was written (jsonb reorders keys and
 * rewrites numbers).
 */

/** A schema name these plans can quote and embed as they are: letters, digits, "_". */
export const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export interface PostgresPlans {
  /** Creates what is missing; run as one implicit transaction (simple query protocol, no parameters). */
  create: string;
  /** $1 run, $2 fence, $3 seq, $4 workflow, $5 session, $6 state, $7 status, $8 created, $9 saved, $10 base, $11 events, $12 body → one row when written. */
  commit: string;
  /** $1 run → { fence, seq }: why a commit wrote nothing. */
  head: string;
  /** $1 run, $2 up to this seq → { seq, body } from the last base on, in order. */
  latest: string;
  /** $1 run → { seq, events } in order. */
  events: string;
  /** $1 session or null → the runs' envelopes. */
  listRuns: string;
  /** $1 run, $2 holder, $3 lease ms → { fence } when taken. */
  lock: string;
  /** $1 run → { holder, expires_in_ms } of the lease that refused us. */
  holder: string;
  /** $1 run, $2 fence, $3 lease ms → rowCount 1 when still ours. */
  renew: string;
  /** $1 run, $2 fence. */
  release: string;
  /** $1 run, $2 fence → { held }: 1 when the rows were deleted under our lease. */
  deleteRun: string;
}

/** `schema` must match SCHEMA_NAME (the store checks it): it is put into the SQL as it is. */
export function postgresPlans(schema: string): PostgresPlans {
  const s = `"${schema}"`;
  const runs = `${s}.forge_runs`;
  const log = `${s}.forge_log`;
  const leases = `${s}.forge_leases`;
  return {
    // Two stores starting at once on a fresh database would race in CREATE ... IF NOT EXISTS (it
    // checks the catalog, then inserts: the loser gets a duplicate-key error). The advisory lock,
    // held to the end of this transaction, lets one create and the next find everything there.
    create: `
      SELECT pg_advisory_xact_lock(hashtext('forge-ts schema ${schema}'));
      CREATE SCHEMA IF NOT EXISTS ${s};
      CREATE TABLE IF NOT EXISTS ${runs} (
        run_id text PRIMARY KEY,
        seq bigint NOT NULL,
        workflow text NOT NULL,
        session_id text,
        state text NOT NULL,
        status text NOT NULL,
        created_at double precision NOT NULL,
        saved_at double precision NOT NULL
      );
      CREATE INDEX IF NOT EXISTS forge_runs_by_session ON ${runs} (session_id);
      CREATE TABLE IF NOT EXISTS ${log} (
        run_id text NOT NULL,
        seq bigint NOT NULL,
        fence bigint NOT NULL,
        base boolean NOT NULL,
        events text NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
      CREATE INDEX IF NOT EXISTS forge_log_bases ON ${log} (run_id, seq) WHERE base;
      CREATE TABLE IF NOT EXISTS ${leases} (
        run_id text PRIMARY KEY,
        fence bigint NOT NULL,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL
      );`,

    // One statement, so one transaction. FOR SHARE on our lease row: a takeover (which updates
    // that row) waits for this commit to end, or, if it came first, the row is re-read with the
    // new fence and matches no more, so nothing is written. The head is upserted first and the
    // log row only follows a head that moved forward: ON CONFLICT compares seqs on the latest
    // committed row, not this statement's snapshot, so of two racing commits only a newer seq
    // gets through. An expired lease nobody took over still writes: only a newer holder refuses.
    commit: `
      WITH lease AS (
        SELECT fence FROM ${leases} WHERE run_id = $1 AND fence = $2 FOR SHARE
      ), head AS (
        INSERT INTO ${runs} AS r (run_id, seq, workflow, session_id, state, status, created_at, saved_at)
        SELECT $1, $3, $4, $5, $6, $7, $8, $9 FROM lease
        ON CONFLICT (run_id) DO UPDATE SET
          seq = excluded.seq, workflow = excluded.workflow, session_id = excluded.session_id, state = excluded.state,
          status = excluded.status, created_at = excluded.created_at, saved_at = excluded.saved_at
        WHERE r.seq < excluded.seq
        RETURNING seq
      )
      INSERT INTO ${log} (run_id, seq, fence, base, events, body)
      SELECT $1, seq, $2, $10, $11, $12 FROM head
      RETURNING seq`,

    head: `
      SELECT (SELECT fence FROM ${leases} WHERE run_id = $1) AS fence,
             (SELECT seq FROM ${runs} WHERE run_id = $1) AS seq`,

    latest: `
      SELECT seq, body FROM ${log}
      WHERE run_id = $1 AND seq <= $2
        AND seq >= coalesce((SELECT max(seq) FROM ${log} WHERE run_id = $1 AND base AND seq <= $2), 0)
      ORDER BY seq`,

    events: `SELECT seq, events FROM ${log} WHERE run_id = $1 ORDER BY seq`,

    listRuns: `
      SELECT run_id, seq, workflow, session_id, state, status, created_at, saved_at FROM ${runs}
      WHERE $1::text IS NULL OR session_id = $1`,

    // A new run's first lease has fence 1; taking a released or expired one raises the fence. The
    // WHERE is evaluated on the latest row after waiting for a racing taker: exactly one wins.
    // \`prev\` is the row as the statement first saw it: when the new fence is one above its
    // fence, it is the row replaced, and an expiry other than the release's 'epoch' means the
    // lease was taken over from a holder that never released it.
    lock: `
      WITH prev AS (SELECT fence, expires_at FROM ${leases} WHERE run_id = $1)
      INSERT INTO ${leases} AS l (run_id, fence, holder, expires_at)
      VALUES ($1, 1, $2, now() + $3 * interval '1 millisecond')
      ON CONFLICT (run_id) DO UPDATE SET fence = l.fence + 1, holder = excluded.holder, expires_at = excluded.expires_at
      WHERE l.expires_at <= now()
      RETURNING fence, (SELECT fence FROM prev) AS prev_fence, (SELECT expires_at > 'epoch'::timestamptz FROM prev) AS prev_unreleased`,

    holder: `
      SELECT holder, (extract(epoch FROM expires_at - now()) * 1000)::float8 AS expires_in_ms
      FROM ${leases} WHERE run_id = $1`,

    renew: `UPDATE ${leases} SET expires_at = now() + $3 * interval '1 millisecond' WHERE run_id = $1 AND fence = $2`,

    // Expired at once, never deleted: the next holder's fence must be higher, also after deleteRun.
    release: `UPDATE ${leases} SET expires_at = 'epoch' WHERE run_id = $1 AND fence = $2`,

    deleteRun: `
      WITH lease AS (
        SELECT fence FROM ${leases} WHERE run_id = $1 AND fence = $2 FOR SHARE
      ), logged AS (
        DELETE FROM ${log} WHERE run_id = $1 AND EXISTS (SELECT 1 FROM lease)
      ), head AS (
        DELETE FROM ${runs} WHERE run_id = $1 AND EXISTS (SELECT 1 FROM lease)
      )
      SELECT count(*)::int AS held FROM lease`,
  };
}
