/**
 * Guardrail interventions as span events, from the facts the workflow machine emits
 * (src/loop/facts.ts): a rescue, a nudge of each kind, a compaction, a wait for a person. Pure:
 * the run's trace puts them on the run span with the state the step ended in; the machine
 * knows nothing of tracing.
 */
import type { Attributes } from "@opentelemetry/api";
import type { WorkflowFact } from "../loop/facts.js";
import { Forge } from "./tracer.js";

/** One span event to add. */
export interface InterventionEvent {
  name: string;
  attributes: Attributes;
}

/**
 * The span event for one fact, if it is an intervention; `state`: the state its step ended in.
 *
 * @example
 * interventionOf({ type: "guardrail.rescue", iteration: 2, format: "hermes" }, "executingTools.running");
 * // { name: "forge.rescue", attributes: { "forge.state": "executingTools.running", "forge.iteration": 2, "forge.rescue.format": "hermes" } }
 */
export function interventionOf(fact: WorkflowFact, state: string): InterventionEvent | undefined {
  const at = (iteration: number): Attributes => ({ [Forge.state]: state, [Forge.iteration]: iteration });
  switch (fact.type) {
    case "guardrail.rescue":
      return { name: Forge.events.rescue, attributes: { ...at(fact.iteration), [Forge.rescueFormat]: fact.format } };
    case "guardrail.nudge":
      switch (fact.kind) {
        case "retry":
          return { name: Forge.events.retryNudge, attributes: { ...at(fact.iteration), [Forge.nudgeReason]: fact.reason } };
        case "step":
          return { name: Forge.events.stepNudge, attributes: { ...at(fact.iteration), [Forge.nudgeReason]: fact.reason } };
        case "prerequisite":
          return { name: Forge.events.prerequisiteBlock, attributes: { ...at(fact.iteration), [Forge.prerequisiteTools]: fact.tools } };
        case "loop_break":
          return { name: Forge.events.loopBreak, attributes: { ...at(fact.iteration), [Forge.loopBreakTools]: fact.tools } };
      }
      return undefined;
    case "context.compacted": {
      const { iteration, event: c } = fact;
      return { name: Forge.events.compaction, attributes: { ...at(iteration), [Forge.compactionPhase]: c.phaseReached, [Forge.tokensBefore]: c.tokensBefore, [Forge.tokensAfter]: c.tokensAfter } };
    }
    case "human.wait":
      return { name: Forge.events.humanWait, attributes: { ...at(fact.iteration), [Forge.humanRequests]: fact.requests, [Forge.humanTools]: fact.tools } };
    default:
      return undefined;
  }
}
