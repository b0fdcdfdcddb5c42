// A waiting run's requests for a person (RunSummary.requests, from the run list): approve,
// reject with a reason, approve with edited args, answer a question. The page only records the
// decision (POST /api/runs/:id/decisions); whoever runs the run continues it and applies it.
import type { DecisionBody, HumanRequestView, RunSummary } from "../../protocol.js";
import { postJson } from "./api.js";
import { el } from "./dom.js";

type Decision = DecisionBody["decision"];
type Mode = "" | "reject" | "edit";
interface Draft {
  mode: Mode;
  reason: string;
  args: string;
  answer: string;
  error: string;
  busy: boolean;
  decided: (Decision & { at: number }) | null;
  version: number;
}
type TextField = "reason" | "args" | "answer";

/** What the person is doing with each request ("runId/callId"): drafts survive redraws. */
const drafts = new Map<string, Draft>();
let shown: { box: HTMLElement | null; run: RunSummary | undefined; key: string } = { box: null, run: undefined, key: "" };

const pretty = (value: unknown): string => {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
};

function draftOf(runId: string, req: HumanRequestView): Draft {
  const id = `${runId}/${req.callId}`;
  let d = drafts.get(id);
  if (!d) drafts.set(id, (d = { mode: "", reason: "", args: pretty(req.args ?? {}), answer: "", error: "", busy: false, decided: null, version: 0 }));
  return d;
}

/** Draw the requests of `run` (the selected run) into `box`; nothing to draw hides it. */
export function renderHuman(box: HTMLElement, run: RunSummary | undefined): void {
  const requests = run?.status === "waiting" && Array.isArray(run.requests) ? run.requests : [];
  box.hidden = requests.length === 0;
  // Rebuilt only when the requests or a request's controls change, never while someone types.
  const key = JSON.stringify([run?.runId, requests, requests.map((r) => draftOf(run!.runId, r).version)]);
  shown = { box, run, key: shown.key };
  if (key === shown.key) return;
  shown.key = key;
  const focus = (document.activeElement as HTMLElement | null)?.dataset?.focusKey;
  box.querySelector(".hreqs")?.replaceChildren(...requests.map((r) => requestNode(run!.runId, r)));
  if (focus) box.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focus)}"]`)?.focus();
}

function redraw(d: Draft): void {
  d.version++;
  if (shown.box) renderHuman(shown.box, shown.run);
}

function decisionText(decision: Decision & { at?: number }): string {
  const at = Number.isFinite(decision.at) ? ` · ${new Date(decision.at as number).toLocaleTimeString()}` : "";
  switch (decision.type) {
    case "approve":
      return `approved${decision.args ? " with edited args" : ""}${at}`;
    case "reject":
      return `rejected: ${decision.reason}${at}`;
    case "answer":
      return `answered: ${typeof decision.answer === "string" ? decision.answer : pretty(decision.answer)}${at}`;
    default:
      // A decision type this page does not know yet (a newer server).
      return `decided (${(decision as { type: string }).type})${at}`;
  }
}

function requestNode(runId: string, req: HumanRequestView): HTMLElement {
  const d = draftOf(runId, req);
  const decision: (Decision & { at?: number }) | null = req.decision ?? d.decided;
  const node = el("div", `hreq${decision ? " decided" : ""}`, undefined, {
    "data-testid": "human-request",
    "data-call-id": String(req.callId),
    "data-tool": String(req.tool),
    "data-kind": String(req.kind),
    "data-decided": decision ? String(decision.type) : "",
  });
  const head = el("div", "hreq-head");
  head.append(el("code", "tool", String(req.tool)), el("span", `hkind hk-${req.kind}`, req.kind === "input" ? "question" : "approval"));
  if (Number.isFinite(req.askedAt)) head.append(el("span", "when", `asked ${new Date(req.askedAt).toLocaleTimeString()}`));
  node.append(head, el("pre", "hargs", pretty(req.args ?? {}), { "data-testid": "human-args" }));
  if (decision) {
    node.append(el("div", `hdecided d-${decision.type}`, decisionText(decision), { "data-testid": "human-decision" }));
    return node;
  }
  node.append(...controls(runId, req, d));
  const error = el("div", "herror", d.error, { "data-testid": "human-error", role: "alert" });
  error.hidden = !d.error;
  node.append(error);
  return node;
}

