/**
 * Masking a run's tool-call arguments (each tool's `redact` names, via `redactArgs`) in the
 * copies forge-ts reports: a context as the visualizer or `forge-ts runs show` shows it, the
 * events the machine emits, the run's event log.
 *
 * Two scopes, because the stored state is also what a run resumes from:
 * - "report": everything a reader sees (messages, steps, batch, requests, loop-break keys, ...).
 * - "stored": only copies no resume reads back (`lastResponse`, `terminal.args`, the log's model
 *   responses and seed messages). The model's history, calls in flight or waiting for a person,
 *   completed steps (arg-matched prerequisites) and loop-break keys stay real, so a resumed run
 *   behaves exactly as an uninterrupted one and its model and tools see the real values.
 */
import { isPlainObject } from "../core/json-value.js";
import type { AnyToolDef } from "../core/tool.js";
import { redactArgs } from "./redact.js";

/** Tool name → argument names to mask (only tools that have some). */
export type RedactionMap = Readonly<Record<string, readonly string[]>>;

/** Which copies to mask: all that are reported, or only those a resume never reads back. */
export type RedactionScope = "report" | "stored";

type Loose = Record<string, unknown>;

/**
 * The map of a workflow's tools; undefined when no tool redacts anything.
 *
 * @example
 * redactionMapOf(workflow.tools); // { login: ["password"] }
 */
export function redactionMapOf(tools: Readonly<Record<string, AnyToolDef>>): Record<string, string[]> | undefined {
  const entries = Object.values(tools).flatMap((t): [string, string[]][] => (t.redact && t.redact.length > 0 ? [[t.name, [...t.redact]]] : []));
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/**
 * The map a run carries in its context (`context.run.redact`), read defensively: reports read
 * contexts from other processes and older stores.
 *
 * @example
 * redactionMapIn(checkpoint.snapshot.context); // { login: ["password"] } or undefined
 */
export function redactionMapIn(context: unknown): RedactionMap | undefined {
  const run = isPlainObject(context) ? context.run : undefined;
  const map = isPlainObject(run) ? run.redact : undefined;
  if (!isPlainObject(map)) return undefined;
  const valid = Object.entries(map).filter((e): e is [string, string[]] => Array.isArray(e[1]) && e[1].every((k) => typeof k === "string"));
  return valid.length > 0 ? Object.fromEntries(valid) : undefined;
}

/** Two maps together (a run's own and its workflow's): a name masked by either is masked. */
export function mergeRedactionMaps(a: RedactionMap | undefined, b: RedactionMap | undefined): RedactionMap | undefined {
  if (!a || !b) return a ?? b;
  const out: Record<string, string[]> = {};
  for (const [tool, keys] of [...Object.entries(a), ...Object.entries(b)]) out[tool] = [...new Set([...(out[tool] ?? []), ...keys])];
  return out;
}

/**
 * One call's arguments with its tool's names masked.
 *
 * @example
 * redactCall("login", { user: "ann", password: "x" }, { login: ["password"] }); // { user: "ann", password: "[redacted]" }
 */
export function redactCall<T>(tool: unknown, args: T, map: RedactionMap | undefined): T {
  if (!map || typeof tool !== "string" || !Object.hasOwn(map, tool)) return args;
  return redactArgs(args, map[tool]);
}

/** Each `{ [nameKey]: tool, [argsKey]: args }` of a list with its args masked (other entries as they are). */
function redactCalls(list: unknown, map: RedactionMap, nameKey: string, argsKey = "args"): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((c: unknown) => (isPlainObject(c) && argsKey in c ? { ...c, [argsKey]: redactCall(c[nameKey], c[argsKey], map) } : c));
}

/**
 * A message with the arguments of its tool calls masked.
 *
 * @example
 * redactMessage(assistantMessage, { login: ["password"] }).toolCalls[0].args.password; // "[redacted]"
 */
export function redactMessage<T>(message: T, map: RedactionMap | undefined): T {
  if (!map || !isPlainObject(message) || !Array.isArray(message.toolCalls)) return message;
  return { ...message, toolCalls: redactCalls(message.toolCalls, map, "name") } as T;
}

/**
 * A model response (LLMResponse) with the arguments of its tool calls masked.
 *
 * @example
 * redactResponse(toolCallsResponse([{ tool: "login", args: { password: "x" } }]), map);
 */
export function redactResponse<T>(response: T, map: RedactionMap | undefined): T {
  if (!map || !isPlainObject(response) || !Array.isArray(response.toolCalls)) return response;
  return { ...response, toolCalls: redactCalls(response.toolCalls, map, "tool") } as T;
}

/** A pending request for a person (and an edit in its decision) with the call's arguments masked. */
export function redactHumanRequest<T>(request: T, map: RedactionMap | undefined): T {
  if (!map || !isPlainObject(request)) return request;
  const out: Loose = { ...request, args: redactCall(request.tool, request.args, map) };
  const decision = request.decision;
  if (isPlainObject(decision) && "args" in decision) out.decision = { ...decision, args: redactCall(request.tool, decision.args, map) };
  return out as T;
}

