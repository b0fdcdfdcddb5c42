/** WorkflowState (src/loop/state-name.ts), the names code compares snapshots with, held to the machine's own state nodes. */
import { describe, expect, it } from "vitest";
import { workflowMachine } from "../../machines/workflow.machine.js";
import { PERSISTABLE_STATES } from "../../src/persistence/snapshot-schema.js";
import { WorkflowState } from "../../src/loop/state-name.js";

describe("WorkflowState", () => {
  it("names a state node of the workflow machine, each", () => {
    for (const name of Object.values(WorkflowState)) expect(workflowMachine.getStateNodeById(`workflow.${name}`).path.join("."), name).toBe(name);
  });

  it("has every top-level state, and every state a snapshot can persist", () => {
    expect(Object.keys(workflowMachine.root.states).sort()).toEqual(Object.values(WorkflowState).filter((n) => !n.includes(".")).sort());
    for (const state of PERSISTABLE_STATES) expect(Object.values(WorkflowState)).toContain(state);
  });
});
