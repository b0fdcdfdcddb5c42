/**
 * Where durable runs live. A store keeps, per run, a log of commits: each committed step is one
 * durable write holding the step's events (model responses, tool outcomes, messages) and the run's
 * state, as a delta from the previous commit or, now and then, whole (a base). `latest()`
 * rebuilds the state from the last base and the deltas after it. A run is driven by one holder at
 * a time under a lease with a fencing token: every commit carries the token, and the store refuses
 * it once a newer holder exists (RunLockLostError). Sessions are runs that share a `sessionId`,
 * one per turn; the latest finished one carries the conversation.
 *
 * Implementations: MemoryRunStore, FileRunStore, SqlRunStore (libSQL), PostgresRunStore; one
 * contract suite (test/persistence/support/run-store-contract.ts) runs against each.
 */
import { CorruptRecordError, ForgeError, InvalidArgumentError, StoreError, type ErrorJSON } from "../core/errors.js";
import type { LLMResponse, Usage } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { JsonDelta } from "./json-delta.js";
import type { PersistedRun } from "./snapshot.js";
import type { ParentLink, WorkflowInput } from "../loop/context.js";
import type { HumanDecision } from "../loop/human.js";
import { WorkflowState } from "../loop/state-name.js";

// ParentLink is part of the machine context (src/loop sits below the stores); re-exported so
// the store's event types keep one import point.
export type { ParentLink };

/**
 * "active" while the run can go on by itself; "waiting" while it waits for a person
 * (`awaitingHuman`: nothing runs until a decision arrives); once it reached a final state, that
 * state: "done", "failed" or "cancelled".
 */
export type RunStatus = "active" | "waiting" | "done" | "failed" | "cancelled";

/** Every RunStatus, in the order a person reads them. */
export const RUN_STATUSES: readonly RunStatus[] = ["active", "waiting", "done", "failed", "cancelled"];

/** The store status of a run in `state` (`final`: the machine reached a final state). */
export function statusOfState(state: string, final: boolean): RunStatus {
  if (final) return state === WorkflowState.failed || state === WorkflowState.cancelled ? state : "done";
  return state === WorkflowState.awaitingHuman ? "waiting" : "active";
}

/** The run reached a final state (done, failed or cancelled): nothing more happens to it. */
export const isFinalStatus = (status: RunStatus): boolean => status !== "active" && status !== "waiting";

/** One saved moment of a run: what `runner.resume(runId, workflow)` restores. */
export interface Checkpoint {
  runId: string;
  /** 1, 2, 3, … per run: the seq of the last commit. */
  seq: number;
  workflow: string;
  sessionId?: string;
  /** The state the run was in ("inferring", "executingTools.running", "done", …). */
  state: string;
  /** "active", "waiting", or the final state it reached: "done", "failed", "cancelled" (RunStatus). */
  status: RunStatus;
  /** When the run started and when this checkpoint was taken (ms since epoch). */
  createdAt: number;
  savedAt: number;
  snapshot: PersistedRun;
}

/**
 * What the event log records, in order: enough to re-drive the statechart with no model and no
 * tools. The messages themselves are in the run's state (each commit's delta appends them), not
 * repeated here.
 */
export type RunEvent =
  /**
   * A new run's machine input (history seed, budgets): where a replay starts. `parent`: the run
   * was started by a tool call of another run (`workflowTool`): that run and the call's id.
   */
  | { type: "start"; input: WorkflowInput; parent?: ParentLink; redacted?: true; launch?: RunLaunch }
  /**
   * A fork's first event, instead of `start`: the run began as a copy of commit `from.seq` of
   * run `from.runId` (its state is this run's first commit; see src/runner/fork.ts).
   */
  | { type: "fork"; from: { runId: string; seq: number } }
  /**
   * `usage` and `now`: the run's token totals and clock once the answer was taken in.
   * `redacted` (here and on `start`): call arguments in it were masked (`redactStoredLogs`), so
   * the log no longer re-drives the run (`replayRun` refuses it).
   */
  | { type: "response"; iteration: number; response: LLMResponse; usage: Usage; now: number; redacted?: true }
  /**
   * `now`: when the tool finished (a replay's clock); absent for failed calls and older logs.
   * `content` is what the model saw; `fullContent` the whole text when that was cut (`maxResultChars`).
   */
  | { type: "toolEnd"; tool: string; callId: string; status: string; content: string; result?: unknown; fullContent?: string; now?: number }
  /**
   * A tool call's outcome, written ahead: durable before the machine takes it in. On resume, a
   * call whose outcome is recorded under its idempotency key is answered from here, never re-run.
   */
  | { type: "outcome"; key: string; output?: unknown; error?: { status: "error" | "resolution"; content: string } }
  /**
   * A person's decision on a pending request, recorded before the run acts on it (by the
   * runner, `runs approve|reject|answer`, the visualizer): a restart re-applies it, never re-asks.
   */
  | { type: "decision"; callId: string; decision: HumanDecision; at: number }
  | { type: "end"; state: string; error?: ErrorJSON };

