/**
 * Reading a run's commit log back, the same way in every store: which records count, the
 * checkpoint they add up to (the last base with the deltas after it applied), and the events.
 */
import { CorruptRecordError, InvalidArgumentError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { applyJson } from "./json-delta.js";
import { checkedRunInfo, type Checkpoint, type CommitRecord, type RunEvent } from "./run-store.js";
import type { PersistedRun } from "./snapshot.js";

/**
 * The records that count, in log order. A record whose fence is lower than one before it was
 * written by a holder whose lease had already been taken over (it lost the race with the
 * takeover, and was told so): left out. So is a record not newer than the one before it.
 * Records without a seq (a store's lease markers) only raise the fence.
 */
export function validRecords<T extends { fence: number; seq?: number }>(records: readonly T[]): T[] {
  let fence = 0;
  let seq = 0;
  const valid: T[] = [];
  for (const record of records) {
    if (record.fence < fence) continue;
    fence = record.fence;
    if (record.seq === undefined) continue;
    if (record.seq <= seq) continue;
    seq = record.seq;
    valid.push(record);
  }
  return valid;
}

/** Index of the last record holding a whole snapshot (-1: none). */
export function lastBase(records: readonly CommitRecord[]): number {
  for (let i = records.length - 1; i >= 0; i--) if (records[i]!.snapshot !== undefined) return i;
  return -1;
}

/**
 * The checkpoint `records` (valid, in order, freshly parsed: they are modified) add up to;
 * undefined for none. A CorruptRecordError when there is no base to start from or a delta does
 * not apply (a record before it is damaged or missing).
 */
export function rebuildCheckpoint(runId: string, records: CommitRecord[], location: string): Checkpoint | undefined {
  const last = records.at(-1);
  if (last === undefined) return undefined;
  const from = lastBase(records);
  if (from < 0) throw new CorruptRecordError(runId, location, JSON.stringify(recordOf(last)), "the log has no whole snapshot to rebuild from");
  let state: unknown = records[from]!.snapshot;
  for (const record of records.slice(from + 1)) {
    if (record.delta === undefined) continue;
    try {
      state = applyJson(state, record.delta, { inPlace: true });
    } catch (error) {
      throw new CorruptRecordError(runId, location, JSON.stringify(record.delta), `commit ${record.seq} does not apply to the state before it: ${(error as Error).message}`, { cause: error });
    }
  }
  const info = checkedRunInfo(last, runId, location);
  if (!isPlainObject(state)) throw new CorruptRecordError(runId, location, JSON.stringify(state) ?? String(state), "the snapshot is not an object");
  return { ...info, snapshot: state as unknown as PersistedRun };
}

/** The events of the records, in order. */
export function eventsOf(records: readonly CommitRecord[]): RunEvent[] {
  return records.flatMap((r) => r.events ?? []);
}

/**
 * A stored record, parsed and checked enough to rebuild from: a CorruptRecordError naming the run
 * and `location` (the file and line, or the table, run and seq) otherwise.
 */
export function parseRecord(text: string, runId: string, location: string): CommitRecord {
  const value = parseJson(text, runId, location);
  if (!isPlainObject(value) || typeof value.fence !== "number" || !Array.isArray(value.events ?? [])) {
    throw new CorruptRecordError(runId, location, text, "not a commit record: an object with a numeric fence and an events array");
  }
  if (value.snapshot !== undefined && !isPlainObject(value.snapshot)) throw new CorruptRecordError(runId, location, text, "its snapshot is not an object");
  return value as unknown as CommitRecord;
}

/** A stored JSON text (a record, an events column), or a CorruptRecordError naming the run and `location`. */
export function parseJson(text: string, runId: string, location: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CorruptRecordError(runId, location, text, `not JSON: ${(error as Error).message}`, { cause: error });
  }
}

/** A stored events list (a database's events column), or a CorruptRecordError naming the run and `location`. */
export function parseEvents(text: string, runId: string, location: string): RunEvent[] {
  const value = parseJson(text, runId, location);
  if (!Array.isArray(value)) throw new CorruptRecordError(runId, location, text, "the events are not an array");
  return value as RunEvent[];
}

/**
 * The session named by a run's readable records, for a run listed as damaged (every commit of a
 * run carries the same sessionId). Texts that do not parse are passed over: the damage is
 * reported by the caller, this only says what the others still tell.
 */
export function sessionNamedIn(texts: readonly string[]): string | undefined {
  for (const text of texts) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    if (isPlainObject(value) && typeof value.sessionId === "string") return value.sessionId;
  }
  return undefined;
}

/** The record a store keeps for `commit`: everything but the run id. */
export function recordOf(commit: CommitRecord & { runId?: string }): CommitRecord {
  const { runId: _runId, ...record } = commit;
  return record;
}

/** The highest seq `latest(runId, { seq })` reads (all of them without one), checked. */
export function seqBound(at: { seq?: number } | undefined): number {
  const seq = at?.seq;
  if (seq === undefined) return Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(seq) || seq < 1) throw new InvalidArgumentError("seq", `${JSON.stringify(seq)} is not a positive integer`);
  return seq;
}
