/**
 * A tool's return value in the form the loop commits: the text the model sees and, for a
 * terminal tool, the JSON value `run()` returns. Both come from one JSON.stringify, so a value
 * with no JSON form (BigInt, a cycle, a throwing `toJSON`, a function) is caught here, at the
 * service boundary, instead of inside a machine action or a later `JSON.stringify(snapshot)`.
 */
import { describeError, ToolResultError } from "../core/errors.js";
import { jsonIssue } from "../core/json-value.js";
import { capResult } from "./result-cap.js";

/** What the `executeTool` service reports for one successful call (plain JSON). */
export interface ToolOutput {
  /** The result as the model sees it: strings as they are, anything else as JSON text. */
  content: string;
  /** Terminal tools only: the result's JSON form (what JSON.parse(JSON.stringify(result)) gives). */
  result?: unknown;
  /** The whole text when `content` was cut to `maxResultChars` (src/loop/result-cap.ts): for the caller, never the model. */
  fullContent?: string;
}

/**
 * A tool error as the run recorded it (status and the text the model saw), thrown by a replay
 * in place of the tool: committed as it was, not re-described.
 */
export class RecordedToolError extends Error {
  constructor(
    readonly status: "error" | "resolution",
    readonly content: string,
  ) {
    super(content);
    this.name = "RecordedToolError";
  }
}

/**
 * @example
 * toolOutput("lookup", { id: 7 }, false); // { content: '{"id":7}' }
 * toolOutput("answer", "done", true);     // { content: "done", result: "done" }
 * toolOutput("lookup", 1n, false);        // throws ToolResultError
 */
export function toolOutput(tool: string, result: unknown, terminal: boolean): ToolOutput {
  if (typeof result === "string") return terminal ? { content: result, result } : { content: result };
  if (result === undefined) return { content: "" };
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch (error) {
    throw new ToolResultError(tool, describeError(error), terminal, { cause: error });
  }
  if (json === undefined) throw new ToolResultError(tool, `a ${typeof result} has no JSON form`, terminal);
  if (!terminal) return { content: json };
  const value: unknown = JSON.parse(json);
  // The terminal value lives on in the context: it must survive the next JSON.stringify too.
  const problem = jsonIssue(value);
  if (problem) throw new ToolResultError(tool, problem, terminal);
  return { content: json, result: value };
}

/**
 * A tool output with what the model sees cut to `maxChars` (when given and exceeded); the
 * whole text moves to `fullContent` and a terminal tool's `result` stays whole.
 *
 * @example
 * capToolOutput({ content: "abcdef" }, 4); // { content: "abcd… [truncated 2 of 6 chars]", fullContent: "abcdef" }
 */
export function capToolOutput<T extends ToolOutput>(output: T, maxChars: number | undefined): T {
  const capped = capResult(output.content, maxChars);
  if (!capped.truncated) return output;
  return { ...output, content: capped.content, fullContent: output.content };
}
