/** A statechart value as one dotted name: "inferring", "executingTools.running". */
export function stateName(value: unknown): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    const [key, inner] = Object.entries(value)[0] ?? ["", undefined];
    const sub = stateName(inner);
    return sub ? `${key}.${sub}` : key;
  }
  return "";
}

/**
 * The workflow machine's states by name (machines/workflow.machine.ts), as `stateName` gives
 * them: code compares against these, never a string literal, and a test holds them to the
 * machine's own state nodes.
 *
 * @example
 * stateName(snapshot.value) === WorkflowState.awaitingHuman
 */
export const WorkflowState = {
  compacting: "compacting",
  compactingRunning: "compacting.running",
  inferring: "inferring",
  validating: "validating",
  enforcingSteps: "enforcingSteps",
  checkingPrereqs: "checkingPrereqs",
  awaitingHuman: "awaitingHuman",
  executingTools: "executingTools",
  executingToolsRunning: "executingTools.running",
  done: "done",
  failed: "failed",
  cancelled: "cancelled",
} as const;
export type WorkflowStateName = (typeof WorkflowState)[keyof typeof WorkflowState];
