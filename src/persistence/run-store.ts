/**
 * Where durable runs live. A store keeps, per run, its latest checkpoint (the whole persisted
 * snapshot, replaced atomically) and an append-only event log (model responses, tool outcomes,
 * messages), and holds a lock so that one live runner at a time writes a run. Sessions are runs
 * that share a `sessionId`, one per turn; the latest finished one carries the conversation.
 *
 * Shaped like LangGraph's checkpointers (put a checkpoint, put pending writes, get the latest,
 * list, delete); implementations: FileRunStore (file-run-store.ts).
 */
import { InvalidArgumentError, StoreError, type ErrorJSON } from "../core/errors.js";
import type { LLMResponse, Usage } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { PersistedRun } from "./snapshot.js";
import type { WorkflowInput } from "../loop/context.js";

/** One saved moment of a run: what `runner.resume(runId, workflow)` restores. */
export interface Checkpoint {
  runId: string;
  /** 1, 2, 3, … per run, from the one runner holding the run's lock. */
  seq: number;
  workflow: string;
  sessionId?: string;
  /** The state the run was in ("inferring", "executingTools.running", "done", …). */
  state: string;
  /** "active" while the run can go on; "done" once it reached a final state. */
  status: "active" | "done";
  /** When the run started and when this checkpoint was taken (ms since epoch). */
  createdAt: number;
  savedAt: number;
  snapshot: PersistedRun;
}

/** What the event log records, in order: enough to re-drive the statechart with no model and no tools. */
export type RunEvent =
  /** A new run's machine input (history seed, budgets): where a replay starts. */
  | { type: "start"; input: WorkflowInput }
  /** `usage` and `now`: the run's token totals and clock once the answer was taken in. */
  | { type: "response"; iteration: number; response: LLMResponse; usage: Usage; now: number }
  /** `now`: when the tool finished (a replay's clock); absent for failed calls and older logs. */
  | { type: "toolEnd"; tool: string; callId: string; status: string; content: string; result?: unknown; now?: number }
  | { type: "message"; message: Message }
  | { type: "end"; state: string; error?: ErrorJSON };

/** A run as listed: its latest checkpoint without the snapshot. */
export type RunInfo = Omit<Checkpoint, "snapshot">;

export interface SessionInfo {
  sessionId: string;
  /** The session's runs (turns), oldest first. */
  runs: RunInfo[];
  updatedAt: number;
}

/** Held while a runner drives a run; `release()` lets the next one in. */
export interface RunLock {
  release(): Promise<void>;
}

export interface RunStore {
  /** Save `checkpoint` as the run's latest, atomically: after a crash either it or the one before is there, whole. */
  putCheckpoint(checkpoint: Checkpoint): Promise<void>;
  /** Append to the run's event log (durable when the promise resolves). */
  appendEvents(runId: string, events: readonly RunEvent[]): Promise<void>;
  /** The run's latest checkpoint; undefined when the store has no such run. */
  latest(runId: string): Promise<Checkpoint | undefined>;
  /** The run's event log, oldest first (an entry torn by a crash at the end is left out). */
  events(runId: string): Promise<RunEvent[]>;
  /** Every run, or a session's, oldest first. */
  listRuns(filter?: { sessionId?: string }): Promise<RunInfo[]>;
  /** Every session, most recently updated first. */
  listSessions(): Promise<SessionInfo[]>;
  /** The conversation so far: the messages of the session's latest finished run ([] for a new session). */
  history(sessionId: string): Promise<Message[]>;
  /** Take the run's lock, or throw RunLockedError while another live runner holds it. */
  lock(runId: string): Promise<RunLock>;
  /** Remove a run with its checkpoint and log. */
  deleteRun(runId: string): Promise<void>;
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
  fields: { seq: unknown; workflow: unknown; sessionId: unknown; state: unknown; status: unknown; createdAt: unknown; savedAt: unknown },
  runId: string,
  location: string,
): RunInfo {
  const bad = (what: string) => new StoreError(`checkpoint of run ${runId} is malformed (${location}): ${what}`, runId, location);
  const { seq, workflow, sessionId, state, status, createdAt, savedAt } = fields;
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 1) throw bad("seq is not a positive integer");
  if (typeof workflow !== "string") throw bad("workflow is not a string");
  if (sessionId !== undefined && typeof sessionId !== "string") throw bad("sessionId is not a string");
  if (typeof state !== "string") throw bad("state is not a string");
  if (status !== "active" && status !== "done") throw bad('status is not "active" or "done"');
  if (typeof createdAt !== "number" || typeof savedAt !== "number") throw bad("createdAt/savedAt are not numbers");
  return { runId, seq, workflow, ...(sessionId === undefined ? {} : { sessionId }), state, status, createdAt, savedAt };
}

/** Whether a lock's holder still runs (EPERM: it exists but belongs to another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Group runs into sessions (runs without a sessionId are left out), most recently updated first. */
export function sessionsOf(runs: readonly RunInfo[]): SessionInfo[] {
  const sessions = new Map<string, RunInfo[]>();
  for (const run of runs) {
    if (run.sessionId === undefined) continue;
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
export const byStart = (a: RunInfo, b: RunInfo): number => a.createdAt - b.createdAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);

/**
 * The session views every store derives from its own listing: sessions grouped from runs, and a
 * session's history as the messages of its last finished turn. Stores extend it.
 */
export abstract class SessionViews {
  abstract listRuns(filter?: { sessionId?: string }): Promise<RunInfo[]>;
  abstract latest(runId: string): Promise<Checkpoint | undefined>;

  async listSessions(): Promise<SessionInfo[]> {
    return sessionsOf(await this.listRuns());
  }

  async history(sessionId: string): Promise<Message[]> {
    const last = latestRun((await this.listRuns({ sessionId })).filter((r) => r.status === "done"));
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
