/**
 * The mistakes the simulated model makes, each a pure function of (correct step, view, rng).
 * `applicableMistakes` says which make sense this turn; `injectMistake` produces one.
 */
import { isPlainObject } from "../core/json-value.js";
import { assignOwn, setOwn } from "../core/set-own.js";
import type { JSONSchema, Prerequisite, ToolSpec } from "../core/tool.js";
import type { Workflow } from "../core/workflow.js";
import { renderToolCalls, RESCUE_FORMATS, supportsParallel, type RescueFormat } from "../parsing/index.js";
import { MISTAKE_KINDS, type FaultKind } from "./fault-profiles.js";
import { createPrng, type Prng } from "./prng.js";
import { lastSuccess, type OracleView } from "./simulated-view.js";

export type PlannedCall = { tool: string; args: unknown };
/** What the model will say this turn, before it becomes an LLMResponse. */
export type Utterance = { kind: "calls"; calls: PlannedCall[] } | { kind: "text"; text: string };
export type Mistake = Exclude<FaultKind, "reasoning">;

export interface FaultContext {
  correct: Utterance;
  view: OracleView;
  tools: readonly ToolSpec[];
  workflow?: Workflow | undefined;
  formats?: readonly RescueFormat[] | undefined;
  /**
   * The request forced a tool call (tool_choice "required" or a named function): as on a
   * grammar-constrained backend the answer is a native call, so no mistake that is text.
   */
  forced?: boolean | undefined;
}

/**
 * Prose never spells a real tool name (it could be rescued as a call).
 *
 * @example
 * humanize("get_public_pricing"); // "get public pricing"
 */
export function humanize(tool: string): string {
  return tool.replace(/[_.-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().trim();
}

function specOf(tools: readonly ToolSpec[], name: string): ToolSpec | undefined {
  return tools.find((t) => t.name === name);
}

function properties(spec: ToolSpec | undefined): Record<string, JSONSchema> {
  const props = spec?.parameters.properties;
  return isPlainObject(props) ? (props as Record<string, JSONSchema>) : {};
}

function requiredOf(spec: ToolSpec | undefined): string[] {
  const req = spec?.parameters.required;
  return Array.isArray(req) ? req.filter((r): r is string => typeof r === "string") : [];
}

function successes(view: OracleView) {
  return view.results.filter((r) => !r.isError);
}

/** Is `prereq` met for a call with `args`, given the successful results so far? */
function prerequisiteMet(p: Prerequisite, args: Record<string, unknown>, view: OracleView): boolean {
  const tool = typeof p === "string" ? p : p.tool;
  const wanted = typeof p === "string" ? {} : (p.args ?? {});
  return successes(view).some(
    (r) =>
      r.tool === tool &&
      Object.entries(wanted).every(([key, value]) => {
        const expected = typeof value === "string" && value.startsWith("$") ? args[value.slice(1)] : value;
        return JSON.stringify(r.args[key]) === JSON.stringify(expected);
      }),
  );
}

/** Values the model might reuse when it improvises a call: args of earlier and correct calls. */
function borrowable(ctx: FaultContext): Record<string, unknown> {
  const pool: Record<string, unknown> = {};
  for (const r of ctx.view.results) assignOwn(pool, r.args);
  if (ctx.correct.kind === "calls") for (const c of ctx.correct.calls) if (isPlainObject(c.args)) assignOwn(pool, c.args);
  delete pool._invalid_arguments;
  return pool;
}

function typeOf(schema: JSONSchema): string | undefined {
  return typeof schema.type === "string" ? schema.type : undefined;
}

function fits(value: unknown, schema: JSONSchema): boolean {
  if (Array.isArray(schema.enum)) return schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value));
  switch (typeOf(schema)) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    default:
      return value !== undefined;
  }
}

/**
 * Schema-valid-looking args for a tool the model was not supposed to call yet: values it has
 * seen for the same field names, else placeholders of the right type.
 *
 * @example
 * improviseArgs(submitQuoteSpec, { part_number: "PN-4471" }, rng); // { part_number: "PN-4471", supplier: "unknown", ... }
 */
export function improviseArgs(spec: ToolSpec | undefined, pool: Record<string, unknown>, rng: Prng): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const props = properties(spec);
  const required = new Set(requiredOf(spec));
  for (const [key, schema] of Object.entries(props)) {
    // Own keys only: a property named "constructor" must not borrow Object.prototype's.
    if (Object.hasOwn(pool, key) && fits(pool[key], schema)) setOwn(args, key, pool[key]);
    else if (required.has(key)) setOwn(args, key, placeholder(schema, rng));
  }
  return args;
}

/** A value of the property's type (or one of its enum values) when nothing seen fits. */
function placeholder(schema: JSONSchema, rng: Prng): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return rng.pick(schema.enum);
  if (typeOf(schema) === "integer") return 1 + rng.int(100);
  if (typeOf(schema) === "number") return Math.round(rng.next() * 10000) / 100;
  if (typeOf(schema) === "boolean") return rng.chance(0.5);
  if (typeOf(schema) === "array") return [];
  if (typeOf(schema) === "object") return {};
  return "unknown";
}

