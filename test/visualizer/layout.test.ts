/**
 * The statechart's drawing: every state and transition of the machine is in it once, named the
 * way the live feed names them, and the geometry is absolute, nested, non-overlapping and stable.
 */
import { describe, expect, it } from "vitest";
import type { AnyStateNode, AnyTransitionDefinition } from "xstate";
import { workflowMachine } from "../../machines/workflow.machine.js";
import { layoutMachine, workflowLayout } from "../../visualizer/layout.js";
import type { GraphLayout } from "../../visualizer/protocol.js";
import { transitionKey } from "../../visualizer/transitions.js";

type Box = { x: number; y: number; width: number; height: number };
type Point = { x: number; y: number };

/** How far (px) an edge's end may sit from its box's border. */
const TOLERANCE = 3;

function stateNodes(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((s) => [s, ...stateNodes(s)]);
}

function transitions(node: AnyStateNode): AnyTransitionDefinition[] {
  return [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
}

const allTransitions = [workflowMachine.root, ...stateNodes(workflowMachine.root)].flatMap(transitions);

function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

function inside(inner: Box, outer: Box): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height;
}

/** Distance from a point to a box's outline (0 on the border). */
function borderDistance(p: Point, b: Box): number {
  const dx = Math.max(b.x - p.x, 0, p.x - (b.x + b.width));
  const dy = Math.max(b.y - p.y, 0, p.y - (b.y + b.height));
  if (dx > 0 || dy > 0) return Math.hypot(dx, dy);
  return Math.min(p.x - b.x, b.x + b.width - p.x, p.y - b.y, b.y + b.height - p.y);
}

