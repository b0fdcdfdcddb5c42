/**
 * Which of an Anthropic request's tools the backend is sent. Custom tools (an `input_schema`)
 * go as ordinary tools. Tools without one that carry a `type` (`web_search_*`,
 * `code_execution_*`, `tool_search_tool_*`, `bash_*`, `text_editor_*`, ...) are Anthropic's own:
 * a local model can neither run them nor knows their schema, so they are left out rather than
 * refused. Deferred tools (`defer_loading: true`) are loaded the way Anthropic's API loads
 * them — once a `tool_reference` block in the history names them (Claude Code's ToolSearch
 * answers with one); until then the model is not offered them, which is what keeps Claude
 * Code's `DeferredToolPlaceholder` ("never call this tool") from ever being callable.
 */
import { z } from "zod";
import type { ToolSpec } from "../core/tool.js";
import { HttpError } from "../proxy-request/http-error.js";

export const anthropicTool = z.looseObject({
  name: z.string().min(1).max(128),
  description: z.string().nullish(),
  type: z.string().nullish(),
  input_schema: z.record(z.string(), z.unknown(), "input_schema must be a JSON Schema object").nullish(),
  defer_loading: z.boolean().nullish(),
});
export type AnthropicTool = z.infer<typeof anthropicTool>;

export interface BackendTools {
  /** What the backend is offered, and the calls the proxy accepts. */
  tools: ToolSpec[];
  /** Names the caller sent that the backend is not offered (server tools, unloaded deferred tools). */
  omitted: string[];
}

/**
 * @example
 * backendTools([{ name: "Write", input_schema: { type: "object" } }, { name: "web_search", type: "web_search_20250305" }], new Set());
 * // { tools: [{ name: "Write", description: "", parameters: { type: "object" } }], omitted: ["web_search"] }
 */
export function backendTools(tools: readonly AnthropicTool[], loaded: ReadonlySet<string>): BackendTools {
  const out: BackendTools = { tools: [], omitted: [] };
  tools.forEach((t, i) => {
    if (t.input_schema === undefined || t.input_schema === null) {
      if (t.type === undefined || t.type === null || t.type === "custom") {
        throw new HttpError(400, "invalid_request_error", `tools[${i}].input_schema: custom tools need an input_schema object`);
      }
      out.omitted.push(t.name);
    } else if (t.defer_loading === true && !loaded.has(t.name)) {
      out.omitted.push(t.name);
    } else {
      out.tools.push({ name: t.name, description: t.description ?? "", parameters: t.input_schema });
    }
  });
  return out;
}

/**
 * Tool names the history's `tool_reference` blocks load, wherever they sit (a client tool's
 * `tool_result`, or a server tool search result).
 *
 * @example
 * referencedTools([{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "tool_reference", tool_name: "WebFetch" }] }] }]);
 * // Set { "WebFetch" }
 */
export function referencedTools(messages: readonly { content: unknown }[]): Set<string> {
  const names = new Set<string>();
  // Iterative: the body's depth is bounded already, but a walk should not rely on it.
  const stack: unknown[] = messages.map((m) => m.content);
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...v);
    else if (typeof v === "object" && v !== null) {
      const o = v as { type?: unknown; tool_name?: unknown; content?: unknown; tool_references?: unknown };
      if (o.type === "tool_reference" && typeof o.tool_name === "string") names.add(o.tool_name);
      stack.push(o.content, o.tool_references);
    }
  }
  return names;
}
