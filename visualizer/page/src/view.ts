// The page's model: a pure fold over one run's wire events (visualizer/protocol.ts). `reduce`
// never mutates its inputs and reads neither the clock nor the DOM, so a replay at position i
// is the fold of events[0..i), and the same run always reads the same.
import type { Entry, LooseContext, View, ViewEvent, ViewSnapshot } from "./types.js";

export function initialView(): View {
  return { events: 0, value: undefined, leaves: [], snapshot: null, edgeCounts: {}, taken: [], microsteps: 0, timeline: [], stream: null, rescued: [], seeded: false, resync: 0, lost: 0, running: null };
}

/** `{"compacting":"checking"}` → ["compacting.checking"]. */
export function stateLeaves(value: unknown, prefix = ""): string[] {
  if (typeof value === "string") return [prefix + value];
  if (!value || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, sub]) => {
    const inner = stateLeaves(sub, `${prefix}${key}.`);
    return inner.length ? inner : [prefix + key];
  });
}

const KINDS: Record<string, [string, string]> = {
  system_prompt: ["system", "system prompt"],
  user_input: ["user", "user"],
  tool_call: ["tool_call", "tool call"],
  tool_result: ["tool_result", "tool result"],
  reasoning: ["reasoning", "reasoning"],
  text_response: ["text_response", "text response"],
  step_nudge: ["step_nudge", "step nudge"],
  prerequisite_nudge: ["prerequisite_nudge", "prerequisite nudge"],
  retry_nudge: ["retry_nudge", "retry nudge"],
  summary: ["summary", "summary"],
};

