/**
 * Errors from snapshots and run stores: validation, leases and their fencing, session turns.
 */
import { redactText } from "../redact.js";
import { ForgeError } from "./forge-error.js";

/** A persisted snapshot cannot be restored (other machine version, unresolvable services). */
export class SnapshotError extends ForgeError {
  override readonly code = "FORGE_SNAPSHOT";
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
  override get data() {
    return this.details;
  }
}

/**
 * A run store could not read or write: names the run and the file (or table) involved.
 * `unreachable`: the store did not answer (its server refused or cut the connection, was
 * shutting down or starting up, or went silent past a timeout): the same call may work once it
 * answers again, and a queue worker waits it out instead of failing the run.
 */
export class StoreError extends ForgeError {
  override readonly code: string = "FORGE_STORE";
  readonly unreachable: boolean;
  /** Where it failed (`sqlite:<url>#<table>/<runId>`), without the URL's credentials. */
  readonly location: string;
  constructor(
    message: string,
    readonly runId: string | undefined,
    location: string,
    options?: { cause?: unknown; unreachable?: boolean },
  ) {
    super(message, options);
    this.location = redactText(location);
    this.unreachable = options?.unreachable ?? false;
  }
  override get data() {
    return { runId: this.runId ?? null, location: this.location, ...(this.unreachable ? { unreachable: true } : {}) };
  }
}

/**
 * One stored record of a run cannot be read: a log line or a row that does not parse, or whose
 * fields have the wrong shape. `location` names it (`<file>:<line>`, or `<table>/<runId>@<seq>`
 * for a database row), `snippet` is the start of its raw text. Only this run is affected: a
 * listing marks it damaged and shows the others, and deleting it removes it.
 */
export class CorruptRecordError extends StoreError {
  override readonly code = "FORGE_CORRUPT_RECORD";
  declare readonly runId: string;
  /** The start of the record's raw text (at most 80 characters). */
  readonly snippet: string;
  constructor(runId: string, location: string, raw: string, reason: string, options?: { cause?: unknown }) {
    const snippet = raw.length > 80 ? `${raw.slice(0, 79)}…` : raw;
    super(`run ${runId}'s stored record at ${location} cannot be read (${reason}); it begins ${JSON.stringify(snippet)}`, runId, location, options);
    this.snippet = snippet;
  }
  override get data() {
    return { ...super.data, snippet: this.snippet };
  }
}

/**
 * A run's event log cannot re-drive it: call arguments in it were masked when it was written
 * (`WorkflowRunner({ redactStoredLogs: true })`), so a replay would validate and match other
 * calls than the run made. Resume still works (it reads the checkpoints, which keep what it needs).
 */
export class RunNotReplayableError extends StoreError {
  override readonly code = "FORGE_RUN_NOT_REPLAYABLE";
  constructor(
    runId: string,
    readonly reason: string,
  ) {
    super(`run ${runId} cannot be replayed: ${reason}`, runId, "events");
  }
  override get data() {
    return { ...super.data, reason: this.reason };
  }
}

/**
 * Another live runner (this process or another machine) holds the run's lease: two writers would
 * fork its history. `expiresInMs` is how long the lease lasts unless its holder renews it
 * (measured on the store's clock), so a caller knows when to try again.
 */
export class RunLockedError extends StoreError {
  override readonly code = "FORGE_RUN_LOCKED";
  constructor(
    runId: string,
    location: string,
    readonly holder: string,
    readonly expiresInMs: number,
  ) {
    super(
      `run ${runId} is held by ${holder}, whose lease ends in ${(Math.max(0, expiresInMs) / 1000).toFixed(1)} s unless renewed (${location}); stop that runner first, or try again after the lease`,
      runId,
      location,
    );
  }
  override get data() {
    return { ...super.data, holder: this.holder, expiresInMs: this.expiresInMs };
  }
}

/**
 * This runner no longer holds the run: a newer holder took the lease over (ours lapsed while the
 * process was paused, partitioned or too slow to renew), or it could not be renewed in time. The
 * store refused the write carrying our fencing token; the runner stops driving the run and starts
 * no further tool.
 */
export class RunLockLostError extends StoreError {
  override readonly code = "FORGE_LOCK_LOST";
  constructor(
    runId: string,
    location: string,
    readonly fence: number,
    readonly reason: string,
  ) {
    super(`run ${runId}: lease ${fence} is lost (${reason}) (${location}); this runner stopped driving the run`, runId, location);
  }
  override get data() {
    return { ...super.data, fence: this.fence, reason: this.reason };
  }
}

/**
 * A queued session turn that did not run: an earlier turn of the session failed or was
 * cancelled (`failedRunId`, turn `failedTurn`), and this turn was enqueued with
 * `afterFailure: "fail"` (the default). Later turns of the session fail the same way.
 */
export class SessionTurnFailedError extends ForgeError {
  override readonly code = "FORGE_SESSION_TURN_FAILED";
  constructor(
    readonly sessionId: string,
    readonly runId: string,
    readonly turn: number,
    readonly failedRunId: string,
    readonly failedTurn: number,
    readonly outcome: "failed" | "cancelled" = "failed",
  ) {
    super(
      `session ${sessionId}: turn ${turn} (run ${runId}) did not run because turn ${failedTurn} (run ${failedRunId}) ${outcome}; enqueue with afterFailure: "continue" to run later turns anyway`,
    );
  }
  override get data() {
    return { sessionId: this.sessionId, runId: this.runId, turn: this.turn, failedRunId: this.failedRunId, failedTurn: this.failedTurn, outcome: this.outcome };
  }
}
