/**
 * A run's durable record in its RunStore: the session feeds it every snapshot the actor
 * publishes (one per macrostep: after each model answer, each committed tool result, each final
 * state) and every event; writes go out one at a time, in order, the newest snapshot replacing
 * one that has not been written yet. The executeTool service waits for `settled()` before a
 * tool starts, so a checkpoint holding every finished result is on disk first: after a crash,
 * only the call in flight runs again (at-least-once, same idempotency key), never a finished one.
 */
import { InvalidArgumentError, StoreError } from "../core/errors.js";
import { dehydrate, type PersistedRun } from "../persistence/snapshot.js";
import { latestRun, type Checkpoint, type RunEvent, type RunLock, type RunStore } from "../persistence/run-store.js";

/** What a run on a runner with a store holds while it runs. */
export interface RunRecord {
  lock: RunLock;
  writer: CheckpointWriter;
}

/**
 * The snapshot a session's next turn continues from: its latest run, which must have finished
 * (an unfinished one is resumed, not talked over); undefined for a new session.
 */
export async function sessionSeed(
  store: RunStore | undefined,
  sessionId: string,
  options: { from?: unknown; initialMessages?: unknown },
): Promise<PersistedRun | undefined> {
  if (!store) throw new InvalidArgumentError("sessionId", "sessions live in a run store: new WorkflowRunner({ ..., store })");
  if (options.from !== undefined || options.initialMessages !== undefined) {
    throw new InvalidArgumentError("sessionId", "the session's history seeds the turn: give sessionId, or from / initialMessages, not both");
  }
  const last = latestRun(await store.listRuns({ sessionId }));
  if (!last) return undefined;
  if (last.status !== "done") {
    throw new InvalidArgumentError(
      "sessionId",
      `session ${sessionId}'s last turn (run ${last.runId}) did not finish: resume it first (runner.resume("${last.runId}", workflow))`,
    );
  }
  return (await store.latest(last.runId))?.snapshot;
}

export interface CheckpointMeta {
  runId: string;
  workflow: string;
  sessionId?: string | undefined;
  createdAt: number;
  /** The last checkpoint's seq already in the store (0 for a new run). */
  seq: number;
}

export class CheckpointWriter {
  readonly #store: RunStore;
  readonly #meta: CheckpointMeta;
  readonly #now: () => number;
  #seq: number;
  #queued: { snapshot: PersistedRun; state: string } | undefined;
  #events: RunEvent[] = [];
  #writing: Promise<void> = Promise.resolve();
  #scheduled = false;
  #failure: StoreError | undefined;
  #onFailure: ((error: StoreError) => void) | undefined;

  constructor(store: RunStore, meta: CheckpointMeta, now: () => number) {
    this.#store = store;
    this.#meta = meta;
    this.#now = now;
    this.#seq = meta.seq;
  }

  get runId(): string {
    return this.#meta.runId;
  }

  /** Called once with the first write that failed; the run must stop there. */
  onFailure(handler: (error: StoreError) => void): void {
    this.#onFailure = handler;
  }

  record(event: RunEvent): void {
    this.#events.push(event);
    this.#schedule();
  }

  save(snapshot: PersistedRun, state: string): void {
    this.#queued = { snapshot: dehydrate(snapshot), state };
    this.#schedule();
  }

  /**
   * Before a tool starts: the service starts inside XState's step, before the session has seen
   * that step's snapshot, so wait one microtask for it to be queued, then for it to be written.
   */
  async barrier(): Promise<void> {
    await Promise.resolve();
    await this.settled();
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
    // Let the rest of this step's snapshots and events arrive: one write carries them all.
    await Promise.resolve();
    this.#scheduled = false;
    const events = this.#events;
    const queued = this.#queued;
    this.#events = [];
    this.#queued = undefined;
    try {
      // Events first: a checkpoint never runs ahead of the log that explains it.
      if (events.length > 0) await this.#store.appendEvents(this.#meta.runId, events);
      if (queued) await this.#store.putCheckpoint(this.#checkpoint(queued.snapshot, queued.state));
    } catch (error) {
      this.#failure =
        error instanceof StoreError
          ? error
          : new StoreError(`run store write failed for run ${this.#meta.runId}: ${(error as Error)?.message ?? String(error)}`, this.#meta.runId, "store", {
              cause: error,
            });
      this.#onFailure?.(this.#failure);
    }
  }

  #checkpoint(snapshot: PersistedRun, state: string): Checkpoint {
    const { runId, workflow, sessionId, createdAt } = this.#meta;
    return {
      runId,
      seq: ++this.#seq,
      workflow,
      ...(sessionId !== undefined ? { sessionId } : {}),
      state,
      status: snapshot.status === "done" ? "done" : "active",
      createdAt,
      savedAt: this.#now(),
      snapshot,
    };
  }
}