/**
 * How a run was launched from the command line (`forge-ts run`, the demo with `--store`), kept in
 * its start event so `forge-ts runs resume|retry|replay` need no flags for it. Never a
 * credential: a key comes from the flags or the environment of each command, and a `baseUrl` is
 * kept without its user and password. Runs started before it existed have none.
 */
export interface RunLaunch {
  /** The workflow module, as an absolute path. */
  module: string;
  /** The backend name (`sim`, `ollama`, ...) and its model (for `sim`, the fault profile). */
  backend: string;
  model: string;
  baseUrl?: string;
  mode?: string;
  think?: boolean;
  recommendedSampling?: true;
}

/** A run as listed: its latest checkpoint without the snapshot. */
export type RunInfo = Omit<Checkpoint, "snapshot">;

/** Where a stored record of a run could not be read, and why: a CorruptRecordError's location and message. */
export interface RunDamage {
  /** `<file>:<line>` (FileRunStore), `sqlite:<url>#<table>/<runId>[@<seq>]`, `postgres:<db>#<table>/<runId>[@<seq>]`, `memory#<runId>:<n>`. */
  where: string;
  message: string;
}

/**
 * A run the store holds but whose listed record cannot be read (a log line or head row that does
 * not parse): listed so it is seen and can be deleted; nothing else about it is known for sure.
 * `sessionId` when the store can still tell (another record of it, a database row's session).
 */
export interface DamagedRunInfo {
  runId: string;
  sessionId?: string;
  damaged: RunDamage;
}

/** An entry of `listRuns()`: a run, or a run that cannot be read. */
export type ListedRun = RunInfo | DamagedRunInfo;

/** @example const healthy = (await store.listRuns()).filter((r) => !isDamaged(r)); */
export const isDamaged = (run: ListedRun): run is DamagedRunInfo => "damaged" in run;

/**
 * The listing entry of `runId` when `error` says one of its records cannot be read (a
 * CorruptRecordError of this run); any other error (a store out of reach, another run's) is
 * thrown on.
 */
export function damagedRun(runId: string, error: unknown, sessionId?: string): DamagedRunInfo {
  if (!isDamageOf(error, runId)) throw error;
  return { runId, ...(sessionId === undefined ? {} : { sessionId }), damaged: { where: error.location, message: error.message } };
}

/** `error` says a record of `runId` cannot be read (a CorruptRecordError, also from another copy of forge-ts). */
export function isDamageOf(error: unknown, runId: string): error is CorruptRecordError {
  return ForgeError.isInstance(error) && error.code === "FORGE_CORRUPT_RECORD" && (error as CorruptRecordError).runId === runId;
}

export interface SessionInfo {
  sessionId: string;
  /** The session's runs (turns), oldest first. */
  runs: RunInfo[];
  updatedAt: number;
}

/** One commit as a store keeps it. */
export interface CommitRecord extends Omit<RunInfo, "runId"> {
  /** The fencing token of the lease the commit was written under. */
  fence: number;
  events: RunEvent[];
  /** The run's whole state: a base that later deltas apply to. */
  snapshot?: PersistedRun;
  /** The run's state as a change from the previous commit's. Neither: the state did not change. */
  delta?: JsonDelta;
}

/** What a runner hands the store for one committed step. */
export interface Commit extends CommitRecord {
  runId: string;
}

