/**
 * The first checks on a caller's body, shared by every dialect: JSON that parses, is an
 * object, is not absurdly nested, and matches the dialect's zod schema — each failure a 400
 * naming the field, never a crash.
 */
import type { z } from "zod";
import { HttpError } from "../proxy-request/http-error.js";
import { partText } from "./content-parts.js";

/** Deeper than any real request (tool schemas included); deeper input is an attack or a bug. */
export const MAX_JSON_DEPTH = 64;

/** Iterative, so hostile nesting cannot overflow the stack. */
function depthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * @example
 * parseJsonObject('{"messages": []}'); // { messages: [] }
 */
export function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new HttpError(400, "invalid_request_error", `Request body is not valid JSON: ${(cause as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "invalid_request_error", "Request body must be a JSON object");
  }
  if (depthExceeds(value, MAX_JSON_DEPTH)) {
    throw new HttpError(400, "invalid_request_error", `Request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  return value as Record<string, unknown>;
}

/** Validate with a zod schema; the first issue becomes the message, path included. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, where = ""): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = `${where}${issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("")}`.replace(/^\./, "");
  throw new HttpError(400, "invalid_request_error", `${path || "body"}: ${issue.message}`);
}

/**
 * Text of a content value that may be a string, null or a list of typed parts: the text parts
 * joined by newlines, media as placeholders, other part types left out (see content-parts.ts).
 *
 * @example
 * textContent([{ type: "text", text: "a" }, { type: "citation" }, { type: "text", text: "b" }], "content"); // "a\nb"
 */
export function textContent(content: unknown, where: string, textType: string | readonly string[] = "text"): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new HttpError(400, "invalid_request_error", `${where}: content must be a string or a list of parts`);
  const types = typeof textType === "string" ? [textType] : textType;
  const texts: string[] = [];
  content.forEach((part: unknown, i) => {
    const text = partText(part, `${where}[${i}]`, types);
    if (text !== undefined) texts.push(text);
  });
  return texts.join("\n");
}
