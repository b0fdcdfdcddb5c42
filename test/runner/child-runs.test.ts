/**
 * Child runs (workflowTool) across interruptions: a call that runs again finds the child it
 * started — finished: answered from the store (result or typed error), never re-run; cancelled
 * with its caller: retried with it, without re-running its recorded tools. `runs show` links
 * the two.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { showMain } from "../../src/cli/runs-show.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { Commit } from "../../src/persistence/run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import { parentLinkOf } from "../../src/runner/child-links.js";
import { contextManager, plannerWorkflow, researchWorkflow, sharedModel, untilAborted, type Effects, type ResearchBehaviour } from "../tools/support/workflow-tool-fixtures.js";

const tempDir = () => mkdtempSync(path.join(tmpdir(), "forge-child-"));

/** Fails the caller's first write of a tool outcome: the run stops with the child finished but its call's outcome not recorded. */
class LosesFirstOutcome extends FileRunStore {
  #lost = false;
  override async commit(commit: Commit): Promise<void> {
    if (!this.#lost && commit.runId === "caller" && commit.events.some((e) => e.type === "outcome")) {
      this.#lost = true;
      throw new Error("disk full");
    }
    return super.commit(commit);
  }
}

async function interruptedAfterChild(behaviour: ResearchBehaviour) {
  const dir = tempDir();
  const effects: Effects = { started: [] };
  const planner = plannerWorkflow(researchWorkflow(effects, behaviour), effects);
  const options = { client: sharedModel(behaviour), contextManager: contextManager(), maxIterations: 4 };
  await expect(new WorkflowRunner({ ...options, store: new LosesFirstOutcome({ dir }) }).run(planner, "plan", { runId: "caller" })).rejects.toMatchObject({ code: "FORGE_STORE" });
  const store = new FileRunStore({ dir });
  expect(await store.latest("caller")).toMatchObject({ state: "executingTools.running", status: "active" });
  return { store, effects, resume: () => new WorkflowRunner({ ...options, store }).resume("caller", planner) };
}

describe("child runs across interruptions", () => {
  it("a call that runs again after its child finished takes the child's result from the store", async () => {
    const { store, effects, resume } = await interruptedAfterChild({});
    expect(await store.latest("caller.1-0")).toMatchObject({ state: "done" });
    await expect(resume()).resolves.toBe('{"summary":"fact 1 about solar"}');
    expect(effects.started).toEqual(["lookup caller.1-0:1:0", "report caller.1-0:2:0", "answer caller:2:0"]);
  });

  it("a call that runs again after its child failed gets the child's typed error from the store", async () => {
    const { store, effects, resume } = await interruptedAfterChild({ runaway: true });
    expect(await store.latest("caller.1-0")).toMatchObject({ state: "failed" });
    await expect(resume()).resolves.toMatch(/^\[ToolError\] research: workflow "research" \(run caller\.1-0\) failed: MaxIterationsError/);
    expect(effects.started.filter((e) => e.startsWith("lookup"))).toHaveLength(3);
  });

  it("cancelling the caller mid-child cancels both; retrying the caller retries the child without re-running its recorded tools", async () => {
    const store = new FileRunStore({ dir: tempDir() });
    const effects: Effects = { started: [] };
    const controller = new AbortController();
    let hang = true;
    // The second lookup runs until its call is cut off — the first time.
    const behaviour: ResearchBehaviour = {
      lookups: 2,
      duringLookup: (signal, n) => {
        if (n !== 2 || !hang) return;
        controller.abort(new Error("user pressed stop"));
        return untilAborted(signal);
      },
    };
    const planner = plannerWorkflow(researchWorkflow(effects, behaviour), effects);
    const runner = () => new WorkflowRunner({ client: sharedModel(behaviour), contextManager: contextManager(), store });

    await expect(runner().run(planner, "plan", { runId: "stop", signal: controller.signal })).rejects.toMatchObject({ code: "FORGE_WORKFLOW_CANCELLED" });
    // Settled together: the child's cancellation is durable when the caller's run settles.
    expect(await store.latest("stop")).toMatchObject({ state: "cancelled" });
    expect(await store.latest("stop.1-0")).toMatchObject({ state: "cancelled" });

    hang = false;
    await expect(runner().retry("stop", planner)).resolves.toBe('{"summary":"fact 1 about solar; fact 2 about solar"}');
    expect(effects.started).toEqual([
      "lookup stop.1-0:1:0",
      "lookup stop.1-0:2:0", // cut off by the cancel: runs again (same key)
      "lookup stop.1-0:2:0",
      "report stop.1-0:3:0",
      "answer stop:2:0",
    ]);
    expect(await store.latest("stop.1-0")).toMatchObject({ state: "done" });
  });

  it("waits for a child's lease left behind by another holder (a killed process) before driving it", async () => {
    const dir = tempDir();
    const store = new FileRunStore({ dir });
    // A holder that never renews: what a process killed while it drove the child leaves behind.
    await new FileRunStore({ dir, leaseMs: 300, autoRenew: false }).lock("held.1-0");
    const effects: Effects = { started: [] };
    const startedAt = Date.now();
    const result = await new WorkflowRunner({ client: sharedModel(), contextManager: contextManager(), store }).run(plannerWorkflow(researchWorkflow(effects), effects), "plan", { runId: "held" });
    expect(result).toBe('{"summary":"fact 1 about solar"}');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
  });

  it("runs show lists a run's children and names a child's parent", async () => {
    const store = new FileRunStore({ dir: tempDir() });
    const effects: Effects = { started: [] };
    await new WorkflowRunner({ client: sharedModel(), contextManager: contextManager(), store }).run(plannerWorkflow(researchWorkflow(effects), effects), "plan", { runId: "shown" });
    // A run merely named like a child is not one.
    await new WorkflowRunner({ client: sharedModel(), contextManager: contextManager(), store }).run(researchWorkflow(effects), "solar", { runId: "shown.9-9" });
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    try {
      await showMain(store, (await store.latest("shown"))!, {}, {});
      await showMain(store, (await store.latest("shown.1-0"))!, {}, {});
      await showMain(store, (await store.latest("shown"))!, { json: true }, {});
    } finally {
      log.mockRestore();
    }
    const callId = parentLinkOf(await store.events("shown.1-0"))?.callId;
    expect(callId).toEqual(expect.any(String));
    expect(lines.join("\n")).toContain(`child run shown.1-0 (research, tool call ${callId}): done, done`);
    expect(lines.join("\n")).not.toContain("shown.9-9");
    expect(lines.join("\n")).toContain(`child of run shown (tool call ${callId})`);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ runId: "shown", children: [{ runId: "shown.1-0", callId, workflow: "research", state: "done" }] });
  });
});
