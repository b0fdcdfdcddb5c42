/**
 * A workflow run's end as an MCP tool result: done (the terminal tool's result), waiting for a
 * person (not an error: the run is saved and goes on once decided), or failed or cancelled
 * (`isError`, with the typed error's name, code and message). The run id rides in `_meta` and in the text, so
 * the caller can follow the run with `forge-ts runs show <id>`.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ForgeError, type PendingHumanRequest } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";

/** `_meta` keys of every workflow tool result. */
export const RUN_ID_META = "forge-ts/runId";
export const RUN_STATUS_META = "forge-ts/status";

/** The run's end, in the store's words (a cancelled run is "cancelled" there and here). */
export type RunStatus = "done" | "waiting" | "failed" | "cancelled";

const meta = (runId: string, status: RunStatus) => ({ [RUN_ID_META]: runId, [RUN_STATUS_META]: status });
const runLine = (runId: string, status: RunStatus) => `forge-ts run ${runId}: ${status} (forge-ts runs show ${runId})`;

/** A string holding a JSON object (what tools often return, since the model reads text), parsed. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A finished run: its result as text (JSON when not a string) and, when it is an object (or a
 * string of a JSON object), as `structuredContent` too.
 *
 * @example
 * doneResult("r1", { total: 85 }); // { content: [{ type: "text", text: '{\n  "total": 85\n}' }, ...], structuredContent: { total: 85 }, _meta: {...} }
 */
export function doneResult(runId: string, result: unknown): CallToolResult {
  const text = typeof result === "string" ? result : (JSON.stringify(result, null, 2) ?? "null");
  const structured = isPlainObject(result) ? result : typeof result === "string" ? jsonObject(result) : undefined;
  return {
    content: [
      { type: "text", text },
      { type: "text", text: runLine(runId, "done") },
    ],
    ...(structured ? { structuredContent: structured } : {}),
    _meta: meta(runId, "done"),
  };
}

/**
 * A run that stopped to wait for a person: what it waits for (`lines`, e.g. with the commands
 * that decide it) and, as `structuredContent`, its id and pending requests.
 *
 * @example
 * waitingResult("r1", outcome.requests, [`run r1 is waiting for a person`]);
 */
export function waitingResult(runId: string, requests: readonly PendingHumanRequest[], lines: readonly string[]): CallToolResult {
  const pending = requests.map(({ callId, tool, args, kind, askedAt }) => ({ callId, tool, args, kind, askedAt }));
  return {
    content: [{ type: "text", text: [...lines, runLine(runId, "waiting")].join("\n") }],
    structuredContent: { status: "waiting", runId, requests: pending },
    _meta: meta(runId, "waiting"),
  };
}

/**
 * A run that failed (or could not start) or was cancelled: `isError`, the error as
 * `Name (CODE): message`, and as `structuredContent.error` (a ForgeError's data stays out: it can
 * hold the whole conversation). Status "cancelled" for WorkflowCancelledError, else "failed".
 *
 * @example
 * failedResult("r1", new MaxIterationsError(10, ...)); // { isError: true, content: [{ text: "MaxIterationsError (FORGE_MAX_ITERATIONS): ..." }, ...] }
 */
export function failedResult(runId: string, error: unknown): CallToolResult {
  const name = error instanceof Error ? error.name : "Error";
  const code = ForgeError.isInstance(error) ? error.code : typeof (error as { code?: unknown } | null)?.code === "string" ? (error as { code: string }).code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  const status: RunStatus = code === "FORGE_WORKFLOW_CANCELLED" ? "cancelled" : "failed";
  return {
    isError: true,
    content: [
      { type: "text", text: `${name}${code ? ` (${code})` : ""}: ${message}` },
      { type: "text", text: runLine(runId, status) },
    ],
    structuredContent: { status, runId, error: { name, ...(code ? { code } : {}), message } },
    _meta: meta(runId, status),
  };
}
