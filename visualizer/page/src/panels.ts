// The side panels of the run shown: state, error, required steps, budgets, the batch in
// flight, stats, the snapshot JSON; and the toolbar above the chart (mode, replay position).
import type { RunSummary } from "../../protocol.js";
import { byId, el, one, setText } from "./dom.js";
import { childrenOf, runLink } from "./lineage.js";
import { shortIds } from "./run-ids.js";
import { state } from "./state.js";
import type { LooseContext, View } from "./types.js";
import { counters, describeEvent, shortJson } from "./view.js";

const num = (x: unknown) => Number(x) || 0;

export function renderBar(run: RunSummary | undefined): void {
  const id = state.selected;
  const title = byId("run-title");
  title.textContent = id ? `run ${shortIds(state.runs.map((r) => r.runId).concat(id)).get(id) ?? id}${run?.workflow ? ` · ${run.workflow}` : ""}` : "";
  title.title = id ?? "";
  const live = state.mode === "live";
  const mode = byId("mode");
  const labels: Record<string, string> = {
    none: "no run selected",
    waiting: "waiting for the run…",
    live: state.view.events === 0 ? "waiting for events" : run?.live ? "live" : "finished (live feed)",
    loading: "loading replay…",
  };
  mode.textContent = labels[state.mode] ?? state.mode;
  mode.className = `mode m-${state.mode}${live && run?.live ? " on" : ""}`;
  const finished = !run?.live || run.status !== "active" || (state.view.snapshot && state.view.snapshot.status !== "active");
  byId("mode-replay").hidden = !(live && run?.stored && run.replayable && finished);
  // A finished run still in the server's buffer can be shown as it streamed (chunks included).
  byId("mode-live").hidden = !(state.mode === "replay" && (run?.live || Number(run?.events) > 0));
  const notice = byId("notice");
  notice.hidden = !state.notice;
  notice.textContent = state.notice;
  notice.classList.toggle("err", state.noticeError);
  const r = state.replay;
  one("[data-testid=replay]").hidden = !(r && state.mode === "replay");
  if (r) {
    const slider = one<HTMLInputElement>("[data-testid=replay-slider]");
    if (slider.value !== String(r.pos)) slider.value = String(r.pos);
    one("[data-testid=replay-position]").textContent = `${r.pos} / ${r.events.length}`;
    byId("replay-event").textContent = r.pos > 0 ? describeEvent(r.events[r.pos - 1]) : "start";
  }
}

const counterRows = new Map<string, { row: HTMLElement; bar: HTMLElement; fill: HTMLElement; num: HTMLElement }>();

/** Budget bars: built once; then only their attributes and text change. */
export function updateCounters(ctx: LooseContext | undefined): void {
  for (const c of counters(ctx)) {
    let r = counterRows.get(c.id);
    if (!r) {
      r = { row: el("div", "counter", undefined, { "data-testid": `counter-${c.id}` }), bar: el("div"), fill: el("div", "fill"), num: el("span", "num") };
      r.bar.append(r.fill);
      r.row.append(el("span", "name", c.label), r.bar, r.num);
      byId("counters").append(r.row);
      counterRows.set(c.id, r);
    }
    const value = String(c.value);
    const max = c.max === undefined ? "" : String(c.max);
    if (r.row.getAttribute("data-value") !== value) r.row.setAttribute("data-value", value);
    if (r.row.getAttribute("data-max") !== max) r.row.setAttribute("data-max", max);
    const ratio = c.max === undefined ? 0 : c.max > 0 ? Math.min(1, c.value / c.max) : c.value > 0 ? 1 : 0;
    const fmt = (n: number) => (c.ms ? `${(n / 1000).toFixed(1)} s` : n.toLocaleString("en-US"));
    r.bar.className = `bar${ratio >= 1 ? " full" : ratio >= 0.8 ? " high" : ""}${max ? "" : " nolimit"}`;
    r.fill.style.width = `${(ratio * 100).toFixed(1)}%`;
    r.num.textContent = !ctx ? "—" : c.max !== undefined ? `${fmt(c.value)} / ${fmt(c.max)}` : `${fmt(c.value)} · no limit`;
  }
}

