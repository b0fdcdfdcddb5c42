/** Filters over the run list and the timeline. */
import { describe, expect, it } from "vitest";
import type { RunSummary } from "../../../visualizer/protocol.js";
import { entryKinds, filterRuns, matchesEntry, matchesRun, NO_RUN_FILTER, runFacets } from "../../../visualizer/page/src/filters.js";
import type { Entry } from "../../../visualizer/page/src/types.js";

const run = (runId: string, extra: Partial<RunSummary> = {}): RunSummary => ({
  runId, workflow: "quote", live: false, stored: true, replayable: true, state: "done", status: "done", iteration: 3, depth: 0, startedAt: 1, updatedAt: 2, events: 0, ...extra,
});

const runs = [
  run("demo-a", { sessionId: "s-1" }),
  run("demo-b", { status: "failed", state: "failed" }),
  run("plan", { workflow: "planner", live: true, status: "active", state: "inferring" }),
  run("plan.1-0", { workflow: "research", parent: { runId: "plan", callId: "call_7" }, depth: 1 }),
];

describe("run filters", () => {
  it("matches status, live, workflow, session and every word of the text", () => {
    expect(runs.filter((r) => matchesRun(r, { ...NO_RUN_FILTER, status: "failed" })).map((r) => r.runId)).toEqual(["demo-b"]);
    expect(runs.filter((r) => matchesRun(r, { ...NO_RUN_FILTER, status: "live" })).map((r) => r.runId)).toEqual(["plan"]);
    expect(runs.filter((r) => matchesRun(r, { ...NO_RUN_FILTER, workflow: "quote" })).map((r) => r.runId)).toEqual(["demo-a", "demo-b"]);
    expect(runs.filter((r) => matchesRun(r, { ...NO_RUN_FILTER, session: "S-1" })).map((r) => r.runId)).toEqual(["demo-a"]);
    expect(runs.filter((r) => matchesRun(r, { ...NO_RUN_FILTER, text: "demo FAILED" })).map((r) => r.runId)).toEqual(["demo-b"]);
    expect(runs.filter((r) => matchesRun(r, { ...NO_RUN_FILTER, text: "call_7" })).map((r) => r.runId)).toEqual(["plan.1-0"]);
  });

  it("keeps the parent of a matching child, marked as not matching", () => {
    expect(filterRuns(runs, { ...NO_RUN_FILTER, workflow: "research" }).map(({ run: r, matched }) => [r.runId, matched])).toEqual([
      ["plan", false],
      ["plan.1-0", true],
    ]);
    expect(filterRuns(runs, NO_RUN_FILTER)).toHaveLength(4);
  });

  it("offers the statuses and workflows present", () => {
    expect(runFacets(runs)).toEqual({ statuses: ["active", "done", "failed", "live"], workflows: ["planner", "quote", "research"] });
  });
});

describe("timeline filters", () => {
  const entries: Entry[] = [
    { kind: "user", iteration: 0, label: "user", text: "quote part X" },
    { kind: "tool_call", iteration: 1, label: "tool call", text: "lookup_part({})" },
    { kind: "tool_result", iteration: 1, label: "tool result", text: "ok", who: "lookup_part" },
    { kind: "tool_call", iteration: 2, label: "tool call", text: "answer({})" },
  ];

  it("hides kinds and searches text, label and tool", () => {
    expect(entries.filter((e) => matchesEntry(e, { hidden: new Set(["tool_call"]), text: "" })).map((e) => e.kind)).toEqual(["user", "tool_result"]);
    expect(entries.filter((e) => matchesEntry(e, { hidden: new Set(), text: "lookup_part" })).map((e) => e.kind)).toEqual(["tool_call", "tool_result"]);
  });

  it("counts the kinds in order of appearance", () => {
    expect(entryKinds(entries)).toEqual([
      { kind: "user", label: "user", count: 1 },
      { kind: "tool_call", label: "tool call", count: 2 },
      { kind: "tool_result", label: "tool result", count: 1 },
    ]);
  });
});
