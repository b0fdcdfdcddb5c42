/**
 * The statechart laid out once on the server (GET /api/graph): the hierarchy from
 * `toDirectedGraph`, every transition as an edge named by transitionKey(), positions from ELK's
 * layered algorithm. All coordinates in the result are absolute.
 */
import { toDirectedGraph, type DirectedGraphNode } from "@xstate/graph";
import elk from "elkjs/lib/elk.bundled.js";
import type { ElkEdgeSection, ElkLabel, ElkNode, ElkPoint, LayoutOptions } from "elkjs/lib/elk-api.js";
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from "xstate";
import { workflowMachine } from "../machines/workflow.machine.js";
import type { GraphLayout, LayoutEdge, LayoutNode } from "./protocol.js";
import { actionLabels, guardLabel, transitionKey, transitionLabel } from "./transitions.js";

// elkjs is CommonJS: Node hands over module.exports (the constructor, whose `default` is itself),
// while its typings declare an ES default export, so `.default` is right for both.
const ELK = elk.default;

// Text metrics of the page's monospace fonts: state names at 12px, edge labels at 10.5px.
const NODE_CHAR = 7.2;
const LABEL_CHAR = 6.3;
const LABEL_HEIGHT = 14;
const NODE_PAD = 28;
const NODE_MIN_WIDTH = 110;
const NODE_HEIGHT = 40;
const INVOKE_LINE = 14;
/** Room at the top of a compound box for its title. */
const TITLE = 24;
const MARGIN = 20;
/** Reserved right of each label for the page's use-count badge (3px gap + 24px). */
const BADGE_ROOM = 27;
/** Arrowheads into one state sit this far apart, so the labels stacked at them step diagonally. */
const ARROW_GAP = LABEL_HEIGHT;

type Node = Omit<LayoutNode, "x" | "y" | "width" | "height">;
type Edge = Omit<LayoutEdge, "points" | "labelBox" | "caption" | "drawnFrom">;
type DrawnEdge = Edge & Pick<LayoutEdge, "caption" | "drawnFrom">;

/** A target with transitions from this many states or more gets them drawn from the any-state node. */
const FOLD_SOURCES = 5;

const captionOf = (e: DrawnEdge) => e.caption ?? e.label;
const stateName = (nodes: readonly Node[], id: string) => nodes.find((n) => n.id === id)?.path ?? id;

/**
 * Top to bottom, with each edge's label at its head: labels are long and one line high, so
 * they stack by the arrowheads (a busy target like `failed` gets a column of them) instead of
 * widening layers. Left to right with mid-edge labels reads well too but is 5x wider than high.
 */
const ROOT_OPTIONS: LayoutOptions = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.hierarchyHandling": "INCLUDE_CHILDREN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.padding": `[top=${MARGIN},left=${MARGIN},bottom=${MARGIN},right=${MARGIN}]`,
  "elk.spacing.nodeNode": "28",
  "elk.layered.spacing.nodeNodeBetweenLayers": "36",
  "elk.spacing.edgeEdge": "10",
  "elk.layered.spacing.edgeEdgeBetweenLayers": "10",
  "elk.layered.spacing.edgeNodeBetweenLayers": "16",
  "elk.spacing.edgeNode": "14",
  "elk.spacing.edgeLabel": "4",
  // Keep the machine's order (states and transitions as written) where ELK has a choice.
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.layered.cycleBreaking.strategy": "MODEL_ORDER",
  "elk.layered.nodePlacement.strategy": "NETWORK_SIMPLEX",
};

const COMPOUND_OPTIONS: LayoutOptions = {
  "elk.padding": `[top=${TITLE + 12},left=14,bottom=14,right=14]`,
  // Compounds run their own cycle breaking: the default (greedy) puts `running` above the
  // initial `selecting`; DEPTH_FIRST does not (MODEL_ORDER crashes here in elkjs 0.12).
  "elk.layered.cycleBreaking.strategy": "DEPTH_FIRST",
};

const LABEL_OPTIONS: LayoutOptions = { "elk.edgeLabels.placement": "HEAD" };