/**
 * A workflow context (or any object shaped like one) with tool-call arguments masked in the
 * given scope (see the file comment). Fields it does not know pass through.
 *
 * @example
 * redactContext(snapshot.context, redactionMapIn(snapshot.context), "report");
 */
export function redactContext<T>(context: T, map: RedactionMap | undefined, scope: RedactionScope): T {
  if (!map || !isPlainObject(context)) return context;
  const ctx: Loose = { ...context };
  if (ctx.lastResponse !== undefined) ctx.lastResponse = redactResponse(ctx.lastResponse, map);
  if (isPlainObject(ctx.terminal)) ctx.terminal = { ...ctx.terminal, args: redactCall(ctx.terminal.tool, ctx.terminal.args, map) };
  if (scope === "stored") return ctx as T;
  if (Array.isArray(ctx.messages)) ctx.messages = ctx.messages.map((m) => redactMessage(m, map));
  if (isPlainObject(ctx.steps)) ctx.steps = { ...ctx.steps, completed: redactCalls(ctx.steps.completed, map, "tool") };
  if (isPlainObject(ctx.batch)) {
    const human = ctx.batch.human;
    ctx.batch = {
      ...ctx.batch,
      calls: redactCalls(ctx.batch.calls, map, "tool"),
      ...(Array.isArray(human) ? { human: human.map((r) => redactHumanRequest(r, map)) } : {}),
    };
  }
  if (isPlainObject(ctx.validation) && Array.isArray(ctx.validation.calls)) ctx.validation = { ...ctx.validation, calls: redactCalls(ctx.validation.calls, map, "tool") };
  if (ctx.callCounts !== undefined) ctx.callCounts = redactCallCounts(ctx.callCounts, map);
  return ctx as T;
}

/**
 * Loop-break keys (`tool:canonical-args`) with the arguments masked. The copy is for reading
 * only: its keys no longer hash to the slots they sit in, which no report needs.
 */
function redactCallCounts(trie: unknown, map: RedactionMap): unknown {
  if (!isPlainObject(trie)) return trie;
  if (isPlainObject(trie.slots)) return { slots: Object.fromEntries(Object.entries(trie.slots).map(([k, v]) => [k, redactCallCounts(v, map)])) };
  if (!isPlainObject(trie.counts)) return trie;
  const counts: Record<string, unknown> = {};
  for (const [key, count] of Object.entries(trie.counts)) counts[redactCallKey(key, map)] = count;
  return { counts };
}

function redactCallKey(key: string, map: RedactionMap): string {
  const colon = key.indexOf(":");
  const tool = key.slice(0, colon);
  if (colon < 0 || !Object.hasOwn(map, tool)) return key;
  try {
    return `${tool}:${JSON.stringify(redactCall(tool, JSON.parse(key.slice(colon + 1)) as unknown, map))}`;
  } catch {
    // Not JSON after the colon: not a key this module wrote; nothing of it is shown as args.
    return `${tool}:[redacted]`;
  }
}

/**
 * A fact the workflow machine emits (`tool.start`, `history.message`, `llm.response`, ...) with
 * call arguments masked.
 *
 * @example
 * redactEmitted({ type: "tool.start", tool: "login", args: { password: "x" }, callId: "c1", index: 0 }, map);
 */
export function redactEmitted<T>(event: T, map: RedactionMap | undefined): T {
  if (!map || !isPlainObject(event)) return event;
  if (event.type === "tool.start") return { ...event, args: redactCall(event.tool, event.args, map) } as T;
  if (event.type === "history.message") return { ...event, message: redactMessage(event.message, map) } as T;
  if (event.type === "llm.response") return { ...event, response: redactResponse(event.response, map) } as T;
  return event;
}

/**
 * An event of a run's log (RunEvent) with call arguments masked in the scope. "stored" masks
 * the model responses and the start's seed messages (a replay re-drives from those, a resume
 * never reads them); a decision's edited arguments stay real there, since a run resumed while
 * waiting applies the decision from the log.
 *
 * @example
 * redactRunEvent({ type: "response", iteration: 1, response, usage, now }, map, "stored");
 */
export function redactRunEvent<T>(event: T, map: RedactionMap | undefined, scope: RedactionScope): T {
  if (!map || !isPlainObject(event)) return event;
  switch (event.type) {
    case "response":
      return { ...event, response: redactResponse(event.response, map) } as T;
    case "start": {
      const input = event.input;
      if (!isPlainObject(input) || !Array.isArray(input.messages)) return event;
      return { ...event, input: { ...input, messages: input.messages.map((m) => redactMessage(m, map)) } } as T;
    }
    case "decision": {
      const decision = event.decision;
      if (scope === "stored" || !isPlainObject(decision) || !isPlainObject(decision.args)) return event;
      // The log's decision does not name its tool: every tool's names are masked in it.
      const keys = [...new Set(Object.values(map).flat())];
      return { ...event, decision: { ...decision, args: redactArgs(decision.args, keys) } } as T;
    }
    default:
      return event;
  }
}