/** Compact JSON for display; strings as they are. */
export function shortJson(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

const callsText = (calls: LooseContext[], name: string) => calls.map((c) => `${c?.[name]}(${shortJson(c?.args ?? {})})`).join("\n");

/** The timeline entry of a Message (src/core/messages.ts). */
export function messageEntry(m: LooseContext | null | undefined, fallbackIteration: number): Entry | null {
  if (!m || typeof m !== "object") return null;
  const type = m.meta?.type;
  let [kind, label] = KINDS[type] ?? ["text_response", String(type ?? m.role ?? "message")];
  const iteration = typeof m.meta?.stepIndex === "number" ? m.meta.stepIndex : fallbackIteration;
  const content = typeof m.content === "string" ? m.content : shortJson(m.content);
  let text = content;
  if (type === "tool_call" && Array.isArray(m.toolCalls) && m.toolCalls.length) {
    const calls = callsText(m.toolCalls, "name");
    text = content ? `${content}\n${calls}` : calls;
  }
  // Tool errors are answered as "[ErrorName] ...".
  if (type === "tool_result" && content.startsWith("[")) [kind, label] = ["tool_error", "tool error"];
  if (type === "summary" && m.meta?.originalType) label = `summary (was ${m.meta.originalType})`;
  return { kind, iteration, label, text, ...(typeof m.toolName === "string" ? { who: m.toolName } : {}), fromMessage: true };
}

const iterationOf = (v: View) => (typeof v.snapshot?.context?.iteration === "number" ? (v.snapshot.context.iteration as number) : 0);
const seed = (messages: LooseContext[], count: number) => messages.slice(0, count).flatMap((m) => messageEntry(m, 0) ?? []);

/** Applies one wire event, or the page's own gap event. Unknown events change nothing but the event count. */
export function reduce(view: View, e: ViewEvent | null | undefined): View {
  if (!e || typeof e !== "object" || typeof e.type !== "string") return view;
  const v = { ...view, events: view.events + 1 };
  switch (e.type) {
    case "@xstate.microstep": {
      const edgeCounts = { ...v.edgeCounts };
      const taken: string[] = [];
      for (const ref of Array.isArray(e.transitions) ? e.transitions : []) {
        if (typeof ref?.key !== "string") continue;
        edgeCounts[ref.key] = (edgeCounts[ref.key] ?? 0) + 1;
        taken.push(ref.key);
      }
      return { ...v, value: e.value, leaves: stateLeaves(e.value), edgeCounts, taken, microsteps: v.microsteps + 1 };
    }
    case "@xstate.snapshot":
      return snapshot(v, e.snapshot as unknown as LooseContext);
    case "@xstate.action":
      return emitted(v, e.action?.event);
    case "forge.chunk":
      return chunk(v, e.chunk);
    case "gap":
      // The server's buffer dropped events: the next two snapshots rebuild the history (the
      // first is the newest dropped one; messages emitted after it may be among the lost).
      return { ...v, lost: v.lost + (Number(e.lost) || 0), resync: 2 };
    default:
      return v;
  }
}

function snapshot(v: View, s: LooseContext | undefined): View {
  if (!s || typeof s !== "object") return v;
  const ctx: LooseContext = s.context && typeof s.context === "object" ? s.context : {};
  const iteration = typeof ctx.iteration === "number" ? ctx.iteration : 0;
  const messages: LooseContext[] = Array.isArray(ctx.messages) ? ctx.messages : [];
  let timeline = v.timeline;
  if (v.resync > 0) timeline = seed(messages, messages.length);
  else if (!v.seeded) {
    // The history before the first snapshot (the initial messages, or all of it when the feed
    // starts mid-run), less the messages already seen as emitted events.
    const seen = timeline.filter((t) => t.fromMessage).length;
    timeline = [...seed(messages, Math.max(0, messages.length - seen)), ...timeline];
  }
  let rescued = v.rescued;
  const val = ctx.validation;
  if (val?.kind === "calls" && val.rescued === true && !rescued.includes(iteration)) {
    rescued = [...rescued, iteration];
    const last = ctx.lastResponse;
    const text = last?.type === "text" && typeof last.content === "string" ? last.content : callsText(Array.isArray(val.calls) ? val.calls : [], "tool");
    // Before the calls it became (emitted in the same macrostep, before this snapshot).
    let at = timeline.length;
    while (at > 0 && timeline[at - 1]!.iteration === iteration && timeline[at - 1]!.kind === "tool_call") at--;
    timeline = [...timeline.slice(0, at), { kind: "rescue", iteration, label: "rescued from text", text }, ...timeline.slice(at)];
  }
  const value = "value" in s ? s.value : v.value;
  const snap: ViewSnapshot = { value, status: String(s.status ?? ""), context: ctx, ...(s.error ? { error: String(s.error) } : {}) };
  return {
    ...v,
    snapshot: snap,
    value,
    leaves: stateLeaves(value),
    timeline,
    rescued,
    stream: v.stream && iteration >= v.stream.iteration ? null : v.stream,
    seeded: true,
    resync: Math.max(0, v.resync - 1),
    running: s.status === "active" ? v.running : null,
  };
}

function emitted(v: View, ev: LooseContext | undefined): View {
  if (!ev || typeof ev !== "object") return v;
  const iteration = iterationOf(v);
  const add = (entry: Entry, stream = v.stream): View => ({ ...v, timeline: [...v.timeline, entry], stream });
  switch (ev.type) {
    case "history.message": {
      const entry = messageEntry(ev.message, iteration);
      // An assistant message ends the streamed answer.
      return entry ? add(entry, ev.message?.role === "assistant" ? null : v.stream) : v;
    }
    case "context.compacted": {
      const c = ev.event ?? {};
      const more = typeof c.messagesBefore === "number" ? ` (${c.messagesBefore} → ${c.messagesAfter} messages)` : "";
      return add({ kind: "compaction", iteration, label: "compaction", text: `phase ${c.phaseReached ?? "?"}: ${c.tokensBefore ?? "?"} → ${c.tokensAfter ?? "?"} tokens${more}` });
    }
    case "service.error": {
      const err = ev.error;
      const text = err && typeof err === "object" ? `${err.code ?? err.name ?? "error"}: ${err.message ?? shortJson(err)}` : String(err);
      return add({ kind: "service_error", iteration, label: `service error (${ev.origin ?? "?"})`, text }, null);
    }
    case "tool.start":
      return { ...v, running: { index: Number(ev.index), tool: String(ev.tool) } };
    case "tool.outcome":
      return { ...v, running: null };
    default:
      return v;
  }
}

function chunk(v: View, c: LooseContext | undefined): View {
  if (!c || typeof c !== "object") return v;
  // The answer being streamed is the model call after the last one counted.
  const iteration = iterationOf(v) + 1;
  const prev = v.stream?.iteration === iteration ? v.stream.text : "";
  const set = (text: string): View => ({ ...v, stream: { iteration, text } });
  switch (c.type) {
    case "text_delta":
      return set(prev + String(c.content ?? ""));
    case "tool_call_delta":
      return set(prev + (typeof c.name === "string" ? `${prev ? "\n" : ""}${c.name}: ` : "") + String(c.content ?? ""));
    case "retry":
      return set(`(stream restarted: ${c.reason ?? ""})\n`);
    case "final":
      return { ...v, stream: null };
    default:
      return v;
  }
}

export interface Counter {
  id: string;
  label: string;
  value: number;
  /** undefined: no limit. */
  max: number | undefined;
  ms?: boolean;
}

/** The budget bars of a workflow context. */
export function counters(ctx: LooseContext | undefined): Counter[] {
  const c = ctx ?? {};
  const b = c.run?.budget ?? {};
  const n = (x: unknown) => (Number.isFinite(x) ? (x as number) : 0);
  const m = (x: unknown) => (Number.isFinite(x) ? (x as number) : undefined);
  const start = c.run?.startedAt;
  return [
    { id: "iterations", label: "iterations", value: n(c.iteration), max: m(b.maxIterations) },
    { id: "retries", label: "retries", value: n(c.counters?.retries), max: m(b.maxRetries) },
    { id: "toolErrors", label: "tool errors", value: n(c.counters?.toolErrors), max: m(b.maxToolErrors) },
    { id: "premature", label: "premature", value: n(c.counters?.premature), max: m(b.maxPremature) },
    { id: "prereq", label: "prereq", value: n(c.counters?.prereq), max: m(b.maxPrereq) },
    { id: "tokens", label: "tokens", value: n(c.usage?.inputTokens) + n(c.usage?.outputTokens), max: m(b.maxTotalTokens) },
    { id: "wallClock", label: "wall clock", value: Number.isFinite(c.now) && Number.isFinite(start) ? Math.max(0, c.now - start) : 0, max: m(b.maxWallClockMs), ms: true },
  ];
}

/** A wire event in a few words, for the replay bar ("microstep → compacting.checking"). */
export function describeEvent(e: ViewEvent | undefined): string {
  if (!e) return "";
  switch (e.type) {
    case "@xstate.microstep":
      return `microstep → ${stateLeaves(e.value).join(", ")}`;
    case "@xstate.snapshot":
      return `snapshot (${e.event?.type ?? "?"})`;
    case "@xstate.action": {
      const ev = e.action?.event as LooseContext | undefined;
      return `emit ${ev?.type}${ev?.type === "history.message" ? ` (${ev.message?.meta?.type})` : ""}`;
    }
    case "@xstate.event":
      return `event ${e.event?.type}`;
    case "@xstate.actor":
      return `actor ${e.src ?? ""}`;
    case "forge.chunk":
      return `chunk ${e.chunk?.type}`;
    default:
      return String(e.type ?? "");
  }
}
