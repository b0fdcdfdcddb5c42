/**
 * A run store in this process's memory: for tests, replays and short-lived runs that only need
 * resume-after-stop within one process. Values are copied in and out as JSON, like a real store,
 * so nothing a caller holds can change what was saved.
 */
import { RunLockedError, StoreError } from "../core/errors.js";
import { assertRunId, byStart, isProcessAlive as isAlive, SessionViews, type Checkpoint, type RunEvent, type RunInfo, type RunLock, type RunStore } from "./run-store.js";


/** @example new WorkflowRunner({ client, contextManager, store: new MemoryRunStore() }) */
export class MemoryRunStore extends SessionViews implements RunStore {
  readonly #checkpoints = new Map<string, string>();
  readonly #events = new Map<string, string[]>();
  /** Run id → pid of the holder (this process, unless a test plants another). */
  readonly locks = new Map<string, number>();

  async putCheckpoint(checkpoint: Checkpoint): Promise<void> {
    assertRunId(checkpoint.runId);
    const previous = this.#checkpoints.get(checkpoint.runId);
    if (previous !== undefined && (JSON.parse(previous) as Checkpoint).seq >= checkpoint.seq) {
      throw new StoreError(`checkpoint ${checkpoint.seq} of run ${checkpoint.runId} is not newer than the stored one`, checkpoint.runId, "memory");
    }
    this.#checkpoints.set(checkpoint.runId, JSON.stringify(checkpoint));
  }

  async appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    assertRunId(runId);
    const log = this.#events.get(runId) ?? [];
    for (const event of events) log.push(JSON.stringify(event));
    this.#events.set(runId, log);
  }

  async latest(runId: string): Promise<Checkpoint | undefined> {
    assertRunId(runId);
    const text = this.#checkpoints.get(runId);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as Checkpoint;
    } catch (error) {
      throw new StoreError(`checkpoint of run ${runId} is not JSON`, runId, "memory", { cause: error });
    }
  }

  async events(runId: string): Promise<RunEvent[]> {
    assertRunId(runId);
    return (this.#events.get(runId) ?? []).map((line) => JSON.parse(line) as RunEvent);
  }

  async listRuns(filter: { sessionId?: string } = {}): Promise<RunInfo[]> {
    const runs: RunInfo[] = [];
    for (const runId of this.#checkpoints.keys()) {
      const { snapshot: _snapshot, ...info } = (await this.latest(runId))!;
      if (filter.sessionId === undefined || info.sessionId === filter.sessionId) runs.push(info);
    }
    return runs.sort(byStart);
  }

  async lock(runId: string): Promise<RunLock> {
    assertRunId(runId);
    const holder = this.locks.get(runId);
    if (holder !== undefined && (holder === process.pid || isAlive(holder))) throw new RunLockedError(runId, "memory", holder);
    this.locks.set(runId, process.pid);
    let held = true;
    return {
      release: async () => {
        if (held && this.locks.get(runId) === process.pid) this.locks.delete(runId);
        held = false;
      },
    };
  }

  async deleteRun(runId: string): Promise<void> {
    assertRunId(runId);
    const holder = this.locks.get(runId);
    if (holder !== undefined && (holder === process.pid || isAlive(holder))) throw new RunLockedError(runId, "memory", holder);
    this.#checkpoints.delete(runId);
    this.#events.delete(runId);
    this.locks.delete(runId);
  }

  /** Test hook: replace a stored checkpoint's text as-is (to simulate corruption). */
  corrupt(runId: string, text: string): void {
    this.#checkpoints.set(runId, text);
  }
}
