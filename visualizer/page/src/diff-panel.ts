// The context diff of the step shown: what the macrostep changed in the workflow context
// (counters, messages, validation...), with the step's cause and state, and buttons to step.
import { byId, el, setText } from "./dom.js";
import { diffContext, displayValue, lastKey, type Change } from "./context-diff.js";
import { shownStep, state } from "./state.js";

const VALUE_LIMIT = 160;

let shownKey = "";

function changeRow(c: Change): HTMLElement {
  const row = el("div", `diff-row d-${c.kind}`, undefined, { "data-testid": "diff-row", "data-path": c.path, "data-kind": c.kind });
  row.append(el("code", "path", c.path));
  const values = el("div", "values");
  const key = lastKey(c.path);
  if (c.kind !== "added") values.append(setText(el("code", "before"), displayValue(c.before, key), VALUE_LIMIT));
  if (c.kind === "changed") values.append(el("span", "arrow", "→"));
  if (c.kind !== "removed") values.append(setText(el("code", "after"), displayValue(c.after, key), VALUE_LIMIT));
  row.append(values);
  return row;
}

export function renderDiff(): void {
  const n = shownStep();
  const steps = state.steps;
  const step = steps[n - 1];
  const key = `${state.selected}|${n}|${steps.length}`;
  if (key === shownKey) return;
  shownKey = key;
  const box = byId("diff");
  box.setAttribute("data-step", String(n));
  byId("step-pos").textContent = steps.length ? `step ${n} / ${steps.length}` : "no steps yet";
  byId<HTMLButtonElement>("step-prev").disabled = n <= 1;
  byId<HTMLButtonElement>("step-next").disabled = n >= steps.length;
  if (!step) {
    box.replaceChildren(el("p", "muted", "the context diff of each step shows here"));
    return;
  }
  const head = el("div", "diff-head");
  head.append(el("span", "cause", step.cause || "?"), el("span", "muted", " → "), el("code", "", step.leaves.join(", ") || step.status), el("span", "muted", ` · iteration ${step.iteration}`));
  const { changes, truncated } = diffContext(steps[n - 2]?.context ?? {}, step.context);
  const rows = changes.map(changeRow);
  if (truncated) rows.push(el("p", "muted", "more changes not shown: see the snapshot JSON"));
  box.replaceChildren(head, ...(rows.length ? rows : [el("p", "muted", n === 1 ? "the first snapshot" : "the context did not change")]));
}

export function resetDiff(): void {
  shownKey = "";
}
