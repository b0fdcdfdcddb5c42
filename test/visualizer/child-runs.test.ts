/**
 * Child runs (workflowTool) in the visualizer's run list: nested under their parents with the
 * call that started them, for stored runs (the start event's link, the checkpoint's iteration)
 * and for live runs streamed by visualizerInspector (the link travels in the snapshots).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { WorkflowContext } from "../../src/loop/context.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { parentLinkOf } from "../../src/runner/child-links.js";
import { forkRun } from "../../src/runner/fork.js";
import { Feed } from "../../visualizer/feed.js";
import { visualizerInspector } from "../../visualizer/inspector.js";
import type { RunSummary, WireEvent } from "../../visualizer/protocol.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";
import { storedRunDetails } from "../../visualizer/stored-run-details.js";
import { plannerWorkflow, researchWorkflow, runPlanner } from "./support/child-run.js";
import { readableRuns } from "../support/readable-runs.js";

const open: Visualizer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((v) => v.close()));
});

const runsOf = async (url: string) => ((await (await fetch(`${url}/api/runs`)).json()) as { runs: RunSummary[] }).runs;
const line = (r: RunSummary) => ({ runId: r.runId, depth: r.depth, parent: r.parent, iteration: r.iteration, live: r.live, stored: r.stored, status: r.status });

describe("child runs in the run list", () => {
  it("stored: the child is listed under its parent with the call that started it, each run with its checkpoint's iteration", async () => {
    const store = new MemoryRunStore();
    await runPlanner("older", { store });
    await runPlanner("plan", { store });
    const callId = parentLinkOf(await store.events("plan.1-0"))!.callId;
    expect(callId).toEqual(expect.any(String));
    const viz = createVisualizer({ store, workflows: [plannerWorkflow, researchWorkflow] });
    open.push(viz);
    const { url } = await viz.listen({ port: 0 });

    expect((await runsOf(url)).map(line)).toEqual([
      { runId: "plan", depth: 0, parent: undefined, iteration: 2, live: false, stored: true, status: "done" },
      { runId: "plan.1-0", depth: 1, parent: { runId: "plan", callId }, iteration: 2, live: false, stored: true, status: "done" },
      { runId: "older", depth: 0, parent: undefined, iteration: 2, live: false, stored: true, status: "done" },
      { runId: "older.1-0", depth: 1, parent: { runId: "older", callId: expect.any(String) }, iteration: 2, live: false, stored: true, status: "done" },
    ]);
  });

  it("live: a runner with visualizerInspector (no store) streams the child under its own id, linked to the parent's call", async () => {
    const viz = createVisualizer();
    open.push(viz);
    const { url } = await viz.listen({ port: 0 });
    const inspector = visualizerInspector(url);
    await expect(runPlanner("live-plan", { inspect: inspector })).resolves.toBe("plan: go solar");
    await inspector.flush();
    expect(inspector.stats.dropped).toBe(0);

    const runs = await runsOf(url);
    expect(runs.map((r) => [r.runId, r.depth, r.workflow, r.status, r.iteration])).toEqual([
      ["live-plan", 0, "planner", "done", 2],
      ["live-plan.1-0", 1, "research", "done", 2],
    ]);
    const child = runs[1]!;
    expect(child.parent).toEqual({ runId: "live-plan", callId: expect.any(String) });
    // The call id is the parent's call of research (its first assistant message's).
    const parentContext = viz.feed.since("live-plan").events.findLast((e) => e.type === "@xstate.snapshot")!;
    const ctx = (parentContext as Extract<WireEvent, { type: "@xstate.snapshot" }>).snapshot.context as unknown as WorkflowContext;
    expect(ctx.messages.find((m) => m.role === "assistant")?.toolCalls?.[0]?.callId).toBe(child.parent!.callId);
  });

  it("the link is in every snapshot of the child (what a live feed sees, also after a resume); a fork of the child is no call's child", async () => {
    const store = new MemoryRunStore();
    await runPlanner("p", { store });
    const link = parentLinkOf(await store.events("p.1-0"));
    const contextAt = async (runId: string) => (await store.latest(runId))!.snapshot.context as WorkflowContext;
    expect((await contextAt("p.1-0")).run.parent).toEqual(link);
    expect((await contextAt("p")).run.parent).toBeUndefined();
    await forkRun(store, "p.1-0", { at: 1, runId: "p-fork" });
    expect((await contextAt("p-fork")).run.parent).toBeUndefined();
  });

  it("a live run's parent link is taken only when it has the shape of one", () => {
    const feed = new Feed();
    const snapshot = (runId: string, parent: unknown): WireEvent => ({
      runId,
      sessionId: "x:0",
      rootId: "x:0",
      at: 1,
      type: "@xstate.snapshot",
      event: { type: "e" },
      snapshot: { value: "inferring", status: "active", context: { run: { workflow: "wf", startedAt: 1, parent }, iteration: 0 } },
    });
    feed.ingest([snapshot("ok", { runId: "p", callId: "c" }), snapshot("bad-id", { runId: "../p", callId: "c" }), snapshot("no-call", { runId: "p" })]);
    const parents = Object.fromEntries(feed.runs().map((r) => [r.runId, r.parent]));
    expect(parents).toEqual({ ok: { runId: "p", callId: "c" }, "bad-id": undefined, "no-call": undefined });
  });

  it("a stored run whose checkpoint cannot be read is listed with iteration null and the reason; the others as usual", async () => {
    const store = new MemoryRunStore();
    await runPlanner("fine", { store });
    // A store whose checkpoint of one run cannot be read (the reader uses latest and events).
    const broken = {
      latest: async (runId: string) => {
        if (runId === "fine.1-0") throw new Error("disk on fire");
        return store.latest(runId);
      },
      events: (runId: string) => store.events(runId),
    } as Pick<RunStore, "latest" | "events"> as RunStore;
    const details = storedRunDetails(broken);
    const listed = readableRuns(await store.listRuns());
    const byId = Object.fromEntries((await details(listed)).map((d, i) => [listed[i]!.runId, d]));
    expect(byId.fine).toEqual({ iteration: 2 });
    expect(byId["fine.1-0"]).toEqual({ iteration: null, unreadable: expect.stringMatching(/run fine\.1-0: .*disk on fire/) });
  });
});
