/**
 * Reading a run's commit log back, the same way in every store: which records count, the
 * checkpoint they add up to (the last base with the deltas after it applied), and the events.
 */
import { InvalidArgumentError, StoreError } from "../core/errors.js";
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
 * undefined for none. A StoreError when there is no base to start from or a delta does not apply.
 */
export function rebuildCheckpoint(runId: string, records: CommitRecord[], location: string): Checkpoint | undefined {
  const last = records.at(-1);
  if (last === undefined) return undefined;
  const from = lastBase(records);
  if (from < 0) throw new StoreError(`run ${runId}'s log has no whole snapshot to rebuild from (${location})`, runId, location);
  let state: unknown = records[from]!.snapshot;
  for (const record of records.slice(from + 1)) {
    if (record.delta === undefined) continue;
    try {
      state = applyJson(state, record.delta, { inPlace: true });
    } catch (error) {
      throw new StoreError(`run ${runId}'s commit ${record.seq} does not apply to the state before it (${location}): ${(error as Error).message}`, runId, location, { cause: error });
    }
  }
  const info = checkedRunInfo(last, runId, location);
  if (!isPlainObject(state)) throw new StoreError(`checkpoint of run ${runId} is malformed (${location}): snapshot is not an object`, runId, location);
  return { ...info, snapshot: state as unknown as PersistedRun };
}

/** The events of the records, in order. */
export function eventsOf(records: readonly CommitRecord[]): RunEvent[] {
  return records.flatMap((r) => r.events ?? []);
}

/** A stored record, parsed and checked enough to rebuild from: a StoreError naming the run and where otherwise. */
export function parseRecord(text: string, runId: string, location: string): CommitRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StoreError(`run ${runId}'s log holds a corrupt record (${location}): ${(error as Error).message}`, runId, location, { cause: error });
  }
  if (!isPlainObject(value) || typeof value.fence !== "number" || !Array.isArray(value.events ?? [])) {
    throw new StoreError(`run ${runId}'s log holds a malformed record (${location})`, runId, location);
  }
  if (value.snapshot !== undefined && !isPlainObject(value.snapshot)) {
    throw new StoreError(`checkpoint of run ${runId} is malformed (${location}): snapshot is not an object`, runId, location);
  }
  return value as unknown as CommitRecord;
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
