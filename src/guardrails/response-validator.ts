/**
 * Checkpoint 1 of the loop (seed 000, 3c): is this response a usable batch of tool calls?
 * Text is rescued into calls when possible, else answered with a user-channel retry nudge.
 * Calls must name a known tool and carry object args that pass the tool's schema; one bad call
 * blocks the whole batch (the others get `[Skipped]`). Stateless: the same function serves the
 * workflow machine (and so the Guardrails facade) and the proxy.
 */
import { InvalidArgumentError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { setOwn } from "../core/set-own.js";
import type { LLMResponse, ToolCall } from "../core/llm.js";
import type { AnyToolDef } from "../core/tool.js";
import { extractToolCalls } from "../parsing/index.js";
import { batchSkippedMessage, invalidArgsMessage, nonObjectArgsMessage, retryNudge, unknownToolMessage, type Nudge } from "./nudges.js";

/** A call that passed validation: `args` is the schema's parsed value (defaults applied). */
export type ValidatedCall = { tool: string; args: Record<string, unknown>; id?: string; reasoning?: string };

export type CallRejection = {
  index: number;
  tool: string;
  kind: "unknown_tool" | "invalid_args" | "batch_skipped";
  message: string;
};

/**
 * `text` is the prose the model wrote beside its calls (markup cut out), when there was any:
 * a caller that shows the model's words must not lose "Let me check." to a rescue.
 * `rescueFormat`: the family rescued calls were written in ("client" when the client recovered
 * them and did not say which).
 */
export type ValidationResult =
  | { kind: "calls"; calls: ValidatedCall[]; rescued: boolean; rescueFormat?: string; text?: string }
  | { kind: "retry"; nudge: Nudge; raw: string }
  | { kind: "rejected"; calls: ToolCall[]; rejections: CallRejection[]; rescued: boolean; rescueFormat?: string; text?: string };

/** Tool definitions (schema-checked) or bare names (only the object shape is checked). */
export type ValidatorTools = Readonly<Record<string, AnyToolDef>> | readonly string[];

export interface ValidateOptions {
  tools: ValidatorTools;
  /** Try to parse calls out of text replies before nudging. Default true. */
  rescueEnabled?: boolean;
}

/**
 * The names of a tool set, in declaration order.
 *
 * @example
 * toolNamesOf(["a", "b"]); // ["a", "b"]
 */
export function toolNamesOf(tools: ValidatorTools): string[] {
  return isToolNameList(tools) ? [...tools] : Object.keys(tools);
}

function isToolNameList(tools: ValidatorTools): tools is readonly string[] {
  return Array.isArray(tools);
}

/**
 * The definitions of a tool set: none when only names were given.
 *
 * @example
 * toolDefinitions(["a"]); // {}
 */
export function toolDefinitions(tools: ValidatorTools): Readonly<Record<string, AnyToolDef>> {
  return isToolNameList(tools) ? {} : tools;
}

/**
 * Fail fast on a malformed tool set (constructor-time check for the stateful wrappers).
 *
 * @example
 * assertValidatorTools(["get_weather"]); // ok
 * assertValidatorTools([""]);            // throws InvalidArgumentError
 */
export function assertValidatorTools(tools: unknown): asserts tools is ValidatorTools {
  if (Array.isArray(tools)) {
    const bad = tools.filter((t) => typeof t !== "string" || t.length === 0);
    if (bad.length > 0) throw new InvalidArgumentError("tools", `tool names must be non-empty strings, got ${JSON.stringify(bad)}`);
    return;
  }
  if (!isPlainObject(tools)) throw new InvalidArgumentError("tools", "must be a record of tool definitions or an array of tool names");
  for (const [key, tool] of Object.entries(tools)) {
    if (!isPlainObject(tool) || typeof tool.validateArgs !== "function") {
      throw new InvalidArgumentError("tools", `tools.${key} is not a tool definition (use defineTool)`);
    }
  }
}

/** Args as an object: a JSON string holding an object is accepted as that object. */
function argsObject(args: unknown): Record<string, unknown> | undefined {
  if (isPlainObject(args)) return args;
  if (typeof args !== "string") return undefined;
  try {
    const parsed: unknown = JSON.parse(args);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    // Not JSON at all: reported to the model as non-object args, which is the failure it must fix.
    return undefined;
  }
}

type CallVerdict = { ok: true; call: ValidatedCall } | { ok: false; kind: "unknown_tool" | "invalid_args"; message: string };

function validateCall(call: ToolCall, tools: ValidatorTools, names: readonly string[]): CallVerdict {
  if (!names.includes(call.tool)) return { ok: false, kind: "unknown_tool", message: unknownToolMessage(call.tool, names) };
  const args = argsObject(call.args);
  if (!args) return { ok: false, kind: "invalid_args", message: nonObjectArgsMessage(call.tool, call.args) };
  let value = args;
  if (!isToolNameList(tools)) {
    const checked = (tools[call.tool] as AnyToolDef).validateArgs(args);
    if (!checked.ok) return { ok: false, kind: "invalid_args", message: invalidArgsMessage(call.tool, checked.issues) };
    value = checked.value as Record<string, unknown>;
  }
  const validated: ValidatedCall = { tool: call.tool, args: value };
  if (call.id !== undefined) validated.id = call.id;
  if (call.reasoning !== undefined) validated.reasoning = call.reasoning;
  return { ok: true, call: validated };
}

/** Tool name → parameters JSON Schema, so rescue can type values a format carries as text. */
function schemasOf(tools: ValidatorTools): Record<string, unknown> | undefined {
  if (isToolNameList(tools)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) setOwn(out, name, tool.spec.parameters);
  return out;
}

/**
 * Validate one model response.
 *
 * @example
 * validateResponse({ type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: "Paris" } }] },
 *   { tools: { get_weather: weather } });
 * // { kind: "calls", calls: [{ tool: "get_weather", args: { city: "Paris" } }], rescued: false }
 */
export function validateResponse(response: LLMResponse, options: ValidateOptions): ValidationResult {
  const { tools, rescueEnabled = true } = options;
  const names = toolNamesOf(tools);
  let calls: ToolCall[];
  let rescued = false;
  let format: string | undefined;
  let text: string | undefined;
  if (response.type === "text") {
    // Calls to unknown tools count as attempted calls: they get the same unknown-tool answer
    // as a native call to one, whatever format the model wrote them in.
    const extracted = rescueEnabled ? extractToolCalls(response.content, names, schemasOf(tools), { attempted: true }) : undefined;
    calls = extracted?.toolCalls ?? [];
    if (calls.length === 0) return { kind: "retry", nudge: retryNudge(response.content, names), raw: response.content };
    rescued = true;
    format = extracted?.format;
    text = extracted?.content;
  } else {
    calls = response.toolCalls;
    // A client that recovered the calls from text itself says so; it is still a rescue.
    rescued = response.rescued === true;
    if (rescued) format = response.rescueFormat ?? "client";
    text = response.content;
    if (calls.length === 0) return { kind: "retry", nudge: retryNudge("", names), raw: "" };
  }
  const beside = { ...(format !== undefined ? { rescueFormat: format } : {}), ...(text !== undefined && text.trim() !== "" ? { text } : {}) };
  if (response.reasoning !== undefined) {
    calls = calls.map((c) => (c.reasoning === undefined ? { ...c, reasoning: response.reasoning } : c));
  }

  const verdicts = calls.map((call) => validateCall(call, tools, names));
  if (verdicts.every((v) => v.ok)) {
    return { kind: "calls", calls: verdicts.map((v) => (v as Extract<CallVerdict, { ok: true }>).call), rescued, ...beside };
  }
  const rejections = verdicts.map((v, index): CallRejection => {
    const tool = (calls[index] as ToolCall).tool;
    return v.ok
      ? { index, tool, kind: "batch_skipped", message: batchSkippedMessage(tool) }
      : { index, tool, kind: v.kind, message: v.message };
  });
  return { kind: "rejected", calls, rejections, rescued, ...beside };
}

/**
 * Which budget a rejected batch draws on: an unknown tool is a formatting failure (retries);
 * a known tool with bad arguments is a failed tool call (tool errors).
 *
 * @example
 * rejectionBudget([{ index: 0, tool: "x", kind: "unknown_tool", message: "" }]); // "retries"
 */
export function rejectionBudget(rejections: readonly CallRejection[]): "retries" | "toolErrors" {
  return rejections.some((r) => r.kind === "unknown_tool") ? "retries" : "toolErrors";
}