function button(text: string, action: string, onClick: () => void, disabled?: boolean): HTMLButtonElement {
  const b = el("button", action.startsWith("approve") ? "primary" : "", text, { type: "button", "data-action": action });
  b.disabled = !!disabled;
  b.addEventListener("click", onClick);
  return b;
}

/** A text box whose value is the draft's field, kept there as the person types. */
function box(tag: "input" | "textarea", d: Draft, field: TextField, attrs: Record<string, string>): HTMLInputElement | HTMLTextAreaElement {
  const input = el(tag, "hinput", undefined, attrs);
  input.value = d[field];
  input.addEventListener("input", () => (d[field] = input.value));
  return input;
}

function controls(runId: string, req: HumanRequestView, d: Draft): HTMLElement[] {
  const send = (decision: Decision) => decide(runId, req, d, decision);
  const setMode = (mode: Mode) => () => {
    d.mode = mode;
    d.error = "";
    redraw(d);
    shown.box?.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(`${req.callId}/${mode}`)}"]`)?.focus();
  };
  const row = (...children: HTMLElement[]) => {
    const r = el("div", "hactions");
    r.append(...children);
    return r;
  };
  if (d.mode === "reject") {
    const reason = box("input", d, "reason", { type: "text", placeholder: "why (the model reads this)", "data-testid": "reject-reason", "data-focus-key": `${req.callId}/reject`, "aria-label": "Reason for rejecting" });
    const confirm = () => (d.reason.trim() ? send({ type: "reject", reason: d.reason.trim() }) : ((d.error = "a reason is needed: the model reads it"), redraw(d)));
    reason.addEventListener("keydown", (e: Event) => (e as KeyboardEvent).key === "Enter" && confirm());
    return [reason, row(button("Reject", "confirm-reject", confirm, d.busy), button("Cancel", "cancel", setMode("")))];
  }
  if (d.mode === "edit") {
    const args = box("textarea", d, "args", { rows: "6", spellcheck: "false", "data-testid": "edit-args", "data-focus-key": `${req.callId}/edit`, "aria-label": "Arguments (JSON)" });
    const approveEdited = () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(d.args);
      } catch (err) {
        d.error = `not JSON: ${(err as Error)?.message ?? err}`;
        return redraw(d);
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        d.error = "the arguments are a JSON object";
        return redraw(d);
      }
      send({ type: "approve", args: parsed as Record<string, unknown> });
    };
    return [args, row(button("Approve with these args", "approve-edited", approveEdited, d.busy), button("Cancel", "cancel", setMode("")))];
  }
  if (req.kind === "input") {
    const answer = box("textarea", d, "answer", { rows: "3", placeholder: "your answer (the tool's result)", "data-testid": "answer", "data-focus-key": `${req.callId}/answer`, "aria-label": "Answer" });
    const send_ = () => (d.answer.trim() ? send({ type: "answer", answer: d.answer }) : ((d.error = "write an answer first"), redraw(d)));
    return [answer, row(button("Answer", "answer", send_, d.busy), button("Reject", "reject", setMode("reject"), d.busy))];
  }
  return [row(button("Approve", "approve", () => send({ type: "approve" }), d.busy), button("Reject", "reject", setMode("reject"), d.busy), button("Edit args", "edit", setMode("edit"), d.busy))];
}

async function decide(runId: string, req: HumanRequestView, d: Draft, decision: Decision): Promise<void> {
  d.busy = true;
  d.error = "";
  redraw(d);
  const { ok, body } = await postJson(`/api/runs/${encodeURIComponent(runId)}/decisions`, { callId: req.callId, decision });
  d.busy = false;
  if (ok) {
    // Shown at once; the run list confirms it with the decision as recorded.
    d.decided = { ...decision, at: Date.now() };
    d.mode = "";
  } else {
    const e = body?.error;
    d.error = e ? `${e.problem ?? e.code ?? "error"}: ${e.message ?? ""}` : "the server did not answer";
  }
  redraw(d);
}