export async function layoutMachine(machine: AnyStateMachine): Promise<GraphLayout> {
  const anyId = `${machine.root.id}.*`;
  const nodes: Node[] = [{ id: anyId, path: "*", label: "any state", parent: null, kind: "any", initial: false, invokes: [] }];
  const edges: Edge[] = [];

  const addEdges = (source: string, transitions: readonly AnyTransitionDefinition[]) => {
    for (const t of transitions) {
      const guard = guardLabel(t.guard);
      const common = { event: t.eventType, ...(guard === undefined ? {} : { guard }), actions: actionLabels(t.actions), label: transitionLabel(t) };
      (t.target ?? []).forEach((target, i) => {
        edges.push({ key: i > 0 ? `${transitionKey(t)}#${i}` : transitionKey(t), source, target: target.id, ...common });
      });
    }
  };
  // toDirectedGraph's edges are the `on` transitions (invoke done/error included), one per
  // target; eventless `always` transitions are missing from it and read off the state node.
  const transitionsOf = (g: DirectedGraphNode) => {
    const on = g.edges.map((e) => e.transition).filter((t, i, all) => all.indexOf(t) === i);
    return [...on, ...((g.stateNode as AnyStateNode).always ?? [])];
  };

  const visit = (g: DirectedGraphNode, parent: AnyStateNode) => {
    const s = g.stateNode as AnyStateNode;
    nodes.push({
      id: s.id,
      path: s.path.join("."),
      label: s.key,
      parent: parent === machine.root ? null : parent.id,
      kind: g.children.length > 0 ? "compound" : s.type === "final" ? "final" : "atomic",
      initial: parent.initial.target.includes(s),
      invokes: s.invoke.map((i) => String(i.src)),
    });
    addEdges(s.id, transitionsOf(g));
    for (const c of g.children) visit(c, s);
  };
  const root = toDirectedGraph(machine);
  for (const c of root.children) visit(c, machine.root);
  addEdges(anyId, transitionsOf(root));

  // Transitions into a state that many states fail to (`failed`: budgets, service errors, fatal
  // tool errors...) are drawn from the any-state node, each naming its source: one edge into
  // `failed` instead of a bundle of parallel lines from every corner of the chart.
  const sources = new Map<string, Set<string>>();
  for (const e of edges) sources.set(e.target, (sources.get(e.target) ?? new Set()).add(e.source));
  const folded = (e: Edge) => e.source !== anyId && (sources.get(e.target)?.size ?? 0) >= FOLD_SOURCES;
  const drawn: DrawnEdge[] = edges.map((e) =>
    folded(e) ? { ...e, drawnFrom: anyId, caption: `${stateName(nodes, e.source)}: ${e.label}` } : e,
  );
  // One ELK edge per route (start and target): its label is the route's labels, one per line.
  const routes = new Map<string, DrawnEdge[]>();
  for (const e of drawn) {
    const id = `${e.drawnFrom ?? e.source}->${e.target}`;
    routes.set(id, [...(routes.get(id) ?? []), e]);
  }
  const inDegree = (id: string) => [...routes.values()].filter((r) => r[0]!.target === id).length;
  const elkNode = (n: Node): ElkNode => {
    if (n.kind !== "compound") return { id: n.id, ...boxSize(n.label, n.invokes, inDegree(n.id)) };
    const title = Math.ceil(n.label.length * NODE_CHAR + NODE_PAD);
    return {
      id: n.id,
      layoutOptions: { ...COMPOUND_OPTIONS, "elk.nodeSize.constraints": "MINIMUM_SIZE", "elk.nodeSize.minimum": `(${title},${TITLE})` },
      children: nodes.filter((c) => c.parent === n.id).map(elkNode),
    };
  };
  const graph: ElkNode = {
    id: "root",
    layoutOptions: ROOT_OPTIONS,
    children: nodes.filter((n) => n.parent === null).map(elkNode),
    edges: [...routes].map(([id, route]) => ({
      id,
      sources: [route[0]!.drawnFrom ?? route[0]!.source],
      targets: [route[0]!.target],
      labels: [
        {
          text: route.map(captionOf).join("\n"),
          width: Math.max(...route.map((e) => labelWidth(captionOf(e)))) + BADGE_ROOM,
          height: LABEL_HEIGHT * route.length,
          layoutOptions: LABEL_OPTIONS,
        },
      ],
    })),
  };
  const out = await new ELK().layout(graph);
  const order = new Map(edges.map((e, i) => [e.key, i]));

  // ELK positions children relative to their parent; walk down accumulating offsets.
  const origin = new Map<string, ElkPoint>([["root", { x: 0, y: 0 }]]);
  const boxes = new Map<string, { x: number; y: number; width: number; height: number }>();
  const walk = (n: ElkNode, at: ElkPoint) => {
    for (const c of n.children ?? []) {
      const p = { x: at.x + (c.x ?? 0), y: at.y + (c.y ?? 0) };
      origin.set(c.id, p);
      boxes.set(c.id, { ...p, width: c.width ?? 0, height: c.height ?? 0 });
      walk(c, p);
    }
  };
  walk(out, { x: 0, y: 0 });

  const laidOut = new Map((out.edges ?? []).map((e) => [e.id, e]));
  return {
    machineId: machine.id,
    width: out.width ?? 0,
    height: out.height ?? 0,
    nodes: nodes.map((n) => ({ ...n, ...must(boxes.get(n.id), n.id) })),
    edges: [...routes].flatMap(([id, route]) => {
      const le = must(laidOut.get(id), id);
      // With INCLUDE_CHILDREN, an edge's sections and labels are relative to its `container` node.
      const at = must(origin.get(le.container ?? "root"), id);
      const label: ElkLabel = le.labels?.[0] ?? {};
      const points = polyline(le.sections ?? []).map((p) => ({ x: p.x + at.x, y: p.y + at.y }));
      return route.map((e, line) => ({
        ...e,
        points,
        labelBox: { x: at.x + (label.x ?? 0), y: at.y + (label.y ?? 0) + line * LABEL_HEIGHT, width: labelWidth(captionOf(e)), height: LABEL_HEIGHT },
      }));
    }).sort((a, b) => order.get(a.key)! - order.get(b.key)!),
  };
}

