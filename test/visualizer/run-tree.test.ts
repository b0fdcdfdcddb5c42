import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nestRuns, type NestableRun } from "../../visualizer/run-tree.js";

const run = (runId: string, startedAt: number, parent?: string): NestableRun => ({ runId, startedAt, ...(parent ? { parent: { runId: parent } } : {}) });
const shape = (runs: NestableRun[]) => nestRuns(runs).map((r) => `${"  ".repeat(r.depth)}${r.runId}`);

describe("nestRuns", () => {
  it("puts top-level runs newest first, each followed by its children in the order they started, nested", () => {
    const runs = [run("a", 10), run("b", 20), run("a.1-0", 11, "a"), run("a.3-0", 13, "a"), run("a.1-0.1-0", 12, "a.1-0"), run("a.1-1", 11, "a")];
    expect(shape(runs)).toEqual(["b", "a", "  a.1-0", "    a.1-0.1-0", "  a.1-1", "  a.3-0"]);
  });

  it("shows a child whose parent is not listed, a run naming itself, and runs naming each other at the top level", () => {
    expect(shape([run("a", 1), run("gone.1-0", 2, "gone"), run("self", 3, "self")])).toEqual(["self", "gone.1-0", "a"]);
    // A loop has no top: each of its runs is shown once, the newest first.
    expect(shape([run("x", 1, "y"), run("y", 2, "x")])).toEqual(["y", "  x"]);
  });

  it("keeps each run's own fields (the parent link included)", () => {
    const [, child] = nestRuns([{ runId: "p", startedAt: 1, status: "done" }, { runId: "p.1-0", startedAt: 2, parent: { runId: "p", callId: "c1" }, status: "done" }]);
    expect(child).toEqual({ runId: "p.1-0", startedAt: 2, parent: { runId: "p", callId: "c1" }, status: "done", depth: 1 });
  });

  it("lists every run once; a run is under its listed parent, one level deeper, unless a loop puts it first", () => {
    const runsArb = fc
      .uniqueArray(fc.integer({ min: 0, max: 30 }), { minLength: 0, maxLength: 25 })
      .chain((ids) => fc.tuple(fc.constant(ids), fc.array(fc.option(fc.integer({ min: 0, max: 30 })), { minLength: ids.length, maxLength: ids.length }), fc.array(fc.integer({ min: 0, max: 5 }), { minLength: ids.length, maxLength: ids.length })));
    fc.assert(
      fc.property(runsArb, ([ids, parents, starts]) => {
        const runs = ids.map((id, i) => run(`r${id}`, starts[i]!, parents[i] === null ? undefined : `r${parents[i]}`));
        const out = nestRuns(runs);
        expect(out.map((r) => r.runId).sort()).toEqual(runs.map((r) => r.runId).sort());
        out.forEach((r, i) => {
          if (r.depth === 0) return;
          // The nearest run above with one level less is its parent.
          const above = out.slice(0, i).findLast((o) => o.depth === r.depth - 1);
          expect(above?.runId).toBe(r.parent?.runId);
        });
      }),
    );
  });
});
