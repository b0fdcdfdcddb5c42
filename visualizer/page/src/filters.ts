// Which runs the run list shows and which entries the timeline shows, from the filter bar's
// fields (also kept in the URL: url-state.ts).
import type { RunSummary } from "../../protocol.js";
import type { Entry } from "./types.js";

export interface RunFilter {
  /** Words that must all appear in the run's id, workflow, state, status or session. */
  text: string;
  /** A RunSummary.status, or "live"; "" for any. */
  status: string;
  workflow: string;
  session: string;
}

export const NO_RUN_FILTER: RunFilter = { text: "", status: "", workflow: "", session: "" };

const words = (text: string) => text.toLowerCase().split(/\s+/).filter(Boolean);

export function matchesRun(r: RunSummary, f: RunFilter): boolean {
  if (f.status && !(f.status === "live" ? r.live : r.status === f.status)) return false;
  if (f.workflow && r.workflow !== f.workflow) return false;
  if (f.session && !String(r.sessionId ?? "").toLowerCase().includes(f.session.toLowerCase())) return false;
  const hay = [r.runId, r.workflow, r.state, r.status, r.sessionId ?? "", r.parent?.callId ?? ""].join(" ").toLowerCase();
  return words(f.text).every((w) => hay.includes(w));
}

/**
 * The runs that match, in the list's order, with the parents of matching child runs kept so
 * that a child still reads under its parent (`matched: false` marks those, to dim them).
 */
export function filterRuns(runs: readonly RunSummary[], f: RunFilter): { run: RunSummary; matched: boolean }[] {
  const matched = new Set(runs.filter((r) => matchesRun(r, f)).map((r) => r.runId));
  const keep = new Set(matched);
  const byId = new Map(runs.map((r) => [r.runId, r]));
  for (const id of matched) {
    for (let p = byId.get(id)?.parent?.runId; p && !keep.has(p); p = byId.get(p)?.parent?.runId) keep.add(p);
  }
  return runs.filter((r) => keep.has(r.runId)).map((run) => ({ run, matched: matched.has(run.runId) }));
}

/** The statuses and workflows present, for the filter's choices. */
export function runFacets(runs: readonly RunSummary[]): { statuses: string[]; workflows: string[] } {
  const statuses = new Set(runs.map((r) => r.status).filter(Boolean));
  if (runs.some((r) => r.live)) statuses.add("live");
  return { statuses: [...statuses].sort(), workflows: [...new Set(runs.map((r) => r.workflow).filter(Boolean))].sort() };
}

export interface TimelineFilter {
  /** Entry kinds not shown. */
  hidden: ReadonlySet<string>;
  text: string;
}

export function matchesEntry(e: Entry, f: TimelineFilter): boolean {
  if (f.hidden.has(e.kind)) return false;
  const hay = `${e.label} ${e.who ?? ""} ${e.text}`.toLowerCase();
  return words(f.text).every((w) => hay.includes(w));
}

/** The kinds in a timeline with their counts, in order of first appearance. */
export function entryKinds(entries: readonly Entry[]): { kind: string; label: string; count: number }[] {
  const kinds = new Map<string, { kind: string; label: string; count: number }>();
  for (const e of entries) {
    const k = kinds.get(e.kind);
    if (k) k.count++;
    else kinds.set(e.kind, { kind: e.kind, label: e.kind.replace(/_/g, " "), count: 1 });
  }
  return [...kinds.values()];
}
