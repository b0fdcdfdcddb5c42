/**
 * The run list the page shows: live runs from the feed merged with the store's runs (a live
 * run with a store is both), with their iterations and parent links, child runs nested under
 * their parents (run-tree.ts).
 */
import type { Workflow } from "../src/core/workflow.js";
import { isDamaged, type DamagedRunInfo, type ListedRun, type RunInfo, type RunStore } from "../src/persistence/run-store.js";
import { requestsReader } from "./decisions.js";
import type { Feed } from "./feed.js";
import type { RunSummary } from "./protocol.js";
import { nestRuns } from "./run-tree.js";
import { storedRunDetails } from "./stored-run-details.js";

export interface RunList {
  summaries(): Promise<RunSummary[]>;
  /** The store changed (a decision was recorded): the next summaries() reads it again. */
  invalidate(): void;
}

/**
 * @example
 * const list = runList(feed, store, workflows);
 * const runs = await list.summaries();
 */
export function runList(feed: Feed, store: RunStore | undefined, workflows: ReadonlyMap<string, Workflow>): RunList {
  const requestsOf = store ? requestsReader(store) : undefined;
  const detailsOf = store ? storedRunDetails(store) : undefined;

  // Every open page asks for the run list: they share one read of the store a second.
  let listing: { at: number; runs: Promise<ListedRun[]> } | undefined;
  function storedRuns(): Promise<ListedRun[]> {
    if (!store) return Promise.resolve([]);
    if (!listing || Date.now() - listing.at > 1_000) {
      const runs = store.listRuns();
      listing = { at: Date.now(), runs };
      runs.catch(() => (listing = undefined));
    }
    return listing.runs;
  }

  function replayability(workflow: string, stored: boolean): { replayable: boolean; why?: string } {
    if (!stored) return { replayable: false, why: "not in the store" };
    return workflows.has(workflow) ? { replayable: true } : { replayable: false, why: unknownWorkflow(workflow) };
  }

  async function summaries(): Promise<RunSummary[]> {
    const byId = new Map<string, RunSummary>();
    for (const live of feed.runs()) byId.set(live.runId, { ...live, depth: 0, stored: false, ...replayability(live.workflow, false) });
    const listed = await storedRuns();
    const stored = listed.filter((r): r is RunInfo => !isDamaged(r));
    const [requests, details] = await Promise.all([Promise.all(stored.map((info) => requestsOf?.(info))), detailsOf?.(stored) ?? []]);
    for (const [i, info] of stored.entries()) {
      // The store knows a run waits for a person (its live feed, if any, has stopped).
      const waiting = requests[i] ? { status: "waiting", requests: requests[i] } : {};
      const { parent, unreadable, iteration } = details[i] ?? { iteration: null };
      const seen = byId.get(info.runId);
      if (seen) {
        delete seen.why;
        // A live run keeps its feed's iteration (newer than any checkpoint) and, when its
        // snapshots carry it, its feed's parent link (the start event's, for older runs).
        Object.assign(seen, { stored: true, ...(info.sessionId ? { sessionId: info.sessionId } : {}), ...replayability(info.workflow, true), ...waiting });
        if (!seen.parent && parent) seen.parent = parent;
        continue;
      }
      byId.set(info.runId, {
        runId: info.runId,
        workflow: info.workflow,
        ...(info.sessionId ? { sessionId: info.sessionId } : {}),
        live: false,
        stored: true,
        ...replayability(info.workflow, true),
        state: info.state,
        status: info.status,
        iteration,
        ...(unreadable ? { unreadable } : {}),
        ...(parent ? { parent } : {}),
        depth: 0,
        startedAt: info.createdAt,
        updatedAt: info.savedAt,
        events: 0,
        ...waiting,
      });
    }
    for (const run of listed.filter(isDamaged)) damagedSummary(byId, run);
    return nestRuns([...byId.values()]);
  }

  return {
    summaries,
    invalidate: () => void (listing = undefined),
  };
}

/**
 * A stored run that cannot be read, in the list: status "damaged", `damaged` saying where and
 * why (and `unreadable` too, which the page already shows); times unknown (0). A live run keeps
 * its feed's line, marked.
 */
function damagedSummary(byId: Map<string, RunSummary>, run: DamagedRunInfo): void {
  const damage = { damaged: run.damaged, unreadable: `the store could not be read for run ${run.runId}: ${run.damaged.message}` };
  const seen = byId.get(run.runId);
  if (seen) return void Object.assign(seen, { stored: true, why: "its stored record cannot be read", ...damage });
  byId.set(run.runId, {
    runId: run.runId,
    workflow: "",
    ...(run.sessionId ? { sessionId: run.sessionId } : {}),
    live: false,
    stored: true,
    replayable: false,
    why: "its stored record cannot be read",
    state: "",
    status: "damaged",
    iteration: null,
    ...damage,
    depth: 0,
    startedAt: 0,
    updatedAt: 0,
    events: 0,
  });
}

export const unknownWorkflow = (name: string) =>
  `replaying this run re-drives workflow "${name}", which this visualizer was not given: start it with --workflow <module exporting it>`;
