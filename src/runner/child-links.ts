/**
 * How a child run (a workflow run by another run's tool call, `workflowTool`) is named and
 * found. The name is derived from the call — `<parentRunId>.<iteration>-<callIndex>`, the parts
 * of the call's idempotency key — so a call re-run after a crash finds the child it started;
 * the child's start event records the link itself (`parent: { runId, callId }`). Listing a
 * run's children reads the listing (no event logs) and then the start events of the few runs
 * named like its children only.
 */
import { isDamaged, isRunId, type ListedRun, type ParentLink, type RunEvent, type RunInfo, type RunStore } from "../persistence/run-store.js";

const CHILD_SUFFIX = /^(\d+)-(\d+)$/;

/**
 * The run id of the child started by call `callIndex` of iteration `iteration` of `parentRunId`;
 * undefined when it would not be a valid run id (a parent id within a few characters of the
 * 128 limit, or a nesting that deep).
 *
 * @example
 * childRunId("quote-1", 2, 0); // "quote-1.2-0"
 */
export function childRunId(parentRunId: string, iteration: number, callIndex: number): string | undefined {
  const id = `${parentRunId}.${iteration}-${callIndex}`;
  return isRunId(id) ? id : undefined;
}

/** The parent link in a run's event log (its start event), if it is a child run. */
export function parentLinkOf(events: readonly RunEvent[]): ParentLink | undefined {
  const start = events.find((e): e is Extract<RunEvent, { type: "start" }> => e.type === "start");
  return start?.parent;
}

/** A run as a parent lists it: its listing, and the call that started it. */
export type ChildRunInfo = RunInfo & { callId: string };

/**
 * The runs `runId`'s tool calls started, in listing order (oldest first): those named like its
 * children whose start event names it. `runs`: the store's listing, when the caller has it. A
 * damaged run is not among them (its link cannot be read; the listing marks it).
 *
 * @example
 * for (const child of await childRunsOf(store, "quote-1")) console.log(child.runId, child.callId, child.state);
 */
export async function childRunsOf(store: RunStore, runId: string, runs?: readonly ListedRun[]): Promise<ChildRunInfo[]> {
  const prefix = `${runId}.`;
  const named = (runs ?? (await store.listRuns())).filter((r): r is RunInfo => !isDamaged(r) && r.runId.startsWith(prefix) && CHILD_SUFFIX.test(r.runId.slice(prefix.length)));
  const linked = await Promise.all(
    named.map(async (info) => {
      const parent = parentLinkOf(await store.events(info.runId));
      return parent?.runId === runId ? { ...info, callId: parent.callId } : undefined;
    }),
  );
  return linked.filter((c): c is ChildRunInfo => c !== undefined);
}