export function renderPanels(v: View, run: RunSummary | undefined): void {
  const snap = v.snapshot;
  const ctx: LooseContext = snap?.context ?? {};
  // The run's status is the run list's (the server's summary): one word for it on the whole page.
  const statusLine = byId("status-line");
  statusLine.dataset.status = run?.status ?? "";
  statusLine.textContent = [run ? `status ${run.status}` : "", snap ? `iteration ${num(ctx.iteration)}` : v.events ? "no snapshot yet" : "", ctx.run?.workflow ?? run?.workflow]
    .filter(Boolean)
    .join(" · ");

  const error = byId("error");
  const err = ctx.error;
  error.hidden = !err && !snap?.error;
  if (!error.hidden) setText(error, err ? `${err.code ?? err.name ?? "error"}${err.origin ? ` (${err.origin})` : ""}: ${err.message ?? shortJson(err)}` : String(snap?.error), 400);

  // Required steps, then other tools that completed (not required, not terminal), then the terminal.
  const required: string[] = Array.isArray(ctx.steps?.required) ? ctx.steps.required : [];
  const completed: LooseContext[] = Array.isArray(ctx.steps?.completed) ? ctx.steps.completed : [];
  const doneTools = new Set(completed.map((s) => s?.tool));
  const terminals: string[] = Array.isArray(ctx.run?.terminalTools) ? ctx.run.terminalTools : [];
  const extra = [...doneTools].filter((t): t is string => typeof t === "string" && !required.includes(t) && !terminals.includes(t));
  const steps = [...required, ...extra].map((tool, i) => {
    const done = doneTools.has(tool);
    const li = el("li", done ? "done" : "", undefined, { "data-step": String(tool), "data-done": String(done) });
    li.append(el("span", "mark", done ? "✓" : "○"), el("code", "", String(tool)));
    if (i >= required.length) li.append(el("span", "note", "not required"));
    return li;
  });
  if (terminals.length) {
    const li = el("li", `terminal${ctx.terminal ? " done" : ""}`);
    li.append(el("span", "mark", ctx.terminal ? "✓" : "→"), el("code", "", terminals.join(" | ")), el("span", "note", "terminal"));
    steps.push(li);
  }
  byId("steps").replaceChildren(...(steps.length ? steps : [el("li", "muted", snap ? "no required steps" : "—")]));
  renderBatch(v, ctx);
  renderStats(ctx);
}

function renderBatch(v: View, ctx: LooseContext): void {
  const calls: LooseContext[] = Array.isArray(ctx.batch?.calls) ? ctx.batch.calls : [];
  const results: LooseContext[] = Array.isArray(ctx.batch?.done) ? ctx.batch.done : [];
  const batch = calls.map((call, i) => {
    const rec = results.find((d) => d?.index === i);
    const running = !rec && v.running?.index === i;
    const st = rec ? String(rec.status) : "pending";
    const row = el("div", `call st-${st}${running ? " running" : ""}`, undefined, { "data-status": st, "data-tool": String(call?.tool) });
    const head = el("div", "call-head");
    head.append(el("span", "idx", `#${i}`), el("code", "tool", String(call?.tool)), el("span", "cstatus", running ? "running…" : st));
    row.append(head, setText(el("code", "args"), shortJson(call?.args ?? {}), 120));
    // The child run this call started (workflowTool), once the run list has it.
    const child = childrenOf(state.runs, state.selected).find((c) => c.parent.callId === call?.callId);
    if (child) row.append(runLink(child.runId, `child run ${child.runId} →`, { "data-testid": "batch-child" }));
    if (typeof rec?.content === "string" && rec.content) row.append(setText(el("div", "result"), rec.content, 160));
    return row;
  });
  byId("batch").replaceChildren(...(batch.length ? batch : [el("div", "muted", v.snapshot ? "no batch in progress" : "—")]));
}

function renderStats(ctx: LooseContext): void {
  const s = ctx.stats ?? {};
  const rows: [string, number, string?][] = [
    ["tool calls", num(s.toolCalls)],
    ["rescues", num(s.rescues)],
    ["nudges", num(s.retryNudges) + num(s.stepNudges) + num(s.prereqNudges), `retry ${num(s.retryNudges)} · step ${num(s.stepNudges)} · prereq ${num(s.prereqNudges)}`],
    ["compactions", Array.isArray(s.compactions) ? s.compactions.length : 0],
    ["tool errors", num(s.toolErrors)],
    ["loop breaks", num(s.loopBreaks)],
  ];
  byId("stats").replaceChildren(
    ...rows.flatMap(([k, val, detail]) => {
      const dd = el("dd", "", String(val));
      if (detail) dd.append(el("span", "detail", detail));
      return [el("dt", "", k), dd];
    }),
  );
}

let shownSnapshot: unknown;

export function snapshotJson(): string {
  const s = state.view.snapshot;
  return s ? JSON.stringify({ value: s.value, status: s.status, context: s.context }, null, 2) : "";
}

/** The JSON is built only while it is shown (a context can be large). */
export function renderSnapshot(v: View): void {
  if (shownSnapshot === v.snapshot || !byId<HTMLDetailsElement>("snapshot-details").open) return;
  shownSnapshot = v.snapshot;
  byId("snapshot-json").textContent = snapshotJson() || "no snapshot yet";
}

export function wireSnapshot(): void {
  byId("copy-snapshot").addEventListener("click", async () => {
    const text = snapshotJson();
    byId<HTMLDetailsElement>("snapshot-details").open = true;
    byId("snapshot-json").textContent = text || "no snapshot yet";
    const copied = byId("copied");
    if (!text) return void (copied.textContent = "nothing to copy yet");
    try {
      await navigator.clipboard.writeText(text);
      copied.textContent = "copied";
    } catch {
      copied.textContent = "no clipboard here: the JSON is below";
    }
  });
  byId("snapshot-details").addEventListener("toggle", () => renderSnapshot(state.view));
}
