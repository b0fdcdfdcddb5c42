/**
 * A run's durable record in its RunStore: the session feeds it every snapshot the actor
 * publishes (one per macrostep: after each model answer, each committed tool result, each final
 * state) and every event; commits go out one at a time, in order, the newest snapshot replacing
 * one that has not been written yet. A commit is one durable write: the events since the last
 * one and the state as a delta from the last committed state (a whole snapshot when the deltas
 * since the last whole one outweigh it, so bytes per commit do not grow with the run).
 *
 * Every commit carries the lease's fencing token. Before a tool starts, the session saves the
 * step's state, waits for `settled()` (every finished result durable) and checks the lease; the
 * executeTool service writes the tool's outcome ahead (`recordOutcome`) before the machine
 * takes it in: after a crash, a call whose outcome is recorded is answered from the log; only a
 * call cut off mid-call runs again (same idempotency key).
 */
import { StoreError } from "../core/errors.js";
import { diffJson } from "../persistence/json-delta.js";
import { dehydrate, type PersistedRun } from "../persistence/snapshot.js";
import { redactContext, redactRunEvent, type RedactionMap } from "../telemetry/redact-run.js";
import { statusOfState, type Commit, type RunEvent, type RunLease, type RunStatus, type RunStore } from "../persistence/run-store.js";

/**
 * A whole snapshot is written once the deltas since the last one outweigh it DELTA_RATIO times
 * (and at least MIN_DELTA_BYTES): bytes written per commit stay within 1 + 1/DELTA_RATIO of the
 * deltas' whatever the run's length, and `latest()` reads at most 1 + DELTA_RATIO snapshots' worth.
 */
const DELTA_RATIO = 4;
const MIN_DELTA_BYTES = 64 * 1024;

export interface CheckpointMeta {
  runId: string;
  workflow: string;
  sessionId?: string | undefined;
  createdAt: number;
  /** The last commit's seq already in the store (0 for a new run). */
  seq: number;
  /** The last commit's state and status (for a commit that only adds events). */
  state: string;
  status: RunStatus;
}

export class CheckpointWriter {
  readonly #store: RunStore;
  readonly #lease: RunLease;
  readonly #meta: CheckpointMeta;
  readonly #now: () => number;
  #seq: number;
  #state: string;
  #status: RunStatus;
  /** The last committed state, as the object that was diffed (undefined: the next commit is whole). */
  #base: PersistedRun | undefined;
  #wholeBytes = 0;
  #deltaBytes = 0;
  #queued: { snapshot: PersistedRun; state: string } | undefined;
  #events: RunEvent[] = [];
  #writing: Promise<void> = Promise.resolve();
  #scheduled = false;
  #failure: StoreError | undefined;
  #onFailure: ((error: StoreError) => void) | undefined;
  /** Set with `redactStoredLogs`: the reported copies of call arguments are masked before they are written. */
  readonly #redact: RedactionMap | undefined;

