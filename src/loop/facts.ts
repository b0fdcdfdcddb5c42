/**
 * What the workflow machine emits as it goes: the facts of a run, each named once and dotted
 * like the proxy machine's `guardrail.*`. The runner's one fact handler (src/runner/session.ts)
 * hands them to the run's log, the user's callbacks, the trace and the metrics; nothing
 * re-derives them by comparing snapshots.
 */
import type { LLMResponse, Usage } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { CompactEvent } from "../context/context-manager.js";
import type { ValidationResult } from "../guardrails/response-validator.js";

/** Why the model was sent back: what a `guardrail.nudge` reports. */
export type NudgeFactKind = "retry" | "step" | "prerequisite" | "loop_break";

export type GuardrailFact =
  /** Calls recovered from text the model wrote (or that its client already recovered). */
  | { type: "guardrail.rescue"; iteration: number; format: string }
  /** The batch did not run: the model is answered and asked again. `tools`: the blocked batch's tools. */
  | { type: "guardrail.nudge"; iteration: number; kind: NudgeFactKind; reason: string; tools: string[] };

export type WorkflowFact =
  | GuardrailFact
  /** One message appended to the history. */
  | { type: "history.message"; message: Message }
  /** The model answered (one per model call): what it cost (`usage`), the run's token `totals` after it, and when. */
  | { type: "llm.response"; iteration: number; response: LLMResponse; usage: Usage; totals: Usage; now: number }
  | { type: "context.compacted"; iteration: number; event: CompactEvent }
  | { type: "tool.start"; tool: string; args: Record<string, unknown>; callId: string; index: number }
  /** `result`: a terminal tool's JSON value (what `run()` returns); `now`: when a tool that returned finished. */
  | { type: "tool.outcome"; tool: string; callId: string; status: string; content: string; result?: unknown; fullContent?: string; now?: number }
  /** Calls wait for a person (the batch's requests). */
  | { type: "human.wait"; iteration: number; requests: number; tools: string[] }
  /** The live error of a failed service (the context keeps only its JSON form). */
  | { type: "service.error"; origin: "infer" | "compact"; error: unknown };

/**
 * The rescue a validation reports, if its calls were recovered from text.
 *
 * @example
 * rescueFact({ kind: "calls", calls: [], rescued: true, rescueFormat: "hermes" }, 2); // { type: "guardrail.rescue", iteration: 2, format: "hermes" }
 */
export function rescueFact(validation: ValidationResult | undefined, iteration: number): GuardrailFact[] {
  if (validation === undefined || validation.kind === "retry" || !validation.rescued) return [];
  return [{ type: "guardrail.rescue", iteration, format: validation.rescueFormat ?? "unknown" }];
}

/** Distinct tools of a batch, in first-call order. */
export function batchTools(calls: readonly { tool: string }[]): string[] {
  return [...new Set(calls.map((c) => c.tool))];
}
