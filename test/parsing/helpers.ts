import { rescueToolCall } from "../../src/parsing/index.js";

export const TOOLS = ["get_weather", "get_time", "search", "write_file"] as const;

/** Rescue with the standard tool set and return plain { tool, args, id? } objects. */
export function rescue(text: string, tools: readonly string[] = TOOLS) {
  return rescueToolCall(text, tools);
}