/** Held while a runner drives a run; `release()` lets the next one in. */
export interface RunLock {
  release(): Promise<void>;
}

/**
 * A run's lease: held by one holder at a time, renewed in the background while held, and lost
 * when a newer holder took it over or it could not be renewed in time.
 */
export interface RunLease extends RunLock {
  readonly runId: string;
  /** The fencing token: grows with every acquisition of the run; commits carry it. */
  readonly fence: number;
  /** Who holds it: host, pid and a random id. */
  readonly holder: string;
  /**
   * Taken from a holder whose lease ran out without a release (a dead, paused or cut-off
   * runner): what forge_lease_takeovers_total counts. False for a new run or a released lease.
   */
  readonly takenOver: boolean;
  /** Throws RunLockLostError unless the lease is still ours by this process's own clock. */
  assertHeld(): void;
  /** Extend the lease now (it is also renewed in the background unless the store says otherwise). */
  renew(): Promise<void>;
  /** Called once, when the lease is lost. */
  onLost(handler: (error: StoreError) => void): void;
}

export interface RunStore {
  /**
   * Write one committed step durably, in one write: after a crash it is there whole or not at
   * all. Refused with RunLockLostError once a newer lease than `commit.fence` exists, and with a
   * StoreError when `commit.seq` is not newer than the stored one.
   */
  commit(commit: Commit): Promise<void>;
  /**
   * The run's latest checkpoint (rebuilt from its last base and the deltas after it); undefined
   * when the store has no such run. `{ seq }`: the checkpoint as of that commit instead (what
   * a retry goes back to).
   */
  latest(runId: string, at?: { seq?: number }): Promise<Checkpoint | undefined>;
  /** The run's event log, oldest first. */
  events(runId: string): Promise<RunEvent[]>;
  /**
   * Every run, or a session's, oldest first. A run whose listed record cannot be read (its log's
   * last line, its head row) is a DamagedRunInfo, after the others in id order; in a session's
   * listing only when the store can tell it belongs there. One damaged run never hides another.
   */
  listRuns(filter?: { sessionId?: string }): Promise<ListedRun[]>;
  /** Every session, most recently updated first (of its runs that can be read). */
  listSessions(): Promise<SessionInfo[]>;
  /**
   * The conversation so far: the messages of the session's latest finished run ([] for a new
   * session). A StoreError when a run of the session cannot be read: it may be the latest.
   */
  history(sessionId: string): Promise<Message[]>;
  /**
   * Take the run's lease: a new run's, a released one, or an expired one (taken over, with a
   * higher fencing token). A live lease is refused with RunLockedError naming its holder and
   * when it ends.
   */
  lock(runId: string): Promise<RunLease>;
  /** Remove a run with its log (refused while another holder's lease is live), damaged records and all. */
  deleteRun(runId: string): Promise<void>;
}

/** How long a lease lasts without renewal unless a store is told otherwise. */
export const DEFAULT_LEASE_MS = 30_000;