let memo: Promise<GraphLayout> | undefined;

/** Memoized layout of the bare workflow machine (`workflowMachine` from machines/workflow.machine.ts). */
export function workflowLayout(): Promise<GraphLayout> {
  memo ??= layoutMachine(workflowMachine);
  return memo;
}

/** The label's text plus 3px of padding each side. */
function labelWidth(text: string): number {
  return Math.ceil(text.length * LABEL_CHAR + 6);
}

/** A state's box: room for its name and invokes, and for its incoming arrowheads to fan out. */
function boxSize(label: string, invokes: string[], inDegree: number): { width: number; height: number } {
  const text = Math.max(label.length * NODE_CHAR, ...invokes.map((s) => `invoke: ${s}`.length * LABEL_CHAR));
  return {
    width: Math.max(NODE_MIN_WIDTH, Math.ceil(text + NODE_PAD), inDegree * ARROW_GAP),
    height: NODE_HEIGHT + (invokes.length > 0 ? INVOKE_LINE : 0),
  };
}

/** An edge's sections chained start to end (one section unless ELK split the edge). */
function polyline(sections: ElkEdgeSection[]): ElkPoint[] {
  const byId = new Map(sections.map((s) => [s.id, s]));
  let s = sections.find((x) => !x.incomingSections?.length) ?? sections[0];
  const points: ElkPoint[] = [];
  const seen = new Set<string>();
  while (s && !seen.has(s.id)) {
    seen.add(s.id);
    for (const p of [s.startPoint, ...(s.bendPoints ?? []), s.endPoint]) {
      const last = points[points.length - 1];
      if (!last || last.x !== p.x || last.y !== p.y) points.push({ x: p.x, y: p.y });
    }
    const next = s.outgoingSections?.[0];
    s = next === undefined ? undefined : byId.get(next);
  }
  return points;
}

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`layout: ELK returned no geometry for ${what}`);
  return value;
}
