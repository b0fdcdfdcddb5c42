// The run list: live and stored runs as the server orders them (child runs under their
// parents), narrowed by the filter bar, each with a distinct short id (run-ids.ts).
import type { RunSummary } from "../../protocol.js";
import { byId, el, one, setText } from "./dom.js";
import { filterRuns, runFacets, type RunFilter } from "./filters.js";
import { shortIds } from "./run-ids.js";
import { FINAL, hooks, runById, state } from "./state.js";

interface Item {
  li: HTMLLIElement;
  st: HTMLSpanElement;
  it: HTMLSpanElement;
}

const runItems = new Map<string, Item>();

/** The selected run's state and iteration as its live feed has them (the list is debounced); its status stays the server's. */
function withLiveView(r: RunSummary): RunSummary {
  const snap = state.view.snapshot;
  if (r.runId !== state.selected || state.mode !== "live" || !snap) return r;
  const it = snap.context?.iteration;
  return { ...r, state: state.view.leaves.join(", ") || r.state, iteration: typeof it === "number" ? it : r.iteration };
}

/** Final states are tinted, and so are waiting, failed and cancelled runs. */
export function stateClass(name: string, status: string): string {
  const top = name.split(".")[0] ?? "";
  if (FINAL.has(top)) return `s-${top}`;
  return status === "waiting" || FINAL.has(status) ? `s-${status}` : "s-active";
}

function fillRunLine(item: Item, r: RunSummary): void {
  const status = String(r.status ?? "");
  if (item.li.getAttribute("data-status") !== status) item.li.setAttribute("data-status", status);
  item.st.className = `st ${stateClass(String(r.state ?? ""), status)}`;
  setText(item.st, String(r.state || r.status || "?"), 28);
  // null: the stored checkpoint could not be read (the server says why).
  item.it.textContent = r.iteration === null ? "it ?" : `it ${Number(r.iteration) || 0}`;
  if (r.unreadable) item.it.title = String(r.unreadable);
}

export function patchSelectedRun(): void {
  const item = state.selected === null ? undefined : runItems.get(state.selected);
  const r = runById(state.selected);
  if (item && r) fillRunLine(item, withLiveView(r));
}

/** A run's short id among the runs listed (ids.get), or, under its parent, the part after the parent's. */
export function runLabel(r: RunSummary, ids: Map<string, string>): string {
  // A child's id is its parent's plus ".<iteration>-<index>": under its parent, the rest is what tells it apart.
  if (r.depth > 0 && r.parent && r.runId.startsWith(`${r.parent.runId}.`)) return `…${r.runId.slice(r.parent.runId.length)}`;
  return ids.get(r.runId) ?? r.runId;
}

function runItem(r: RunSummary, matched: boolean, ids: Map<string, string>): HTMLLIElement {
  const depth = Math.max(0, Math.min(6, Number(r.depth) || 0));
  const li = el("li", `run-item${r.runId === state.selected ? " selected" : ""}${matched ? "" : " context"}`, undefined, {
    "data-testid": "run-item",
    "data-run-id": r.runId,
    "data-live": String(!!r.live),
    "data-stored": String(!!r.stored),
    tabindex: "0",
    role: "button",
    title: r.runId,
    "data-depth": String(depth),
    ...(r.parent ? { "data-parent-run-id": String(r.parent.runId), style: `--depth: ${depth}` } : {}),
  });
  const top = el("div", "row");
  top.append(el("code", "rid", runLabel(r, ids), { "data-testid": "run-id" }));
  if (r.live) top.append(el("span", "badge live", "live"));
  if (r.stored) top.append(el("span", "badge stored", "stored"));
  if (r.status === "waiting") top.append(el("span", "badge needs-person", "waiting", { title: "waiting for a person to decide", "data-testid": "waiting-badge" }));
  const item: Item = { li, st: el("span"), it: el("span", "it") };
  const mid = el("div", "row wf");
  mid.append(el("span", "wf-name", String(r.workflow ?? "")), item.it);
  const bottom = el("div", "row");
  bottom.append(item.st, el("span", "when", r.startedAt ? new Date(r.startedAt).toLocaleTimeString() : ""));
  if (r.parent) li.append(el("div", "row pcall", `↳ ${r.depth ? "" : `${ids.get(r.parent.runId) ?? r.parent.runId} `}call ${r.parent.callId}`, { "data-testid": "run-call" }));
  li.append(top, mid, bottom);
  fillRunLine(item, r);
  runItems.set(r.runId, item);
  const pick = () => hooks.select(r.runId, true);
  li.addEventListener("click", pick);
  li.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      pick();
    }
  });
  return li;
}

export function renderRuns(): void {
  runItems.clear();
  const ids = shortIds(state.runs.map((r) => r.runId));
  const shown = filterRuns(state.runs.map(withLiveView), state.filter);
  one("[data-testid=run-list]").replaceChildren(...shown.map(({ run, matched }) => runItem(run, matched, ids)));
  const empty = byId("runs-empty");
  empty.hidden = shown.length > 0;
  empty.textContent = state.runs.length ? "No run matches the filters." : "No runs yet. Start one with npm start -- --visualize.";
  renderFacets();
  one("[data-testid=run-count]").textContent = shown.length === state.runs.length ? `${state.runs.length}` : `${shown.filter((s) => s.matched).length} of ${state.runs.length}`;
}

/** The status and workflow choices: those present, plus the one chosen (even if gone). */
function renderFacets(): void {
  const { statuses, workflows } = runFacets(state.runs);
  const fill = (select: HTMLSelectElement, values: string[], chosen: string, any: string) => {
    const all = chosen && !values.includes(chosen) ? [...values, chosen] : values;
    const key = JSON.stringify(all);
    if (select.dataset.key !== key) {
      select.dataset.key = key;
      select.replaceChildren(el("option", "", any, { value: "" }), ...all.map((v) => el("option", "", v, { value: v })));
    }
    select.value = chosen;
  };
  fill(one("[data-testid=filter-status]"), statuses, state.filter.status, "any status");
  fill(one("[data-testid=filter-workflow]"), workflows, state.filter.workflow, "any workflow");
}

/** The filter bar's fields into state.filter (and the URL). */
export function wireRunFilters(): void {
  const fields: [keyof RunFilter, string][] = [["text", "filter-text"], ["status", "filter-status"], ["workflow", "filter-workflow"], ["session", "filter-session"]];
  for (const [field, testid] of fields) {
    const input = one<HTMLInputElement | HTMLSelectElement>(`[data-testid=${testid}]`);
    input.value = state.filter[field];
    input.addEventListener("input", () => {
      state.filter = { ...state.filter, [field]: input.value };
      renderRuns();
      hooks.syncUrl();
    });
  }
}

/** The filter bar shows state.filter (after the URL changed it). */
export function showRunFilters(): void {
  one<HTMLInputElement>("[data-testid=filter-text]").value = state.filter.text;
  one<HTMLInputElement>("[data-testid=filter-session]").value = state.filter.session;
  renderFacets();
}