/** A store's `leaseMs` option, checked. */
export function leaseMsOption(value: unknown): number {
  if (value === undefined) return DEFAULT_LEASE_MS;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 100) {
    throw new InvalidArgumentError("leaseMs", `expected an integer number of milliseconds >= 100, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Run ids name directories and keys: letters, digits, ".", "_", "-", not leading "." or "-", at most 128. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const isRunId = (value: unknown): value is string => typeof value === "string" && SAFE_ID.test(value);

/** Throws InvalidArgumentError for a run id a store cannot hold safely. */
export function assertRunId(runId: unknown): asserts runId is string {
  if (!isRunId(runId)) {
    throw new InvalidArgumentError("runId", `${JSON.stringify(runId)} cannot name a run (letters, digits, ".", "_", "-"; at most 128; not starting with "." or "-")`);
  }
}

/**
 * A stored checkpoint's envelope, checked field by field (storage holds whatever was written to
 * it): a wrong field is a StoreError naming the run and `location`.
 */
export function checkedRunInfo(
  fields: { seq: unknown; workflow: unknown; sessionId?: unknown; state: unknown; status: unknown; createdAt: unknown; savedAt: unknown },
  runId: string,
  location: string,
): RunInfo {
  const bad = (what: string) => new CorruptRecordError(runId, location, JSON.stringify(fields), what);
  const { seq, workflow, sessionId, state, status, createdAt, savedAt } = fields;
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 1) throw bad("seq is not a positive integer");
  if (typeof workflow !== "string") throw bad("workflow is not a string");
  if (sessionId !== undefined && typeof sessionId !== "string") throw bad("sessionId is not a string");
  if (typeof state !== "string") throw bad("state is not a string");
  if (!RUN_STATUSES.includes(status as RunStatus)) throw bad(`status is not one of ${RUN_STATUSES.join(", ")}`);
  if (typeof createdAt !== "number" || typeof savedAt !== "number") throw bad("createdAt/savedAt are not numbers");
  // forge-ts 0.1 stored "done" for every final run: a final run's status is its final state,
  // derived here, so records written before and after read alike (no migration of stored rows).
  const checked = isFinalStatus(status as RunStatus) ? statusOfState(state, true) : (status as RunStatus);
  return { runId, seq, workflow, ...(sessionId === undefined ? {} : { sessionId }), state, status: checked, createdAt, savedAt };
}

/** Group runs into sessions (runs without a sessionId, and damaged ones, are left out), most recently updated first. */
export function sessionsOf(runs: readonly ListedRun[]): SessionInfo[] {
  const sessions = new Map<string, RunInfo[]>();
  for (const run of runs) {
    if (run.sessionId === undefined || isDamaged(run)) continue;
    const list = sessions.get(run.sessionId) ?? [];
    list.push(run);
    sessions.set(run.sessionId, list);
  }
  return [...sessions]
    .map(([sessionId, list]) => {
      const ordered = [...list].sort(byStart);
      return { sessionId, runs: ordered, updatedAt: Math.max(...ordered.map((r) => r.savedAt)) };
    })
    .sort((a, b) => b.updatedAt - a.updatedAt);
}

/** Oldest first: by start, then by id so equal clocks still give one order. */
export const byStart = (a: RunInfo, b: RunInfo): number => a.createdAt - b.createdAt || byId(a, b);

const byId = (a: { runId: string }, b: { runId: string }): number => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);

/** A listing in its order: runs oldest first, then damaged runs (which have no times) by id. */
export function listingOrder(runs: readonly ListedRun[]): ListedRun[] {
  const damaged = runs.filter(isDamaged).sort(byId);
  return [...runs.filter((r): r is RunInfo => !isDamaged(r)).sort(byStart), ...damaged];
}

/**
 * A session's runs from its listing, or a StoreError naming a run of it that cannot be read: a
 * session never goes on past a turn it cannot see (that turn may be its latest).
 */
export function sessionRuns(sessionId: string, runs: readonly ListedRun[]): RunInfo[] {
  const damaged = runs.find(isDamaged);
  if (damaged) {
    const { runId, damaged: d } = damaged;
    throw new StoreError(`session ${sessionId} holds run ${runId}, which cannot be read (${d.where}): delete it (forge-ts runs delete ${runId}) or repair it to go on; ${d.message}`, runId, d.where);
  }
  return runs as RunInfo[];
}

/**
 * The session views every store derives from its own listing: sessions grouped from runs, and a
 * session's history as the messages of its last finished turn. Stores extend it.
 */
export abstract class SessionViews {
  abstract listRuns(filter?: { sessionId?: string }): Promise<ListedRun[]>;
  abstract latest(runId: string): Promise<Checkpoint | undefined>;

  async listSessions(): Promise<SessionInfo[]> {
    return sessionsOf(await this.listRuns());
  }

  async history(sessionId: string): Promise<Message[]> {
    const last = latestRun(sessionRuns(sessionId, await this.listRuns({ sessionId })).filter((r) => isFinalStatus(r.status)));
    return last ? ((await this.latest(last.runId))?.snapshot.context.messages ?? []) : [];
  }
}

/**
 * A session's latest run, which decides how the next turn starts: finished → continue its
 * conversation; still active → it must be resumed first.
 */
export function latestRun(runs: readonly RunInfo[]): RunInfo | undefined {
  return [...runs].sort(byStart).at(-1);
}
