/** What an MCP client (and the model behind it) reads about a workflow tool. */
import { promptPlaceholders, type Workflow } from "../core/workflow.js";

// Defined beside the template's renderer (one pattern); re-exported here for forge-ts/mcp.
export { promptPlaceholders };

/**
 * The tool's description: the workflow's own `description` when it has one, else one naming its
 * tools, required steps and terminal tool; then what a call needs and returns.
 *
 * @example
 * workflowDescription(new Workflow({ name: "notes", tools: { remember, reply }, requiredSteps: ["remember"], terminalTool: "reply" }));
 * // 'Runs the forge-ts workflow "notes" on a local model: it works with the tools remember and reply, ...'
 */
export function workflowDescription(workflow: Workflow): string {
  const list = (names: readonly string[]) => (names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`);
  const own = workflow.description.trim();
  const steps = workflow.requiredSteps.length > 0 ? `, must first succeed at ${list(workflow.requiredSteps)}` : "";
  const what =
    own !== ""
      ? own
      : `Runs the forge-ts workflow "${workflow.name}" on a local model: it works with the tools ${list(workflow.toolNames)}${steps}, ` +
        `and ends with ${list(workflow.terminalTools)}, whose result this tool returns.`;
  const vars = promptPlaceholders(workflow);
  const needs = vars.length > 0 ? ` promptVars must give ${list(vars.map((v) => `"${v}"`))}.` : "";
  return `${what} Give the task in plain words as "task".${needs} Each call is a durable run; its id comes back in the result.`;
}