  constructor(store: RunStore, lease: RunLease, meta: CheckpointMeta, now: () => number, options: { redact?: RedactionMap | undefined } = {}) {
    this.#redact = options.redact;
    this.#store = store;
    this.#lease = lease;
    this.#meta = meta;
    this.#now = now;
    this.#seq = meta.seq;
    this.#state = meta.state;
    this.#status = meta.status;
    // A lost lease stops the run at once, not at its next write.
    lease.onLost((error) => this.#fail(error));
  }

  get runId(): string {
    return this.#meta.runId;
  }

  get sessionId(): string | undefined {
    return this.#meta.sessionId;
  }

  /** Called once with the first write that failed (or the lease lost); the run must stop there. */
  onFailure(handler: (error: StoreError) => void): void {
    this.#onFailure = handler;
    if (this.#failure) handler(this.#failure);
  }

  record(event: RunEvent): void {
    this.#events.push(this.#masked(event));
    this.#schedule();
  }

  save(snapshot: PersistedRun, state: string): void {
    const whole = dehydrate(snapshot);
    // Only copies no resume reads back are masked (see src/telemetry/redact-run.ts): the history,
    // calls in flight and steps stay real, so the run resumes exactly as it would have gone on.
    const stored = this.#redact ? { ...whole, context: redactContext(whole.context, this.#redact, "stored") } : whole;
    this.#queued = { snapshot: stored, state };
    this.#schedule();
  }

  /** An event as the store gets it: masked when asked, and marked when that changed it (a replay then refuses the log). */
  #masked(event: RunEvent): RunEvent {
    if (!this.#redact || (event.type !== "start" && event.type !== "response")) return event;
    const masked = redactRunEvent(event, this.#redact, "stored");
    return JSON.stringify(masked) === JSON.stringify(event) ? event : { ...masked, redacted: true };
  }

  /** A tool's outcome, durable when this resolves (before the machine takes the outcome in). */
  async recordOutcome(outcome: Extract<RunEvent, { type: "outcome" }>): Promise<void> {
    this.record(outcome);
    await this.settled();
  }

  /** Throws the lease's loss (FORGE_LOCK_LOST) if it is no longer ours. */
  assertLeaseHeld(): void {
    this.#lease.assertHeld();
  }

  /** Resolves once everything recorded so far is durable; rejects with the write failure. */
  async settled(): Promise<void> {
    // Writes scheduled while waiting (the next step's) are waited for too.
    let current: Promise<void>;
    do {
      current = this.#writing;
      await current;
    } while (current !== this.#writing);
    if (this.#failure) throw this.#failure;
  }

  #schedule(): void {
    if (this.#scheduled || this.#failure) return;
    this.#scheduled = true;
    this.#writing = this.#writing.then(() => this.#flush());
  }

  async #flush(): Promise<void> {
    // Let the rest of this step's snapshots and events arrive: one commit carries them all.
    await Promise.resolve();
    this.#scheduled = false;
    if (this.#failure) return;
    // A new run's first commit holds its first state: its log never starts with events alone.
    if (this.#seq === 0 && !this.#queued) return;
    const events = this.#events;
    const queued = this.#queued;
    this.#events = [];
    this.#queued = undefined;
    if (events.length === 0 && !queued) return;
    const commit = this.#commit(events, queued);
    try {
      await this.#store.commit(commit);
    } catch (error) {
      this.#fail(
        error instanceof StoreError
          ? error
          : new StoreError(`run store write failed for run ${this.#meta.runId}: ${(error as Error)?.message ?? String(error)}`, this.#meta.runId, "store", { cause: error }),
      );
      return;
    }
    this.#seq = commit.seq;
    this.#state = commit.state;
    this.#status = commit.status;
    if (queued) this.#base = queued.snapshot;
  }

  /** The commit for this step: the state whole, as a delta, or unchanged. */
  #commit(events: RunEvent[], queued: { snapshot: PersistedRun; state: string } | undefined): Commit {
    const { runId, workflow, sessionId, createdAt } = this.#meta;
    const status = queued ? statusOfState(queued.state, queued.snapshot.status === "done") : this.#status;
    const commit: Commit = {
      runId,
      fence: this.#lease.fence,
      seq: this.#seq + 1,
      workflow,
      ...(sessionId !== undefined ? { sessionId } : {}),
      state: queued?.state ?? this.#state,
      status,
      createdAt,
      savedAt: this.#now(),
      events,
    };
    if (!queued) return commit;
    const delta = this.#base === undefined ? undefined : diffJson(this.#base, queued.snapshot);
    if (this.#base !== undefined && delta === undefined) return commit;
    const deltaBytes = delta === undefined ? Infinity : JSON.stringify(delta).length;
    if (this.#deltaBytes + deltaBytes <= Math.max(MIN_DELTA_BYTES, DELTA_RATIO * this.#wholeBytes)) {
      this.#deltaBytes += deltaBytes;
      return { ...commit, delta: delta! };
    }
    this.#wholeBytes = JSON.stringify(queued.snapshot).length;
    this.#deltaBytes = 0;
    return { ...commit, snapshot: queued.snapshot };
  }

  #fail(error: StoreError): void {
    if (this.#failure) return;
    this.#failure = error;
    this.#onFailure?.(error);
  }
}
