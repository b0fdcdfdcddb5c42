/**
 * Realistic loop histories for the context tests: a deterministic builder for unit tests and a
 * fast-check arbitrary for properties (system, user_input, then iterations with optional
 * reasoning, a 1–3 call batch with its results, retry and step/prerequisite nudges).
 */
import fc from "fast-check";
import { createMessage, type Message, type MessageType } from "../../src/core/messages.js";

const FILLER = "The quick brown fox jumps over the lazy dog; tool output line with numbers 0123456789. ";

/** Deterministic text of exactly `length` characters starting with `tag`. */
export function text(tag: string, length: number): string {
  if (length <= tag.length) return tag.slice(0, length);
  let s = tag + " ";
  while (s.length < length) s += FILLER;
  return s.slice(0, length);
}

export interface IterationSpec {
  reasoning?: number; // length of a reasoning message, if any
  resultLengths: number[]; // one tool call (and result) per entry
  retry?: boolean; // a text_response + retry_nudge before the call
  stepNudge?: boolean;
  prereqNudge?: boolean;
  userInputBefore?: boolean; // a later human turn starts before this iteration
}

export function head(): Message[] {
  return [
    createMessage("system", "You are a careful assistant. Call tools; finish with answer.", "system_prompt"),
    createMessage("user", "Audit supplier ACME and report.", "user_input"),
  ];
}

export function iterationMessages(step: number, spec: IterationSpec): Message[] {
  const out: Message[] = [];
  const msg = (role: Message["role"], content: string, type: MessageType, extra: Partial<Message> = {}) =>
    createMessage(role, content, type, { ...extra, stepIndex: step });
  if (spec.userInputBefore) out.push(createMessage("user", `Follow-up question before step ${step}`, "user_input"));
  if (spec.retry) {
    out.push(msg("assistant", text(`s${step} bare text`, 120), "text_response"));
    out.push(msg("user", "Respond with a tool call.", "retry_nudge"));
  }
  if (spec.reasoning !== undefined) out.push(msg("assistant", text(`s${step} thinking`, spec.reasoning), "reasoning"));
  const calls = spec.resultLengths.map((_, k) => ({ name: `tool_${k}`, args: { step, k }, callId: `c${step}_${k}` }));
  out.push(msg("assistant", "", "tool_call", { toolCalls: calls }));
  spec.resultLengths.forEach((len, k) => {
    out.push(msg("tool", text(`s${step} result ${k}`, len), "tool_result", { toolName: `tool_${k}`, toolCallId: `c${step}_${k}` }));
  });
  if (spec.stepNudge) out.push(msg("tool", "[StepEnforcementError] call search first", "step_nudge", { toolCallId: `c${step}_0` }));
  if (spec.prereqNudge) out.push(msg("tool", "[PrereqError] needs get_location", "prerequisite_nudge"));
  return out;
}

export function buildHistory(specs: readonly IterationSpec[], firstStep = 0): Message[] {
  const out = head();
  specs.forEach((spec, i) => out.push(...iterationMessages(firstStep + i, spec)));
  return out;
}

export const iterationSpecArb: fc.Arbitrary<IterationSpec> = fc.record(
  {
    reasoning: fc.nat(600),
    resultLengths: fc.array(fc.nat(2000), { minLength: 1, maxLength: 3 }),
    retry: fc.boolean(),
    stepNudge: fc.boolean(),
    prereqNudge: fc.boolean(),
    userInputBefore: fc.constantFrom(false, false, false, false, true),
  },
  { requiredKeys: ["resultLengths"] },
);

export const historyArb: fc.Arbitrary<Message[]> = fc
  .array(iterationSpecArb, { maxLength: 10 })
  .map((specs) => buildHistory(specs));

/** Recursively freezes a value so any mutation throws in strict mode. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