describe("layoutMachine(workflowMachine)", async () => {
  const layout: GraphLayout = await workflowLayout();
  const byId = new Map(layout.nodes.map((n) => [n.id, n]));
  const node = (id: string) => {
    const n = byId.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  };

  it("has every state node once, plus the any-state source of root transitions", () => {
    const ids = stateNodes(workflowMachine.root).map((s) => s.id);
    expect(layout.machineId).toBe("workflow");
    expect(layout.nodes.map((n) => n.id).sort()).toEqual([...ids, "workflow.*"].sort());
    expect(new Set(layout.nodes.map((n) => n.id)).size).toBe(layout.nodes.length);
    expect(node("workflow.*")).toMatchObject({ path: "*", label: "any state", kind: "any", parent: null, invokes: [] });
  });

  it("describes each state: path, label, parent, kind, initial, invokes", () => {
    expect(node("workflow.compacting")).toMatchObject({ path: "compacting", label: "compacting", parent: null, kind: "compound", initial: true, invokes: [] });
    expect(node("workflow.compacting.checking")).toMatchObject({ path: "compacting.checking", label: "checking", parent: "workflow.compacting", kind: "atomic", initial: true });
    expect(node("workflow.compacting.running")).toMatchObject({ parent: "workflow.compacting", initial: false, invokes: ["compact"] });
    expect(node("workflow.inferring")).toMatchObject({ kind: "atomic", initial: false, invokes: ["infer"] });
    expect(node("workflow.executingTools")).toMatchObject({ kind: "compound", initial: false });
    expect(node("workflow.executingTools.selecting")).toMatchObject({ path: "executingTools.selecting", initial: true });
    expect(node("workflow.executingTools.running")).toMatchObject({ invokes: ["executeTool"] });
    for (const id of ["done", "failed", "cancelled"]) expect(node(`workflow.${id}`)).toMatchObject({ kind: "final", parent: null, initial: false });
  });

  it("lists parents before their children", () => {
    const seen = new Set<string>();
    for (const n of layout.nodes) {
      if (n.parent !== null) expect(seen.has(n.parent)).toBe(true);
      seen.add(n.id);
    }
  });

  it("has every transition (on, always, root) once, keyed by transitionKey", () => {
    const keys = layout.edges.map((e) => e.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect([...keys].sort()).toEqual(allTransitions.map((t) => transitionKey(t)).sort());
    expect(allTransitions.filter((t) => t.eventType === "").length).toBeGreaterThan(20);
    for (const t of allTransitions) {
      const edge = layout.edges.find((e) => e.key === transitionKey(t));
      expect(edge?.source).toBe(t.source === workflowMachine.root ? "workflow.*" : t.source.id);
      expect(edge?.target).toBe(t.target?.[0]?.id);
      expect(edge?.event).toBe(t.eventType);
    }
  });

  it("labels edges with event, guard and actions", () => {
    const validating = layout.edges.filter((e) => e.source === "workflow.validating");
    expect(validating.some((e) => e.label.includes("needsRetry && isRetryBudgetExhausted"))).toBe(true);
    expect(layout.edges.find((e) => e.key === "workflow.validating:always:0")).toMatchObject({
      event: "",
      guard: "needsRetry && isRetryBudgetExhausted",
      actions: ["failRetries"],
      label: "always [needsRetry && isRetryBudgetExhausted] / failRetries",
      target: "workflow.failed",
    });
    expect(layout.edges.find((e) => e.key === "workflow:workflow.cancel:0")).toMatchObject({
      source: "workflow.*",
      target: "workflow.cancelled",
      event: "workflow.cancel",
      actions: ["recordCancellation"],
      label: "workflow.cancel / recordCancellation",
    });
    const unguarded = layout.edges.find((e) => e.key === "workflow.validating:always:6");
    expect(unguarded && "guard" in unguarded).toBe(false);
    expect(layout.edges.find((e) => e.key === "workflow.inferring:xstate.done.actor.infer:0")?.label).toBe("done: infer / applyResponse");
  });

  it("nests each child's box inside its parent's", () => {
    for (const n of layout.nodes) {
      if (n.parent !== null) expect(inside(n, node(n.parent)), n.id).toBe(true);
    }
  });

  it("keeps sibling boxes apart", () => {
    for (const a of layout.nodes) {
      for (const b of layout.nodes) {
        if (a.id < b.id && a.parent === b.parent) expect(overlaps(a, b), `${a.id} / ${b.id}`).toBe(false);
      }
    }
  });

  it("starts each edge on its source's border (or the any-state node's) and ends it on its target's", () => {
    for (const e of layout.edges) {
      expect(e.points.length, e.key).toBeGreaterThanOrEqual(2);
      const first = e.points[0]!;
      const last = e.points[e.points.length - 1]!;
      expect(borderDistance(first, node(e.drawnFrom ?? e.source)), `${e.key} start`).toBeLessThanOrEqual(TOLERANCE);
      expect(borderDistance(last, node(e.target)), `${e.key} end`).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  // Up to ELK's half-pixel jog where an edge leaves a compound state.
  it("draws orthogonal polylines", () => {
    for (const e of layout.edges) {
      e.points.slice(1).forEach((p, i) => {
        const q = e.points[i]!;
        expect(Math.min(Math.abs(p.x - q.x), Math.abs(p.y - q.y)), e.key).toBeLessThan(1);
      });
    }
  });

  it("draws the many transitions into failed as one edge from the any-state node, each naming its source", () => {
    const intoFailed = layout.edges.filter((e) => e.target === "workflow.failed");
    expect(intoFailed.length).toBeGreaterThanOrEqual(14);
    expect(new Set(intoFailed.map((e) => JSON.stringify(e.points))).size).toBe(1);
    for (const e of intoFailed.filter((x) => x.source !== "workflow.*")) {
      expect(e.drawnFrom, e.key).toBe("workflow.*");
      expect(e.caption, e.key).toBe(`${node(e.source).path}: ${e.label}`);
    }
    // The lines of the combined label are stacked, one per transition.
    const ys = intoFailed.map((e) => e.labelBox.y).sort((a, b) => a - b);
    ys.slice(1).forEach((y, i) => expect(y - ys[i]!).toBeGreaterThanOrEqual(14));
    // Other transitions keep their own source.
    expect(layout.edges.find((e) => e.key === "workflow.validating:always:6")).not.toHaveProperty("drawnFrom");
  });

  it("draws transitions with the same source and target along one route", () => {
    const toCompacting = layout.edges.filter((e) => e.source === "workflow.validating" && e.target === "workflow.compacting");
    expect(toCompacting).toHaveLength(3);
    expect(new Set(toCompacting.map((e) => JSON.stringify(e.points))).size).toBe(1);
  });

  it("keeps labels apart from each other and from states", () => {
    const shrink = (b: Box): Box => ({ x: b.x + 0.5, y: b.y + 0.5, width: b.width - 1, height: b.height - 1 });
    for (const e of layout.edges) {
      expect(e.labelBox.width).toBeGreaterThan((e.caption ?? e.label).length * 6);
      for (const f of layout.edges) {
        if (e.key < f.key) expect(overlaps(shrink(e.labelBox), f.labelBox), `${e.key} / ${f.key}`).toBe(false);
      }
      for (const n of layout.nodes) {
        // A compound's title strip (24px) is the only part of it a label must stay off.
        const box = n.kind === "compound" ? { ...n, height: 24 } : n;
        expect(overlaps(shrink(e.labelBox), box), `${e.key} / ${n.id}`).toBe(false);
      }
    }
  });

  it("uses finite coordinates within the drawing", () => {
    expect(layout.width).toBeGreaterThan(0);
    expect(layout.height).toBeGreaterThan(0);
    const within = (b: Box, what: string) => {
      for (const v of [b.x, b.y, b.width, b.height]) expect(Number.isFinite(v), what).toBe(true);
      expect(b.x >= 0 && b.y >= 0 && b.x + b.width <= layout.width && b.y + b.height <= layout.height, what).toBe(true);
    };
    for (const n of layout.nodes) within(n, n.id);
    for (const e of layout.edges) {
      within(e.labelBox, `${e.key} label`);
      for (const p of e.points) within({ ...p, width: 0, height: 0 }, `${e.key} point`);
    }
  });

  it("is deterministic", async () => {
    expect(await layoutMachine(workflowMachine)).toEqual(await layoutMachine(workflowMachine));
    expect(await layoutMachine(workflowMachine)).toEqual(layout);
  });

  it("memoizes the workflow's layout", () => {
    expect(workflowLayout()).toBe(workflowLayout());
  });
});
