// Two runs side by side (#run=a&compare=b): each run's outcome, budgets, the states its steps
// went through and its timeline, and what differs in their final contexts. Stored runs are
// read from their replays; the run shown uses what the page already has.
import type { ReplayBody } from "../../protocol.js";
import { api } from "./api.js";
import { diffContext, displayValue, lastKey } from "./context-diff.js";
import { byId, el, setText } from "./dom.js";
import { runById, state } from "./state.js";
import { stepsOf } from "./steps.js";
import type { Step, View } from "./types.js";
import { counters, initialView, reduce } from "./view.js";

interface Side {
  runId: string;
  view: View;
  steps: Step[];
}

let loaded: { key: string; sides: (Side | string)[]; statuses: string } | null = null;

async function load(runId: string): Promise<Side | string> {
  if (runId === state.selected && state.steps.length && (state.mode === "live" || state.replay?.pos === state.replay?.events.length)) {
    return { runId, view: state.view, steps: state.steps };
  }
  const run = runById(runId);
  if (run && !(run.stored && run.replayable)) return `${runId}: only stored, replayable runs (or the run shown) can be compared`;
  try {
    const res = await api(`/api/runs/${encodeURIComponent(runId)}/replay`);
    const body = (await res.json()) as ReplayBody & { error?: { message?: string } };
    if (!res.ok || !Array.isArray(body.events)) return `${runId}: ${body.error?.message ?? `HTTP ${res.status}`}`;
    return { runId, view: body.events.reduce(reduce, initialView()), steps: stepsOf(body.events) };
  } catch (err) {
    return `${runId}: ${(err as Error)?.message ?? err}`;
  }
}

function column(side: Side | string): HTMLElement {
  if (typeof side === "string") return el("div", "cmp-col", undefined, { "data-testid": "compare-col" });
  const col = el("div", "cmp-col", undefined, { "data-testid": "compare-col", "data-run-id": side.runId });
  const ctx = side.view.snapshot?.context ?? {};
  col.append(el("h3", "", side.runId, { title: side.runId }));
  col.append(el("div", "cmp-sum", `${side.view.leaves.join(", ") || "—"} · ${runById(side.runId)?.status ?? "?"} · ${side.steps.length} steps`, { "data-testid": "compare-summary" }));
  const budgets = el("dl", "cmp-budgets");
  for (const c of counters(ctx)) if (c.id !== "wallClock") budgets.append(el("dt", "", c.label), el("dd", "", c.max === undefined ? String(c.value) : `${c.value} / ${c.max}`, { "data-counter": c.id }));
  col.append(budgets);
  // The states the run passed through, one per step where the state changed.
  const path = side.steps.map((s) => s.leaves.join(", ")).filter((s, i, all) => s !== all[i - 1]);
  col.append(el("div", "cmp-path", path.join(" → "), { "data-testid": "compare-path" }));
  const tl = el("div", "cmp-timeline");
  for (const e of side.view.timeline) {
    if (e.kind === "system") continue;
    const row = el("div", `entry k-${e.kind}`, undefined, { "data-kind": e.kind });
    row.append(el("span", "it", `#${e.iteration} `), el("span", "kind", `${e.label} `), setText(el("span", "text"), e.text, 200));
    tl.append(row);
  }
  col.append(tl);
  return col;
}

function render(sides: (Side | string)[]): void {
  const box = byId("compare");
  const problems = sides.filter((s): s is string => typeof s === "string");
  const [a, b] = sides;
  const diffs = el("div", "cmp-diff", undefined, { "data-testid": "compare-diff" });
  if (a && b && typeof a !== "string" && typeof b !== "string") {
    // Messages differ wholesale between runs; the timelines above show them.
    const strip = (v: View) => ({ ...(v.snapshot?.context ?? {}), messages: undefined, run: undefined, now: undefined });
    const { changes } = diffContext(strip(a.view), strip(b.view), 80);
    diffs.append(el("h3", "", `final contexts: ${changes.length} differences (messages and clock left out)`));
    for (const c of changes) {
      const row = el("div", "diff-row", undefined, { "data-path": c.path });
      const key = lastKey(c.path);
      row.append(el("code", "path", c.path), setText(el("code", "before"), displayValue(c.before ?? "—", key), 120), el("span", "arrow", "|"), setText(el("code", "after"), displayValue(c.after ?? "—", key), 120));
      diffs.append(row);
    }
  }
  const cols = el("div", "cmp-cols");
  cols.append(...sides.map(column));
  box.replaceChildren(...problems.map((p) => el("p", "notice err", p)), cols, diffs);
}

/** Shows the compare view when state.compare is set (loading the runs once per pair). */
export function renderCompare(): void {
  const on = !!(state.compare && state.selected);
  document.body.classList.toggle("comparing", on);
  byId("compare").hidden = !on;
  const close = byId("compare-close");
  close.hidden = !on;
  if (!on) return void (loaded = null);
  const key = `${state.selected}|${state.compare}`;
  // The summaries' statuses come from the run list, which may arrive after both runs loaded
  // (a page opened on a compare link): drawn again when it does.
  const statuses = [state.selected!, state.compare!].map((id) => runById(id)?.status ?? "?").join("|");
  if (loaded?.key === key) {
    if (loaded.sides.length > 0 && loaded.statuses !== statuses) {
      loaded.statuses = statuses;
      render(loaded.sides);
    }
    return;
  }
  loaded = { key, sides: [], statuses };
  byId("compare").replaceChildren(el("p", "muted", "loading both runs…"));
  void Promise.all([load(state.selected!), load(state.compare!)]).then((sides) => {
    if (loaded?.key !== key) return;
    loaded.sides = sides;
    loaded.statuses = [state.selected!, state.compare!].map((id) => runById(id)?.status ?? "?").join("|");
    render(sides);
  });
}

/** The "compare with" choice: every other run. */
export function renderCompareChoice(): void {
  const select = byId<HTMLSelectElement>("compare-with");
  const others = state.runs.filter((r) => r.runId !== state.selected).map((r) => r.runId);
  const key = JSON.stringify([others, state.compare]);
  if (select.dataset.key === key) return;
  select.dataset.key = key;
  select.replaceChildren(el("option", "", "compare with…", { value: "" }), ...others.map((id) => el("option", "", id, { value: id })));
  select.value = state.compare ?? "";
}
