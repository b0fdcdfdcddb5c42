/**
 * The default run store: plain files, no dependencies, for runners on one host. Layout under the
 * store directory:
 *
 *   runs/<runId>/log.jsonl        the run's commits, one JSON record a line, appended + fsynced
 *   runs/<runId>/lease.<n>.json   the lease with fencing token n: { holder, expiresAt }
 *
 * A commit is one append and one fsync, whatever the run's length. A line torn by a kill is the
 * last line, without its newline: readers leave it out, and the next append cuts it off first.
 *
 * Leases: the highest-numbered lease file is the lease. Taking one over creates the next number
 * with link(2), which fails if it exists, so of two takers one wins; the winner then appends a
 * marker line with its fence to the log. Every commit checks afterwards that no newer lease file
 * exists: a writer that raced a takeover is told it lost the run, and readers leave out any line
 * with a lower fence than a line before it, so a write that landed after the marker never
 * counts. Expiry is on this host's clock: the directory belongs to one host.
 */
import { constants } from "node:fs";
import { mkdir, open, readdir, rm, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { InvalidArgumentError, RunLockedError, StoreError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { eventsOf, lastBase, parseRecord, rebuildCheckpoint, recordOf, seqBound, sessionNamedIn, validRecords } from "./commit-log.js";
import { Lease, newHolderId } from "./lease.js";
import { redactedSpec, storeKindOf } from "./store-spec.js";
import { assertNoNewerLease, createLease, leaseFile, newestFence, removeOlderLeases, writeAtomically } from "./file-lease.js";
import { appendLine, completeLines, dropTornTail, io, LOG, readIfExists, readTail, syncDir, type LogLines } from "./file-log.js";
import { assertRunId, checkedRunInfo, damagedRun, isDamageOf, isRunId, leaseMsOption, listingOrder, SessionViews, type Checkpoint, type Commit, type CommitRecord, type ListedRun, type RunEvent, type RunInfo, type RunLease, type RunStore } from "./run-store.js";

/** A line of the log: a commit, or a lease marker (a fence, no seq). */
type LogLine = CommitRecord | { fence: number; lease: string; seq?: undefined };

export interface FileRunStoreOptions {
  /** The store directory, created on first write (default ./.forge). */
  dir?: string;
  /** How long a lease lasts unless renewed (default 30 s). */
  leaseMs?: number;
  /** false: leases are not renewed in the background. */
  autoRenew?: boolean;
}

/**
 * @example
 * const store = new FileRunStore({ dir: "./.forge" });
 * const runner = new WorkflowRunner({ client, contextManager, store });
 */
export class FileRunStore extends SessionViews implements RunStore {
  readonly dir: string;
  readonly #leaseMs: number;
  readonly #autoRenew: boolean | undefined;
  /**
   * The log each run held here is appended to, kept open from its first commit until the lease
   * ends: opened with O_DSYNC, so one write(2) is the whole durable commit.
   */
  readonly #appenders = new Map<string, Appender>();

  constructor(options: FileRunStoreOptions = {}) {
    super();
    const dir: unknown = options?.dir ?? ".forge";
    if (typeof dir !== "string" || dir.length === 0) throw new InvalidArgumentError("dir", "expected a directory path");
    // A URL given here would become a directory named after it (./mysql:/x): refused instead.
    if (storeKindOf(dir) !== "directory") {
      throw new InvalidArgumentError("dir", `${JSON.stringify(redactedSpec(dir))} is a URL, not a directory: a libSQL URL opens with SqlRunStore (forge-ts/sql), a postgres:// URL with PostgresRunStore (forge-ts/postgres); a relative directory with a colon in its name is written ./name`);
    }
    this.dir = path.resolve(dir);
    this.#leaseMs = leaseMsOption(options.leaseMs);
    this.#autoRenew = options.autoRenew;
  }

  async commit(commit: Commit): Promise<void> {
    const { runId, fence, seq } = commit;
    const dir = await this.#runDir(runId, false);
    assertNoNewerLease(runId, dir, fence);
    const log = await this.#appender(runId, dir, fence);
    if (seq <= log.seq) throw new StoreError(`commit ${seq} of run ${runId} is not newer than the stored commit ${log.seq}; a run never goes back`, runId, log.file);
    const line = Buffer.from(JSON.stringify(recordOf(commit)) + "\n");
    try {
      const { bytesWritten } = await log.handle.write(line);
      if (bytesWritten !== line.length) throw new Error(`short write (${bytesWritten} of ${line.length} bytes)`);
    } catch (error) {
      // The line may be torn: reopen next time, which cuts it off first.
      await this.#closeAppender(runId);
      throw new StoreError(`run store I/O failed for run ${runId} at ${log.file}: ${(error as Error).message}`, runId, log.file, { cause: error });
    }
    // Checked after the write too: a takeover that came in meanwhile made it not count.
    assertNoNewerLease(runId, dir, fence);
    log.seq = seq;
  }

  /** The run's open log for commits under `fence`: opened (torn tail cut, new file's entry synced) on first use. */
  async #appender(runId: string, dir: string, fence: number): Promise<Appender> {
    const open_ = this.#appenders.get(runId);
    if (open_?.fence === fence) return open_;
    if (open_) await this.#closeAppender(runId);
    const file = path.join(dir, LOG);
    const seq = (await this.#tail(runId))?.seq ?? 0;
    await io(runId, dir, () => mkdir(dir, { recursive: true }));
    const handle = await io(runId, file, () => open(file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC));
    try {
      if ((await io(runId, file, () => dropTornTail(handle))) === 0) await syncDir(runId, dir);
    } catch (error) {
      await handle.close();
      throw error;
    }
    const appender = { fence, handle, seq, file };
    this.#appenders.set(runId, appender);
    return appender;
  }

  async #closeAppender(runId: string, fence?: number): Promise<void> {
    const appender = this.#appenders.get(runId);
    if (!appender || (fence !== undefined && appender.fence !== fence)) return;
    this.#appenders.delete(runId);
    await appender.handle.close().catch(() => undefined);
  }

  async latest(runId: string, at: { seq?: number } = {}): Promise<Checkpoint | undefined> {
    const upTo = seqBound(at);
    const records = (await this.#records(runId)).filter((r) => r.seq <= upTo);
    return rebuildCheckpoint(runId, records.slice(Math.max(0, lastBase(records))), this.#logPath(runId));
  }

  async events(runId: string): Promise<RunEvent[]> {
    return eventsOf(await this.#records(runId));
  }

  async listRuns(filter: { sessionId?: string } = {}): Promise<ListedRun[]> {
    const root = path.join(this.dir, "runs");
    let ids: string[];
    try {
      ids = await readdir(root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new StoreError(`cannot list runs in ${root}: ${(error as Error).message}`, undefined, root, { cause: error });
    }
    const runs: ListedRun[] = [];
    for (const id of ids.filter(isRunId)) {
      const info = await this.#listed(id);
      if (!info) continue; // killed before its first commit, or deleted
      if (filter.sessionId === undefined || info.sessionId === filter.sessionId) runs.push(info);
    }
    return listingOrder(runs);
  }

  async lock(runId: string): Promise<RunLease> {
    const dir = await this.#runDir(runId, true);
    const holder = newHolderId();
    for (let attempt = 0; attempt < 3; attempt++) {
      const sentAt = performance.now();
      const current = await this.#currentLease(runId, dir);
      if (current) {
        const left = current.expiresAt - Date.now();
        if (left > 0) throw new RunLockedError(runId, path.join(dir, leaseFile(current.fence)), current.holder, left);
      }
      const fence = (current?.fence ?? 0) + 1;
      if (!(await createLease(runId, dir, fence, { holder, expiresAt: Date.now() + this.#leaseMs }))) continue; // another taker won: look again
      await syncDir(runId, dir);
      // The marker: lines a fenced-out writer appends after it never count.
      if (current) await appendLine(runId, dir, JSON.stringify({ fence, lease: holder }), { onlyIfExists: true });
      await this.#closeAppender(runId);
      await removeOlderLeases(runId, dir, fence);
      // A release writes expiresAt 0: anything else was a holder's lease running out.
      return this.#lease(runId, dir, fence, holder, sentAt, current !== undefined && current.expiresAt !== 0);
    }
    throw new StoreError(`cannot lock run ${runId}: other processes keep taking the lease (${dir})`, runId, dir);
  }

  async deleteRun(runId: string): Promise<void> {
    const lease = await this.lock(runId);
    const dir = await this.#runDir(runId, false);
    // The lease file stays, so the next holder's fence is higher than any before.
    await this.#closeAppender(runId);
    await io(runId, dir, () => rm(path.join(dir, LOG), { force: true }));
    await lease.release();
  }

  #lease(runId: string, dir: string, fence: number, holder: string, sentAt: number, takenOver: boolean): RunLease {
    const file = path.join(dir, leaseFile(fence));
    const lease = new Lease(runId, fence, holder, {
      leaseMs: this.#leaseMs,
      location: file,
      sentAt,
      autoRenew: this.#autoRenew,
      takenOver,
      ops: {
        renew: async () => {
          assertNoNewerLease(runId, dir, fence);
          await writeAtomically(runId, file, JSON.stringify({ holder, expiresAt: Date.now() + this.#leaseMs }));
          assertNoNewerLease(runId, dir, fence);
        },
        release: async () => {
          await this.#closeAppender(runId, fence);
          if ((await this.#currentLease(runId, dir))?.fence !== fence) return;
          await writeAtomically(runId, file, JSON.stringify({ holder, expiresAt: 0 }));
        },
      },
    });
    lease.onLost(() => void this.#closeAppender(runId, fence));
    return lease;
  }

  /** The highest-numbered lease file's content; undefined when the run has never been leased. */
  async #currentLease(runId: string, dir: string): Promise<{ fence: number; holder: string; expiresAt: number } | undefined> {
    const fence = newestFence(runId, dir);
    if (fence === 0) return undefined;
    const file = path.join(dir, leaseFile(fence));
    const text = await readIfExists(runId, file);
    // Gone meanwhile: a newer one replaced it, which the caller's next look finds.
    if (text === undefined) return { fence, holder: "(being replaced)", expiresAt: Date.now() + 50 };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new StoreError(`lease file of run ${runId} is not JSON (${file})`, runId, file, { cause: error });
    }
    if (!isPlainObject(value) || typeof value.holder !== "string" || typeof value.expiresAt !== "number") {
      throw new StoreError(`lease file of run ${runId} is malformed (${file})`, runId, file);
    }
    return { fence, holder: value.holder, expiresAt: value.expiresAt };
  }

  /** Every line of the log that counts, parsed. */
  async #records(runId: string): Promise<CommitRecord[]> {
    const file = this.#logPath(runId);
    const text = await readIfExists(runId, file);
    if (text === undefined) return assertNotOldLayout(runId, path.dirname(file)).then(() => []);
    return validRecords(parseLines(runId, completeLines(text), file)).map((line) => line.record as CommitRecord);
  }

  /** The run's last commit as listed, from the end of its log only (listing must not read whole runs). */
  async #tail(runId: string): Promise<RunInfo | undefined> {
    const file = this.#logPath(runId);
    const tail = await readTail(runId, file);
    if (tail.lines.length === 0) await assertNotOldLayout(runId, path.dirname(file));
    return lastInfo(runId, tail, file);
  }

  /**
   * #tail, or the run as damaged, naming its first line that cannot be read by number: the log
   * is read whole for that (the tail's lines are not numbered), which only a damaged run pays.
   */
  async #listed(runId: string): Promise<ListedRun | undefined> {
    try {
      return await this.#tail(runId);
    } catch (error) {
      if (!isDamageOf(error, runId)) throw error;
      const file = this.#logPath(runId);
      const whole = completeLines((await readIfExists(runId, file)) ?? "");
      try {
        return lastInfo(runId, whole, file); // it reads now: repaired or removed since the tail was read
      } catch (named) {
        return damagedRun(runId, named, sessionNamedIn(whole.lines));
      }
    }
  }

  #logPath(runId: string): string {
    assertRunId(runId);
    return path.join(this.dir, "runs", runId, LOG);
  }

  async #runDir(runId: string, create: boolean): Promise<string> {
    // Run ids become directory names: nothing that could climb out of the store.
    assertRunId(runId);
    const dir = path.join(this.dir, "runs", runId);
    if (create) await io(runId, dir, () => mkdir(dir, { recursive: true }));
    return dir;
  }
}

/** A run written by forge-ts 0.1 (checkpoint.json + events.jsonl) is refused loudly, not listed as absent. */
async function assertNotOldLayout(runId: string, dir: string): Promise<void> {
  const old = path.join(dir, "checkpoint.json");
  if ((await readIfExists(runId, old)) === undefined) return;
  throw new StoreError(`run ${runId} was stored by an older forge-ts (${old}); this version keeps a commit log (log.jsonl) and cannot read it`, runId, old);
}

/** A log line parsed, with where it is: `<file>:<line>`, or the file when the line's number is unknown. */
interface ParsedLine {
  fence: number;
  seq: number | undefined;
  record: LogLine;
  location: string;
}

/** The lines parsed; one that cannot be is a CorruptRecordError naming the file and line. */
function parseLines(runId: string, { lines, first }: LogLines, file: string): ParsedLine[] {
  return lines.map((line, i) => {
    const location = first === undefined ? file : `${file}:${first + i}`;
    const record = parseRecord(line, runId, location) as LogLine;
    return { fence: record.fence, seq: record.seq, record, location };
  });
}

/** The last commit that counts, as listed (undefined for none): its envelope checked, naming its line. */
function lastInfo(runId: string, lines: LogLines, file: string): RunInfo | undefined {
  const last = validRecords(parseLines(runId, lines, file)).at(-1);
  return last && checkedRunInfo(last.record as CommitRecord, runId, last.location);
}

interface Appender {
  fence: number;
  handle: FileHandle;
  /** The last seq in the log. */
  seq: number;
  file: string;
}

