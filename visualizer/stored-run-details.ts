/**
 * What the run list shows of a stored run beyond the store's listing: its iteration (from its
 * latest checkpoint's snapshot) and, for a child run, its parent link (from its start event).
 *
 * Both are read once and kept: a checkpoint never changes once written (the iteration is read
 * again when the listing shows a newer `seq`), and a start event never changes at all. Only
 * runs named like a child (`<parent>.<iteration>-<index>`, childRunId) have their start event
 * read: the link itself is the start event's, never guessed from the name.
 */
import type { ParentLink, RunInfo, RunStore } from "../src/persistence/run-store.js";
import { describeError, StoreError } from "../src/core/errors.js";
import { parentLinkOf } from "../src/runner/child-links.js";

export interface StoredRunDetails {
  /** null when the run's checkpoint or log could not be read (`unreadable` says why). */
  iteration: number | null;
  parent?: ParentLink;
  unreadable?: string;
}

/** The suffix childRunId gives a child run's id. */
const CHILD_NAMED = /\.\d+-\d+$/;

/**
 * A reader of the details of listed runs, with its caches; each call forgets the runs the
 * listing no longer has.
 *
 * @example
 * const details = storedRunDetails(store);
 * const [first] = await details(await store.listRuns()); // { iteration: 3, parent?: { runId, callId } }
 */
export function storedRunDetails(store: RunStore): (runs: readonly RunInfo[]) => Promise<StoredRunDetails[]> {
  const iterations = new Map<string, { seq: number; read: Promise<number> }>();
  const parents = new Map<string, Promise<ParentLink | undefined>>();

  const iterationOf = (info: RunInfo): Promise<number> => {
    const cached = iterations.get(info.runId);
    if (cached && cached.seq === info.seq) return cached.read;
    const read = store.latest(info.runId).then((checkpoint) => {
      const iteration = (checkpoint?.snapshot.context as { iteration?: unknown } | undefined)?.iteration;
      if (!checkpoint) throw new StoreError(`the store lists run ${info.runId} but has no checkpoint of it`, info.runId, "visualizer");
      if (!Number.isSafeInteger(iteration)) throw new StoreError(`checkpoint ${checkpoint.seq} of run ${info.runId} has no iteration count`, info.runId, "visualizer");
      return iteration as number;
    });
    iterations.set(info.runId, { seq: info.seq, read });
    // A failed read is tried again at the next listing, not remembered.
    read.catch(() => iterations.get(info.runId)?.read === read && iterations.delete(info.runId));
    return read;
  };

  const parentOf = (info: RunInfo): Promise<ParentLink | undefined> => {
    if (!CHILD_NAMED.test(info.runId)) return Promise.resolve(undefined);
    let read = parents.get(info.runId);
    if (!read) {
      const reading = store.events(info.runId).then(parentLinkOf);
      parents.set(info.runId, (read = reading));
      reading.catch(() => parents.get(info.runId) === reading && parents.delete(info.runId));
    }
    return read;
  };

  return async (runs) => {
    const listed = new Set(runs.map((r) => r.runId));
    for (const cache of [iterations, parents]) for (const runId of cache.keys()) if (!listed.has(runId)) cache.delete(runId);
    return Promise.all(
      runs.map(async (info): Promise<StoredRunDetails> => {
        try {
          const [iteration, parent] = await Promise.all([iterationOf(info), parentOf(info)]);
          return { iteration, ...(parent ? { parent } : {}) };
        } catch (error) {
          // One unreadable run is marked in the list; the others are still shown.
          return { iteration: null, unreadable: `the store could not be read for run ${info.runId}: ${describeError(error)}` };
        }
      }),
    );
  };
}
