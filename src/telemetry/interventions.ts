/**
 * Guardrail interventions as span events, derived from two consecutive machine contexts: the
 * machine counts every intervention in `stats` (LoopStats), so what changed between two
 * snapshots is what happened in that step. Pure: the runner feeds it the actor's snapshots and
 * puts the events on the run span; the machine knows nothing of tracing.
 */
import type { Attributes } from "@opentelemetry/api";
import type { WorkflowContext } from "../loop/context.js";
import { pendingRequests } from "../loop/human.js";
import { rescueFormat } from "../parsing/rescue.js";
import { Forge } from "./tracer.js";
import { WorkflowState } from "../loop/state-name.js";

/** One span event to add. */
export interface InterventionEvent {
  name: string;
  attributes: Attributes;
}

/**
 * The events for what the machine did between `prev` (state `prevState`) and `next` (state
 * `state`). Several can come from one step (a rescued batch that is then blocked).
 *
 * @example
 * for (const e of interventionsBetween(before, after, "compacting", "inferring")) span.addEvent(e.name, e.attributes);
 */
export function interventionsBetween(prev: WorkflowContext, next: WorkflowContext, state: string, prevState: string): InterventionEvent[] {
  const base: Attributes = { [Forge.state]: state, [Forge.iteration]: next.iteration };
  const out: InterventionEvent[] = [];
  const grew = (key: "rescues" | "retryNudges" | "stepNudges" | "prereqNudges" | "loopBreaks") => next.stats[key] > prev.stats[key];
  if (grew("rescues")) out.push({ name: Forge.events.rescue, attributes: { ...base, [Forge.rescueFormat]: rescueFormatOf(next) } });
  if (grew("retryNudges")) out.push({ name: Forge.events.retryNudge, attributes: { ...base, [Forge.nudgeReason]: retryReason(next) } });
  if (grew("stepNudges")) out.push({ name: Forge.events.stepNudge, attributes: { ...base, [Forge.nudgeReason]: "premature_terminal" } });
  if (grew("prereqNudges")) out.push({ name: Forge.events.prerequisiteBlock, attributes: { ...base, [Forge.prerequisiteTools]: batchTools(next) } });
  if (grew("loopBreaks")) out.push({ name: Forge.events.loopBreak, attributes: { ...base, [Forge.loopBreakTools]: batchTools(next) } });
  for (const c of next.stats.compactions.slice(prev.stats.compactions.length)) {
    out.push({
      name: Forge.events.compaction,
      attributes: { ...base, [Forge.iteration]: c.iteration, [Forge.compactionPhase]: c.phase, [Forge.tokensBefore]: c.tokensBefore, [Forge.tokensAfter]: c.tokensAfter },
    });
  }
  if (state === WorkflowState.awaitingHuman && prevState !== WorkflowState.awaitingHuman) {
    const pending = pendingRequests(next);
    out.push({ name: Forge.events.humanWait, attributes: { ...base, [Forge.humanRequests]: pending.length, [Forge.humanTools]: pending.map((r) => r.tool) } });
  }
  return out;
}

/**
 * Which format the calls were rescued from: the family of the text the validator rescued, or
 * "client" when the client adapter already recovered them from the backend's text (it reports
 * only that it did).
 */
function rescueFormatOf(ctx: WorkflowContext): string {
  const response = ctx.lastResponse;
  if (response?.type === "text") return rescueFormat(response.content, ctx.run.toolNames) ?? "unknown";
  return response?.type === "tool_calls" && response.rescued ? (response.rescueFormat ?? "client") : "unknown";
}

/** Why the model was nudged to try again: the nudge's kind, or the kinds of the rejected calls. */
function retryReason(ctx: WorkflowContext): string {
  const v = ctx.validation;
  if (v?.kind === "retry") return v.nudge.kind;
  if (v?.kind === "rejected") return [...new Set(v.rejections.map((r) => r.kind))].join(",");
  return "unknown";
}

function batchTools(ctx: WorkflowContext): string[] {
  const v = ctx.validation;
  return v?.kind === "calls" ? [...new Set(v.calls.map((c) => c.tool))] : [];
}
