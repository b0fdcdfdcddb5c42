// The message timeline, narrowed by its kind chips and search box. A click on an entry picks
// the last step of its iteration (its context diff; in a replay, the chart and panels too).
import { byId, el, one, setText, TEXT_LIMIT } from "./dom.js";
import { entryKinds, matchesEntry } from "./filters.js";
import { hooks, state } from "./state.js";
import type { Entry, View } from "./types.js";

/** What is on screen, to update it incrementally. */
const shown = { entries: [] as Entry[], nodes: [] as HTMLElement[], stream: null as HTMLElement | null, filter: "" };

let onPick: (entry: Entry) => void = () => {};

function entryNode(e: Entry): HTMLElement {
  const node = el("div", `entry k-${e.kind}`, undefined, { "data-kind": e.kind, "data-iteration": String(e.iteration) });
  node.hidden = !matchesEntry(e, { hidden: state.hiddenKinds, text: state.find });
  node.addEventListener("click", (ev) => {
    // Opening the system prompt's <details> is not a pick.
    if (!(ev.target as Element).closest("summary")) onPick(e);
  });
  const head = el("div", "head");
  head.append(el("span", "it", `#${e.iteration}`), el("span", "kind", e.label));
  if (e.who) head.append(el("code", "who", e.who));
  if (e.kind !== "system") {
    node.append(head, setText(el("div", "text"), e.text, e.kind === "rescue" ? 4000 : TEXT_LIMIT));
    return node;
  }
  // The system prompt is long: collapsed.
  const details = el("details");
  const summary = el("summary");
  summary.append(head, el("span", "len", `${e.text.length} chars`));
  details.append(summary, el("div", "text", e.text));
  node.append(details);
  return node;
}

export function resetTimeline(): void {
  Object.assign(shown, { entries: [], nodes: [], stream: null, filter: "" });
  byId("timeline").replaceChildren();
}

export function renderTimeline(v: View): void {
  const box = byId("timeline");
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 60;
  const list = v.timeline;
  // A new filter shows or hides what is there; entries themselves are immutable: what is
  // still the same object is still on screen.
  const filter = JSON.stringify([[...state.hiddenKinds].sort(), state.find]);
  if (filter !== shown.filter) {
    shown.filter = filter;
    shown.entries.forEach((e, i) => (shown.nodes[i]!.hidden = !matchesEntry(e, { hidden: state.hiddenKinds, text: state.find })));
  }
  let same = 0;
  while (same < list.length && list[same] === shown.entries[same]) same++;
  for (const n of shown.nodes.splice(same)) n.remove();
  shown.stream?.remove();
  shown.stream = null;
  const fresh = list.slice(same).map(entryNode);
  box.append(...fresh);
  shown.nodes.push(...fresh);
  shown.entries = list;
  if (v.stream) {
    const s = (shown.stream = el("div", "entry k-stream", undefined, { "data-kind": "stream", "data-iteration": String(v.stream.iteration) }));
    const head = el("div", "head");
    head.append(el("span", "it", `#${v.stream.iteration}`), el("span", "kind", "streaming…"));
    const t = v.stream.text;
    s.append(head, el("div", "text", t.length > TEXT_LIMIT ? `…${t.slice(-TEXT_LIMIT)}` : t));
    box.append(s);
  }
  const empty = box.querySelector(".empty");
  if (list.length || v.stream) empty?.remove();
  else if (!empty) box.append(el("p", "empty", "no messages yet"));
  if (atBottom || fresh.length === list.length) box.scrollTop = box.scrollHeight;
  renderKindChips(list);
}

let chipsKey = "";

/** One toggle per kind present, with its count; a hidden kind's chip is off. */
function renderKindChips(list: readonly Entry[]): void {
  const kinds = entryKinds(list);
  const key = JSON.stringify([kinds, [...state.hiddenKinds]]);
  if (key === chipsKey) return;
  chipsKey = key;
  one("[data-testid=timeline-kinds]").replaceChildren(
    ...kinds.map((k) => {
      const on = !state.hiddenKinds.has(k.kind);
      const b = el("button", `chip k-${k.kind}${on ? " on" : ""}`, `${k.label} ${k.count}`, { type: "button", "data-kind": k.kind, "aria-pressed": String(on) });
      b.addEventListener("click", () => {
        if (on) state.hiddenKinds.add(k.kind);
        else state.hiddenKinds.delete(k.kind);
        hooks.syncUrl();
        hooks.schedule();
      });
      return b;
    }),
  );
}

export function wireTimeline(pick: (entry: Entry) => void): void {
  onPick = pick;
  const find = one<HTMLInputElement>("[data-testid=timeline-find]");
  find.value = state.find;
  find.addEventListener("input", () => {
    state.find = find.value;
    hooks.syncUrl();
    hooks.schedule();
  });
}

export function showTimelineFind(): void {
  one<HTMLInputElement>("[data-testid=timeline-find]").value = state.find;
  chipsKey = "";
}