function nearMissNames(tool: string, taken: readonly string[]): string[] {
  const camel = tool.replace(/[_-]([a-z0-9])/g, (_, ch: string) => ch.toUpperCase());
  const parts = tool.split(/[_-]/);
  const swapped = parts[0] === "get" ? ["fetch", ...parts.slice(1)].join("_") : ["get", ...parts].join("_");
  const shortened = parts.length > 1 ? parts.slice(1).join("_") : `${tool}_tool`;
  const plural = tool.endsWith("s") ? tool.slice(0, -1) : `${tool}s`;
  return [...new Set([camel, swapped, shortened, plural])].filter((n) => n !== tool && !taken.includes(n));
}

/** [callIndex, mutated args] options that make a call fail its schema. */
function invalidArgsOptions(ctx: FaultContext): { index: number; args: Record<string, unknown> }[] {
  if (ctx.correct.kind !== "calls") return [];
  const out: { index: number; args: Record<string, unknown> }[] = [];
  ctx.correct.calls.forEach((call, index) => {
    if (!isPlainObject(call.args)) return;
    const spec = specOf(ctx.tools, call.tool);
    for (const field of requiredOf(spec)) {
      if (field in call.args) {
        const { [field]: _dropped, ...rest } = call.args;
        out.push({ index, args: rest });
      }
    }
    for (const [field, schema] of Object.entries(properties(spec))) {
      if (!(field in call.args)) continue;
      const t = typeOf(schema);
      const wrong = t === "string" ? 12345 : t === "number" || t === "integer" ? "N/A" : t === "boolean" ? "yes" : undefined;
      if (wrong !== undefined) out.push({ index, args: { ...call.args, [field]: wrong } });
    }
  });
  return out;
}

/** Formats that can carry this turn's calls (some carry one call per output). */
function rescueFormats(ctx: FaultContext): readonly RescueFormat[] {
  const all = ctx.formats ?? RESCUE_FORMATS;
  return ctx.correct.kind === "calls" && ctx.correct.calls.length > 1 ? all.filter(supportsParallel) : all;
}

function pendingRequired(ctx: FaultContext): string[] {
  const done = new Set(successes(ctx.view).map((r) => r.tool));
  return (ctx.workflow?.requiredSteps ?? []).filter((s) => !done.has(s));
}

/** Calls whose prerequisites are unmet; improvised with a fixed PRNG so the set is stable. */
function prerequisiteTargets(ctx: FaultContext): PlannedCall[] {
  const rng = createPrng(0);
  if (!ctx.workflow || ctx.correct.kind !== "calls") return [];
  const correctTools = new Set(ctx.correct.calls.map((c) => c.tool));
  const pool = borrowable(ctx);
  const out: PlannedCall[] = [];
  for (const name of ctx.view.toolNames) {
    const tool = ctx.workflow.tools[name];
    if (!tool || tool.prerequisites.length === 0 || correctTools.has(name)) continue;
    const args = improviseArgs(specOf(ctx.tools, name), pool, rng);
    if (!tool.prerequisites.every((p) => prerequisiteMet(p, args, ctx.view))) out.push({ tool: name, args });
  }
  return out;
}

function repeatTarget(ctx: FaultContext): PlannedCall | undefined {
  const last = lastSuccess(ctx.view);
  if (!last || ctx.correct.kind !== "calls" || ctx.workflow?.isTerminal(last.tool)) return undefined;
  const same = ctx.correct.calls.some((c) => c.tool === last.tool && JSON.stringify(c.args) === JSON.stringify(last.args));
  return same || "_invalid_arguments" in last.args ? undefined : { tool: last.tool, args: last.args };
}

/** Mistakes whose answer is text (prose, or a call written as text): impossible when a call is forced. */
const TEXT_MISTAKES: ReadonlySet<Mistake> = new Set(["bare_text", "rescue_format"]);

/**
 * The mistakes that make sense this turn (none when the correct answer is text; none that is
 * text when the request forces a tool call).
 *
 * @example
 * applicableMistakes(ctx); // e.g. ["bare_text", "rescue_format", "invalid_args", ...]
 */
export function applicableMistakes(ctx: FaultContext): Mistake[] {
  if (ctx.correct.kind === "text") return [];
  const calls = ctx.correct.calls;
  const terminalNow = calls.some((c) => ctx.workflow?.isTerminal(c.tool));
  const terminalOffered = ctx.workflow?.terminalTools.some((t) => ctx.view.toolNames.includes(t)) ?? false;
  const checks: Record<Mistake, () => boolean> = {
    bare_text: () => true,
    rescue_format: () => calls.every((c) => isPlainObject(c.args)) && rescueFormats(ctx).length > 0,
    unknown_tool: () => nearMissNames(calls[0]!.tool, ctx.view.toolNames).length > 0,
    premature_terminal: () => !terminalNow && terminalOffered && pendingRequired(ctx).length > 0,
    prerequisite_violation: () => prerequisiteTargets(ctx).length > 0,
    non_object_args: () => true,
    invalid_args: () => invalidArgsOptions(ctx).length > 0,
    repeat_call: () => repeatTarget(ctx) !== undefined,
  };
  return MISTAKE_KINDS.filter((k) => !(ctx.forced && TEXT_MISTAKES.has(k)) && checks[k]());
}

