/** Shared tool definitions for the guardrails tests. */
import { z } from "zod";
import { defineTool } from "../../src/core/tool.js";

export const getWeather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  parameters: z.object({ city: z.string(), unit: z.enum(["C", "F"]).default("C") }),
  execute: ({ city, unit }) => `21${unit} in ${city}`,
});

export const respond = defineTool({
  name: "respond",
  description: "Reply to the user in plain language",
  parameters: z.object({ message: z.string() }),
  execute: ({ message }) => message,
});

export const readFile = defineTool({
  name: "read_file",
  description: "Read a file",
  jsonSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: (args: Record<string, unknown>) => `contents of ${String(args.path)}`,
});

export const editFile = defineTool({
  name: "edit_file",
  description: "Edit a file that was read first",
  parameters: z.object({ path: z.string(), text: z.string() }),
  prerequisites: [{ tool: "read_file", args: { path: "$path" } }],
  execute: ({ path }) => `edited ${path}`,
});

export const tools = { get_weather: getWeather, respond, read_file: readFile, edit_file: editFile };

/** A reply with one call in a fenced JSON block, the most portable rescue format. */
export const fenced = (tool: string, args: Record<string, unknown>): string =>
  "Sure, calling it now.\n```json\n" + JSON.stringify({ tool, args }) + "\n```";
