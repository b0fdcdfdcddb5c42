/**
 * A run store in this process's memory: for tests, replays and short-lived runs that only need
 * resume-after-stop within one process. Records are kept as JSON text, like a real store, so
 * nothing a caller holds can change what was saved. Leases behave as in the other stores (on
 * this process's clock, the only one there is).
 */
import { InvalidArgumentError, RunLockedError, RunLockLostError, StoreError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { eventsOf, lastBase, parseRecord, rebuildCheckpoint, recordOf, seqBound, sessionNamedIn } from "./commit-log.js";
import { Lease, newHolderId } from "./lease.js";
import { assertRunId, checkedRunInfo, damagedRun, leaseMsOption, listingOrder, SessionViews, type Checkpoint, type Commit, type CommitRecord, type ListedRun, type RunEvent, type RunLease, type RunStore } from "./run-store.js";

/** What a MemoryRunStore holds; two stores sharing it behave like two processes on one database. */
export interface MemoryRunData {
  logs: Map<string, string[]>;
  leases: Map<string, { fence: number; holder: string; expiresAt: number }>;
}

export interface MemoryRunStoreOptions {
  leaseMs?: number;
  /** false: leases are not renewed in the background. */
  autoRenew?: boolean;
  /** Share another store's data (a second "process" in tests). */
  data?: MemoryRunData;
}

const LOCATION = "memory";

/** @example new WorkflowRunner({ client, contextManager, store: new MemoryRunStore() }) */
export class MemoryRunStore extends SessionViews implements RunStore {
  readonly data: MemoryRunData;
  readonly #leaseMs: number;
  readonly #autoRenew: boolean | undefined;

  constructor(options: MemoryRunStoreOptions = {}) {
    super();
    if (!isPlainObject(options as unknown)) throw new InvalidArgumentError("options", "expected { leaseMs?, autoRenew?, data? }");
    this.#leaseMs = leaseMsOption(options.leaseMs);
    this.#autoRenew = options.autoRenew;
    this.data = options.data ?? { logs: new Map(), leases: new Map() };
  }

  async commit(commit: Commit): Promise<void> {
    assertRunId(commit.runId);
    const { runId, fence, seq } = commit;
    const lease = this.data.leases.get(runId);
    if (!lease || lease.fence !== fence) throw lostError(runId, fence, lease?.fence);
    const log = this.data.logs.get(runId) ?? [];
    const last = log.length > 0 ? parseRecord(log.at(-1)!, runId, where(runId, log.length)).seq : 0;
    if (seq <= last) throw new StoreError(`commit ${seq} of run ${runId} is not newer than the stored commit ${last}; a run never goes back`, runId, LOCATION);
    log.push(JSON.stringify(recordOf(commit)));
    this.data.logs.set(runId, log);
  }

  async latest(runId: string, at: { seq?: number } = {}): Promise<Checkpoint | undefined> {
    const upTo = seqBound(at);
    const records = this.#records(runId).filter((r) => r.seq <= upTo);
    return rebuildCheckpoint(runId, records.slice(Math.max(0, lastBase(records))), where(runId));
  }

  async events(runId: string): Promise<RunEvent[]> {
    return eventsOf(this.#records(runId));
  }

  async listRuns(filter: { sessionId?: string } = {}): Promise<ListedRun[]> {
    const runs: ListedRun[] = [];
    for (const [runId, log] of this.data.logs) {
      if (log.length === 0) continue;
      let info: ListedRun;
      try {
        info = checkedRunInfo(parseRecord(log.at(-1)!, runId, where(runId, log.length)), runId, where(runId, log.length));
      } catch (error) {
        info = damagedRun(runId, error, sessionNamedIn(log));
      }
      if (filter.sessionId === undefined || info.sessionId === filter.sessionId) runs.push(info);
    }
    return listingOrder(runs);
  }

  async lock(runId: string): Promise<RunLease> {
    assertRunId(runId);
    const sentAt = performance.now();
    const now = Date.now();
    const current = this.data.leases.get(runId);
    if (current && current.expiresAt > now) throw new RunLockedError(runId, LOCATION, current.holder, current.expiresAt - now);
    const fence = (current?.fence ?? 0) + 1;
    const holder = newHolderId();
    this.data.leases.set(runId, { fence, holder, expiresAt: now + this.#leaseMs });
    const mine = () => {
      const held = this.data.leases.get(runId);
      return held?.fence === fence ? held : undefined;
    };
    return new Lease(runId, fence, holder, {
      leaseMs: this.#leaseMs,
      location: LOCATION,
      sentAt,
      autoRenew: this.#autoRenew,
      // A release sets expiresAt to 0: anything else was a holder's lease running out.
      takenOver: current !== undefined && current.expiresAt !== 0,
      ops: {
        renew: async () => {
          const held = mine();
          if (!held) throw lostError(runId, fence, this.data.leases.get(runId)?.fence);
          held.expiresAt = Date.now() + this.#leaseMs;
        },
        release: async () => {
          const held = mine();
          if (held) held.expiresAt = 0;
        },
      },
    });
  }

  async deleteRun(runId: string): Promise<void> {
    const lease = await this.lock(runId);
    this.data.logs.delete(runId);
    await lease.release();
  }

  /** Test hook: replace the run's last record's text as-is (to simulate corruption). */
  corrupt(runId: string, text: string): void {
    const log = this.data.logs.get(runId);
    if (log && log.length > 0) log[log.length - 1] = text;
  }

  /** The run's records, parsed; one that cannot be is a CorruptRecordError naming its place. */
  #records(runId: string): CommitRecord[] {
    assertRunId(runId);
    return (this.data.logs.get(runId) ?? []).map((line, i) => parseRecord(line, runId, where(runId, i + 1)));
  }
}

/** Where a run's record is kept, as errors name it: `memory#<runId>:<n>` for its n-th record. */
const where = (runId: string, n?: number): string => `${LOCATION}#${runId}${n === undefined ? "" : `:${n}`}`;

function lostError(runId: string, fence: number, current: number | undefined): RunLockLostError {
  return new RunLockLostError(runId, LOCATION, fence, current === undefined ? "the run has no lease" : `a newer holder (lease ${current}) took it over`);
}
