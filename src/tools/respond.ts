/**
 * The synthetic `respond` tool (seed 002): small models choose badly between "call a tool"
 * and "answer in text"; giving them a tool for answering keeps every turn a tool call.
 */
import { z } from "zod";
import { defineTool, type ToolDef } from "../core/tool.js";

export const RESPOND_TOOL_NAME = "respond";

const respondParameters = z.object({
  message: z.string().describe("The reply to show the user, in full."),
});

/**
 * A ready-made terminal tool whose result is the message itself.
 *
 * @example
 * const wf = new Workflow({ name: "chat", tools: { search, respond: respondTool() },
 *   terminalTool: "respond" });
 */
export function respondTool(
  options: { name?: string; description?: string } = {},
): ToolDef<z.output<typeof respondParameters>, string> {
  return defineTool({
    name: options.name ?? RESPOND_TOOL_NAME,
    description:
      options.description ??
      "Reply to the user. Use this whenever you want to say something to the user instead of calling another tool.",
    parameters: respondParameters,
    execute: ({ message }) => message,
  });
}
