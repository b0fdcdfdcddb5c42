// Child runs (workflowTool): the run shown names the run and tool call that started it and
// lists the runs its calls started, as #run= links (the page's hashchange selects them).
// The links come from the run list (RunSummary.parent).
import type { RunSummary } from "../../protocol.js";
import { el } from "./dom.js";

/** A link that selects run `runId`. */
export function runLink(runId: string, text?: string, attrs?: Record<string, string>): HTMLAnchorElement {
  return el("a", "run-link", text ?? runId, { href: `#run=${encodeURIComponent(runId)}`, "data-run": runId, ...attrs });
}

/** The runs that `runId`'s calls started, in the order they started. */
export function childrenOf(runs: readonly RunSummary[], runId: string | null): (RunSummary & { parent: NonNullable<RunSummary["parent"]> })[] {
  return runs
    .filter((r): r is RunSummary & { parent: NonNullable<RunSummary["parent"]> } => r.parent?.runId === runId)
    .sort((a, b) => (Number(a.startedAt) || 0) - (Number(b.startedAt) || 0));
}

let shownKey = "";

/** Fill `nav` for the run shown (`run` may be unlisted yet): its parent, its children. */
export function renderLineage(nav: HTMLElement, runId: string | null, run: RunSummary | undefined, runs: readonly RunSummary[]): void {
  const parent = run?.parent;
  const children = runId ? childrenOf(runs, runId) : [];
  const key = JSON.stringify([runId, parent, children.map((c) => [c.runId, c.parent.callId, c.status])]);
  if (key === shownKey) return;
  shownKey = key;
  nav.hidden = !parent && children.length === 0;
  const parts: HTMLElement[] = [];
  if (parent) {
    const p = el("span", "lin-parent", undefined, { "data-testid": "lineage-parent", "data-call-id": String(parent.callId) });
    const listed = runs.some((r) => r.runId === parent.runId);
    p.append("child of ", runLink(parent.runId), " · call ", el("code", "", String(parent.callId)));
    if (!listed) p.append(el("span", "muted", " (not listed)"));
    parts.push(p);
  }
  if (children.length) {
    const list = el("span", "lin-children");
    list.append(`${children.length === 1 ? "child run" : "child runs"}: `);
    children.forEach((c, i) => {
      const item = el("span", "lin-child", undefined, { "data-testid": "lineage-child", "data-call-id": String(c.parent.callId) });
      item.append(runLink(c.runId), el("span", "muted", ` (call ${c.parent.callId}, ${c.status})`));
      list.append(...(i ? [", "] : []), item);
    });
    parts.push(list);
  }
  nav.replaceChildren(...parts);
}
