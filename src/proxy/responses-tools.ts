/**
 * The tools of a Responses API request as the backend can take them. Function tools are flat
 * (`{ type: "function", name, parameters }`, not nested like chat's); a `namespace` tool's
 * functions are offered under one reversible flat name (`crm__lookup`) and their calls get the
 * original name and namespace back in the answer; built-in tools the backend cannot run
 * (`web_search`, `file_search`, `computer_use*`, `mcp`, `custom`, ...) are left out and named,
 * so the caller can be told (`x-forge-dropped-tools`) instead of refused.
 */
import { z } from "zod";
import type { ToolChoice } from "../core/llm.js";
import type { ToolSpec } from "../core/tool.js";
import { HttpError } from "../proxy-request/http-error.js";
import { parseWith } from "./request-body.js";

/** Between a namespace and its tool's name in the flat name the backend sees. */
export const NAMESPACE_SEPARATOR = "__";

/** A flat name's origin, for the tools that came from a namespace. */
export interface NamespacedName {
  name: string;
  namespace: string;
}

export interface ResponsesTools {
  tools: ToolSpec[];
  /** Flat backend name → namespace and name, for namespaced tools only. */
  names: Record<string, NamespacedName>;
  /** What was left out, each as `type` or `type:name` (`web_search`, `custom:apply_patch`). */
  dropped: string[];
}

const anyTool = z.looseObject({ type: z.string() });
const functionTool = z.looseObject({
  type: z.literal("function"),
  name: z.string().min(1).max(128),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});
const namespaceTool = z.looseObject({ type: z.literal("namespace"), name: z.string().min(1), tools: z.array(anyTool) });

/**
 * @example
 * responsesTools([{ type: "function", name: "f" }, { type: "web_search" }]).dropped; // ["web_search"]
 */
export function responsesTools(raw: unknown[]): ResponsesTools {
  const out: ResponsesTools = { tools: [], names: {}, dropped: [] };
  const add = (value: unknown, where: string, namespace?: string) => {
    const fn = parseWith(functionTool, value, where);
    const name = namespace === undefined ? fn.name : flatName(namespace, fn.name);
    if (out.tools.some((t) => t.name === name)) throw new HttpError(400, "invalid_request_error", `${where}.name: more than one tool is called "${name}"`);
    out.tools.push({ name, description: fn.description ?? "", parameters: fn.parameters ?? { type: "object", properties: {} } });
    if (namespace !== undefined) out.names[name] = { name: fn.name, namespace };
  };
  raw.forEach((value, i) => {
    const tool = parseWith(anyTool, value, `tools[${i}]`);
    if (tool.type === "function") return add(tool, `tools[${i}]`);
    if (tool.type !== "namespace") return void out.dropped.push(droppedName(tool));
    const ns = parseWith(namespaceTool, tool, `tools[${i}]`);
    ns.tools.forEach((inner, j) => {
      if (inner.type === "function") add(inner, `tools[${i}].tools[${j}]`, ns.name);
      else out.dropped.push(droppedName({ ...inner, name: flatName(ns.name, typeof inner.name === "string" ? inner.name : inner.type) }));
    });
  });
  return out;
}

/**
 * The name the backend sees for a namespaced function (also for a `function_call` input item
 * that carries a `namespace`).
 *
 * @example
 * flatName("crm", "lookup"); // "crm__lookup"
 */
export function flatName(namespace: string, name: string): string {
  return `${namespace}${NAMESPACE_SEPARATOR}${name}`;
}

function droppedName(tool: { type: string; name?: unknown; server_label?: unknown }): string {
  const name = typeof tool.name === "string" ? tool.name : typeof tool.server_label === "string" ? tool.server_label : undefined;
  return name === undefined ? tool.type : `${tool.type}:${name}`;
}

const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), name: z.string().min(1) }),
  z.looseObject({ type: z.literal("allowed_tools"), mode: z.enum(["auto", "required"]), tools: z.array(z.looseObject({ type: z.string() })) }),
  z.looseObject({ type: z.string() }),
]);

/**
 * `tool_choice` over the backend's tools: a forced function must be on offer; `allowed_tools`
 * narrows the tools to the functions it lists; forcing a built-in the proxy left out is the
 * caller's 400 (it cannot be honoured, and answering without it would hide that).
 *
 * @example
 * responsesToolChoice("required", tools).toolChoice; // "required"
 */
export function responsesToolChoice(value: unknown, offered: ResponsesTools): { toolChoice: ToolChoice | undefined; tools: ToolSpec[] } {
  if (value === undefined || value === null) return { toolChoice: undefined, tools: offered.tools };
  const choice = parseWith(toolChoice, value, "tool_choice");
  if (typeof choice === "string") return { toolChoice: choice, tools: offered.tools };
  const known = (name: string, namespace: unknown) => {
    const flat = typeof namespace === "string" ? flatName(namespace, name) : name;
    if (!offered.tools.some((t) => t.name === flat)) throw new HttpError(400, "invalid_request_error", `tool_choice names "${flat}", which is not a function in tools`);
    return flat;
  };
  if (choice.type === "function" && typeof choice.name === "string") {
    return { toolChoice: { type: "function", function: { name: known(choice.name, choice.namespace) } }, tools: offered.tools };
  }
  if (choice.type === "allowed_tools" && Array.isArray(choice.tools)) {
    const allowed = new Set(choice.tools.filter((t) => t.type === "function" && typeof t.name === "string").map((t) => known(t.name as string, t.namespace)));
    return { toolChoice: choice.mode as "auto" | "required", tools: offered.tools.filter((t) => allowed.has(t.name)) };
  }
  throw new HttpError(400, "invalid_request_error", `tool_choice forces a "${choice.type}" tool, which the backend cannot run (the proxy offers function tools only)`);
}