/**
 * What a model forced to call a tool says instead of prose: a call carrying the text in the
 * tool's first string parameter (its other required fields improvised). The tool is the named
 * one, else the workflow's terminal tool, else the first tool offered.
 *
 * @example
 * forcedCall("Paris is sunny.", { tools, workflow }); // { tool: "respond", args: { answer: "Paris is sunny." } }
 */
export function forcedCall(text: string, ctx: { tools: readonly ToolSpec[]; workflow?: Workflow | undefined; named?: string | undefined }): PlannedCall {
  const offered = ctx.tools.map((t) => t.name);
  const name = ctx.named ?? ctx.workflow?.terminalTools.find((t) => offered.includes(t)) ?? offered[0];
  const spec = name === undefined ? undefined : specOf(ctx.tools, name);
  if (!spec) throw new Error(`forcedCall: no tool to force among [${offered.join(", ")}]`);
  const field = Object.entries(properties(spec)).find(([, schema]) => typeOf(schema) === "string")?.[0];
  // A fixed PRNG: the improvised fields do not depend on (or shift) the turn's own draws.
  return { tool: spec.name, args: improviseArgs(spec, field === undefined ? {} : { [field]: text }, createPrng(0)) };
}

const PROSE_BEFORE = [
  "I'll start with the {action} step.",
  "Let me do the {action} step before preparing anything else.",
  "Okay — first I need the {action} information.",
  "Sure, I can help with that. The next step is {action}.",
];
const RESCUE_LEADS = ["", "", "Here is the tool call:\n", "I will call the tool now.\n\n"];

/**
 * Produce the wrong utterance for `kind` (which must be applicable).
 *
 * @example
 * injectMistake("bare_text", ctx, rng); // { kind: "text", text: "I'll lookup part first." }
 */
export function injectMistake(kind: Mistake, ctx: FaultContext, rng: Prng): Utterance {
  if (ctx.correct.kind !== "calls") throw new Error(`cannot inject ${kind} into a text answer`);
  const calls = ctx.correct.calls;
  const first = calls[0]!;
  const replaceFirst = (call: PlannedCall): Utterance => ({ kind: "calls", calls: [call, ...calls.slice(1)] });
  switch (kind) {
    case "bare_text":
      return { kind: "text", text: rng.pick(PROSE_BEFORE).replace("{action}", humanize(first.tool)) };
    case "rescue_format": {
      const format = rng.pick(rescueFormats(ctx));
      const rendered = renderToolCalls(calls.map((c) => ({ tool: c.tool, args: c.args as Record<string, unknown> })), format);
      return { kind: "text", text: rng.pick(RESCUE_LEADS) + rendered };
    }
    case "unknown_tool":
      return replaceFirst({ tool: rng.pick(nearMissNames(first.tool, ctx.view.toolNames)), args: first.args });
    case "premature_terminal": {
      const terminal = rng.pick(ctx.workflow!.terminalTools.filter((t) => ctx.view.toolNames.includes(t)));
      return { kind: "calls", calls: [{ tool: terminal, args: improviseArgs(specOf(ctx.tools, terminal), borrowable(ctx), rng) }] };
    }
    case "prerequisite_violation":
      return { kind: "calls", calls: [rng.pick(prerequisiteTargets(ctx))] };
    case "non_object_args": {
      const args = isPlainObject(first.args) ? first.args : {};
      const asString = Object.entries(args).map(([k, v]) => `${k}=${String(v)}`).join(", ");
      return replaceFirst({ tool: first.tool, args: rng.chance(0.5) ? Object.values(args) : asString });
    }
    case "invalid_args": {
      const option = rng.pick(invalidArgsOptions(ctx));
      return { kind: "calls", calls: calls.map((c, i) => (i === option.index ? { tool: c.tool, args: option.args } : c)) };
    }
    case "repeat_call":
      return { kind: "calls", calls: [repeatTarget(ctx)!] };
  }
}

/**
 * A short chain-of-thought in the voice of a small model, about the step it means to take.
 *
 * @example
 * reasoningFor({ kind: "calls", calls: [{ tool: "lookup_part", args: {} }] }, view, rng); // "... Next I need to lookup part."
 */
export function reasoningFor(utterance: Utterance, view: OracleView, rng: Prng): string {
  const opener = rng.pick(["The user wants", "The request is about", "I am asked about"]);
  const subject = view.userInput.length > 80 ? `${view.userInput.slice(0, 77)}...` : view.userInput;
  if (utterance.kind === "text") return `${opener}: "${subject}". I should answer directly.`;
  const names = utterance.calls.map((c) => humanize(c.tool)).join(" and ");
  const done = view.results.filter((r) => !r.isError).length;
  return `${opener}: "${subject}". ${done} result(s) so far. Next I need to ${names}.`;
}
