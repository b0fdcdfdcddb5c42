/**
 * Structured output as a guardrail: when the caller asked for JSON (`response_format`
 * json_object / json_schema), the model's final answer must be that JSON. Small models wrap it
 * in prose or fences, stop half way, or miss fields; this reads the JSON out of the answer,
 * checks it against the schema, and says exactly what failed so the model can be nudged. Pure.
 */
import { splitReasoning } from "../parsing/think.js";
import { JsonScanner, decodeJsonSpan, tryParseJson } from "../parsing/json-scan.js";
import type { ArgIssue, JSONSchema } from "../core/tool.js";

/** What the caller asked the answer to be. */
export type OutputFormat =
  | { kind: "json_object" }
  | { kind: "json_schema"; name: string; schema: JSONSchema; strict: boolean };

export type StructuredCheck =
  | { ok: true; json: string }
  | { ok: false; issues: string[] };

/** A compiled schema check (ajv via compileJsonSchema, cached by the caller). */
export type SchemaCheck = (value: unknown) => { ok: true } | { ok: false; issues: ArgIssue[] };

const FENCE = /```(?:json|JSON)?[ \t]*\r?\n?([\s\S]*?)```/g;

/**
 * The JSON value an answer holds: the whole answer when it parses, else the first fenced block
 * that does, else the first JSON object or array in the prose. `undefined` when there is none.
 *
 * @example
 * extractJsonAnswer('Sure! ```json\n{"a": 1}\n``` Hope that helps.'); // { value: { a: 1 }, text: '{"a": 1}' }
 */
export function extractJsonAnswer(answer: string): { value: unknown; text: string } | undefined {
  const content = splitReasoning(answer).content.trim();
  const whole = tryParseJson(content);
  if (whole.ok) return { value: whole.value, text: content };
  for (const match of content.matchAll(FENCE)) {
    const inner = match[1]!.trim();
    const parsed = tryParseJson(inner);
    if (parsed.ok) return { value: parsed.value, text: inner };
  }
  const scanner = new JsonScanner(content);
  for (let i = 0; i < content.length; i++) {
    const c = content.charCodeAt(i);
    if (c !== 0x7b && c !== 0x5b) continue;
    const end = scanner.valueEnd(i);
    if (end > 0) return { value: decodeJsonSpan(content, i, end), text: content.slice(i, end) };
  }
  return undefined;
}

/**
 * Judge one final answer against the requested format. On success `json` is the JSON text
 * alone (prose and fences removed), which is what the caller receives.
 *
 * @example
 * checkStructuredOutput('{"a": 1}', { kind: "json_object" }); // { ok: true, json: '{"a": 1}' }
 * checkStructuredOutput("Sure! {\"a\":", { kind: "json_object" }).ok; // false
 */
export function checkStructuredOutput(answer: string, format: OutputFormat, schemaCheck?: SchemaCheck): StructuredCheck {
  const found = extractJsonAnswer(answer);
  if (found === undefined) {
    return { ok: false, issues: [answer.trim() === "" ? "the reply was empty" : "the reply contains no complete JSON value (it is cut off or not JSON)"] };
  }
  const isObject = typeof found.value === "object" && found.value !== null && !Array.isArray(found.value);
  if (format.kind === "json_object" && !isObject) return { ok: false, issues: ["the reply must be a JSON object ({...})"] };
  if (format.kind === "json_schema" && schemaCheck) {
    const checked = schemaCheck(found.value);
    if (!checked.ok) return { ok: false, issues: checked.issues.map((i) => `${i.path === "" ? "(root)" : i.path}: ${i.message}`) };
  }
  return { ok: true, json: found.text };
}
