/**
 * The system-prompt section for prompt-injected mode (backends without native tool calling).
 * It asks for the shape the rescuer reads most reliably: one fenced ```json {"tool","args"}```
 * block per call.
 */
import { InvalidArgumentError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import type { ToolSpec } from "../core/tool.js";

/**
 * List the tools and the calling convention. Same tools in → same text out (schema keys are
 * sorted, so equal schemas built in different key orders render identically).
 *
 * @example
 * const section = buildToolPrompt([weather.spec]);
 * const system = `${workflowPrompt}\n\n${section}`;
 */
export function buildToolPrompt(tools: readonly ToolSpec[]): string {
  if (!Array.isArray(tools)) throw new InvalidArgumentError("tools", "expected an array of ToolSpec");
  if (tools.length === 0) throw new InvalidArgumentError("tools", "at least one tool is needed for a tool prompt");
  const seen = new Set<string>();
  const sections = tools.map((t, i) => {
    if (!isPlainObject(t) || typeof t.name !== "string" || t.name === "") {
      throw new InvalidArgumentError(`tools[${i}]`, "expected { name, description, parameters }");
    }
    if (seen.has(t.name)) throw new InvalidArgumentError(`tools[${i}]`, `duplicate tool name "${t.name}"`);
    seen.add(t.name);
    if (!isPlainObject(t.parameters)) throw new InvalidArgumentError(`tools[${i}].parameters`, "expected a JSON Schema object");
    const description = typeof t.description === "string" && t.description.trim() !== "" ? t.description.trim() : "(no description)";
    return `### ${t.name}\n${description}\nParameters (JSON Schema): ${JSON.stringify(sortKeys(t.parameters))}`;
  });
  const first = tools[0]!.name;
  return [
    "# Tools",
    "You can call the following tools.",
    "",
    sections.join("\n\n"),
    "",
    "# How to call a tool",
    "To call a tool, reply with a fenced JSON block holding exactly one object with the keys",
    '"tool" (the tool name) and "args" (an object matching the tool\'s parameters), for example:',
    "```json",
    JSON.stringify({ tool: first, args: {} }),
    "```",
    "To make several independent calls at once, write one such block per call.",
    "Use only the tool names listed above. Do not describe a call in prose instead of making it.",
  ].join("\n");
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
}
