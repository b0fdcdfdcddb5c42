/**
 * The first checks on a caller's body, shared by every dialect: JSON that parses, is an
 * object, is not absurdly nested, and matches the dialect's zod schema — each failure a 400
 * naming the field, never a crash.
 */
import type { z } from "zod";
import { readToolArguments } from "../clients/tool-args.js";
import { tooDeepPath } from "../core/json-value.js";
import { HttpError } from "../proxy-request/http-error.js";
import { partText } from "./content-parts.js";

/** Deeper than any real request (tool schemas included); deeper input is an attack or a bug. */
export const MAX_JSON_DEPTH = 64;

/** Path segments a depth refusal shows: enough to name the field, not the 10,000 levels under it. */
const SHOWN_KEYS = 12;

/** The one wording of a depth refusal, for the body and for JSON inside its string fields. */
function tooDeep(where: string): HttpError {
  return new HttpError(400, "invalid_request_error", `${where}: nested deeper than ${MAX_JSON_DEPTH} levels`);
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
  const deep = tooDeepPath(value, MAX_JSON_DEPTH, SHOWN_KEYS);
  if (deep !== undefined) throw tooDeep(deep);
  return value as Record<string, unknown>;
}

/**
 * A tool call's arguments as a caller sends them in its history: a JSON string (decoded once,
 * as the backend clients decode theirs: tool-args.ts) or a value already in the body (bounded
 * by parseJsonObject). JSON in the string nested deeper than MAX_JSON_DEPTH is the caller's 400
 * naming the field, before anything renders it (the context-window check's JSON.stringify
 * would overflow the stack on it).
 *
 * @example
 * decodeArgumentsField('{"city":"Oslo"}', "messages[1].tool_calls[0].function.arguments"); // { city: "Oslo" }
 */
export function decodeArgumentsField(raw: unknown, where: string): unknown {
  const { value, tooDeep: deep } = readToolArguments(raw, MAX_JSON_DEPTH);
  if (deep) throw tooDeep(where);
  return value;
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
