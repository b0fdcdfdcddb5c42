/**
 * What of an exhausted answer may reach the caller. When retries run out the caller gets the
 * model's last answer — but never a call to a tool the request did not offer (a harness that
 * dispatches with `handlers[name]` would reach `Object.prototype` with `constructor` or
 * `__proto__`, or run a tool the user never gave the model), nor more calls than one answer may
 * carry. Such calls are dropped and counted; an answer left with no call is its text, with a
 * normal stop. Pure.
 */
import type { DroppedCalls, ProxyAnswer } from "./proxy-request.js";

/** Names of dropped calls kept for the `forge` field, at most (each cut to MAX_NAME). */
const MAX_NAMES = 8;
const MAX_NAME = 64;

/**
 * @example
 * handedOn({ type: "tool_calls", calls: [{ id: "c1", name: "rm_rf", args: {} }], content: "Sure." }, ["get_weather"], 64);
 * // { answer: { type: "text", content: "Sure." }, dropped: { unoffered: 1, unofferedNames: ["rm_rf"], overLimit: 0 } }
 */
export function handedOn(answer: ProxyAnswer, offered: readonly string[], maxCalls: number): { answer: ProxyAnswer; dropped?: DroppedCalls } {
  if (answer.type !== "tool_calls") return { answer };
  // A Set, not an object: a model's "__proto__" or "constructor" is just a name that is not in it.
  const names = new Set(offered);
  const known = answer.calls.filter((c) => names.has(c.name));
  const unoffered = answer.calls.filter((c) => !names.has(c.name));
  const kept = known.slice(0, maxCalls);
  const overLimit = known.length - kept.length;
  if (unoffered.length === 0 && overLimit === 0) return { answer };
  const dropped: DroppedCalls = { unoffered: unoffered.length, unofferedNames: [...new Set(unoffered.slice(0, 4 * MAX_NAMES).map((c) => c.name.slice(0, MAX_NAME)))].slice(0, MAX_NAMES), overLimit };
  if (kept.length > 0) return { answer: { ...answer, calls: kept }, dropped };
  const text: ProxyAnswer = { type: "text", content: answer.content ?? "" };
  if (answer.reasoning !== undefined) text.reasoning = answer.reasoning;
  return { answer: text, dropped };
}
