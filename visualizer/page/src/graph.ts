// The statechart as SVG, from the server's GraphLayout (absolute coordinates), and its live
// decoration: active states, edge counts, the edges just taken.
import type { GraphLayout, LayoutNode } from "../../protocol.js";

const NS = "http://www.w3.org/2000/svg";
const TAKEN_MS = 700;

interface EdgeItem {
  g: SVGGElement;
  label: SVGGElement;
  count: SVGTextElement;
  box: SVGRectElement;
}

export interface Graph {
  nodes: Map<string, { g: SVGGElement; node: LayoutNode }>;
  byPath: Map<string, LayoutNode>;
  /** A transition's key: its drawings (one per target). */
  edges: Map<string, EdgeItem[]>;
  timers: Map<SVGGElement, ReturnType<typeof setTimeout>>;
  active: Set<string>;
  recent: Set<string>;
}

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, parent?: Element): SVGElementTagNameMap[K] {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  parent?.appendChild(node);
  return node;
}

function text(parent: Element, content: string, attrs: Record<string, string | number>): SVGTextElement {
  const t = el("text", attrs, parent);
  t.textContent = content;
  return t;
}

/** Draws `layout` into `svg` (replacing what was there); returns the handle the setters take. */
export function drawGraph(svg: SVGSVGElement, layout: GraphLayout): Graph {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${Math.max(1, layout.width)} ${Math.max(1, layout.height)}`);
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  const defs = el("defs", {}, svg);
  for (const [id, cls] of [["arrow", "arrow"], ["arrow-hot", "arrow hot"], ["arrow-recent", "arrow recent"]] as const) {
    const m = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", class: cls }, m);
  }
  const graph: Graph = { nodes: new Map(), byPath: new Map(), edges: new Map(), timers: new Map(), active: new Set(), recent: new Set() };
  const nodeLayer = el("g", {}, svg);
  const edgeLayer = el("g", {}, svg);
  const labelLayer = el("g", {}, svg);

  for (const n of layout.nodes ?? []) {
    const kind = String(n.kind ?? "atomic");
    const g = el("g", { class: `node ${kind}`, "data-state-id": n.id, "data-path": n.path ?? "" }, nodeLayer);
    const { x, y, width: w, height: hh } = n;
    el("title", {}, g).textContent = kind === "any" ? "transitions from any state, and the failures of many states (each line names its source)" : n.path ?? n.id;
    el("rect", { x, y, width: w, height: hh, rx: kind === "compound" ? 10 : kind === "any" ? 4 : 8, class: "box" }, g);
    const invokes = Array.isArray(n.invokes) ? n.invokes : [];
    if (kind === "compound") text(g, n.label, { x: x + 12, y: y + 17, class: "title" });
    else {
      if (kind === "final") el("rect", { x: x + 4, y: y + 4, width: w - 8, height: hh - 8, rx: 5, class: "inner" }, g);
      text(g, n.label, { x: x + w / 2, y: y + (invokes.length ? 20 : hh / 2 + 4), class: "label", "text-anchor": "middle" });
      if (invokes.length) text(g, `invoke: ${invokes.join(", ")}`, { x: x + w / 2, y: y + 38, class: "invoke", "text-anchor": "middle" });
    }
    // The initial state's entry dot.
    if (n.initial) el("circle", { cx: x - 7, cy: y + Math.min(hh / 2, 20), r: 3.5, class: "init-dot" }, g);
    graph.nodes.set(n.id, { g, node: n });
    if (typeof n.path === "string") graph.byPath.set(n.path, n);
  }

  // Transitions drawn along one route (same source and target, or folded into an any-state
  // edge) share their polyline: it is drawn once, and each transition has its own label line.
  const routes = new Map<string, SVGGElement>();
  for (const e of layout.edges ?? []) {
    const points = (e.points ?? []).map((p) => `${p.x},${p.y}`).join(" ");
    let g = routes.get(points);
    if (!g) {
      g = el("g", { class: "edge" }, edgeLayer);
      el("polyline", { points, class: "line" }, g);
      routes.set(points, g);
    }
    const label = el("g", { class: "edge-label", "data-edge-key": e.key, "data-count": 0 }, labelLayer);
    const lb = e.labelBox ?? { x: 0, y: 0, width: 0, height: 0 };
    const mid = lb.y + lb.height / 2 + 3.7;
    el("rect", { x: lb.x, y: lb.y, width: lb.width, height: lb.height, rx: 3, class: "lbg" }, label);
    el("title", {}, text(label, e.caption ?? e.label ?? "", { x: lb.x + 3, y: mid, class: "elabel" })).textContent = `${e.label}\n${e.key}`;
    const cnt = el("g", { class: "cnt" }, label);
    const box = el("rect", { x: lb.x + lb.width + 3, y: lb.y, width: 24, height: lb.height, rx: 7 }, cnt);
    const count = text(cnt, "", { x: lb.x + lb.width + 6, y: mid });
    // A transition with several targets is drawn once per target ("key#1"); the feed names the transition.
    const base = String(e.key).replace(/#\d+$/, "");
    graph.edges.set(base, [...(graph.edges.get(base) ?? []), { g, label, count, box }]);
  }
  return graph;
}

/** Class `active` on the active leaves (dotted paths) and their ancestors, on no other node. */
export function setActive(graph: Graph, leaves: readonly string[]): void {
  const next = new Set<string>();
  for (const path of leaves) {
    for (let n = graph.byPath.get(path); n; n = n.parent ? graph.nodes.get(n.parent)?.node : undefined) next.add(n.id);
  }
  for (const id of graph.active) if (!next.has(id)) graph.nodes.get(id)?.g.classList.remove("active");
  for (const id of next) graph.nodes.get(id)?.g.classList.add("active");
  graph.active = next;
}

/** Edge counts: each label's `data-count` and "×N" badge; a route is `used` when any of its transitions is. */
export function setCounts(graph: Graph, counts: Record<string, number>): void {
  const used = new Map<SVGGElement, boolean>();
  for (const [key, list] of graph.edges) {
    const n = counts[key] ?? 0;
    for (const item of list) {
      used.set(item.g, (used.get(item.g) ?? false) || n > 0);
      if (item.label.getAttribute("data-count") === String(n)) continue;
      item.label.setAttribute("data-count", String(n));
      item.label.classList.toggle("used", n > 0);
      item.count.textContent = n > 0 ? `×${n}` : "";
      item.box.setAttribute("width", String(`×${n}`.length * 6.3 + 6));
    }
  }
  for (const [g, u] of used) g.classList.toggle("used", u);
}

const each = (graph: Graph, keys: Iterable<string>, fn: (g: SVGGElement) => void) => {
  for (const key of keys) for (const item of graph.edges.get(key) ?? []) for (const g of [item.g, item.label]) fn(g);
};

/** The edges of the latest microstep keep a soft highlight (class `recent`). */
export function setRecent(graph: Graph, keys: readonly string[]): void {
  const next = new Set(keys);
  each(graph, [...graph.recent].filter((k) => !next.has(k)), (g) => g.classList.remove("recent"));
  each(graph, next, (g) => g.classList.add("recent"));
  graph.recent = next;
}

/** The edges just taken get class `taken` for ~700 ms (a CSS animation on the stroke). */
export function flash(graph: Graph, keys: Iterable<string>): void {
  each(graph, keys, (g) => {
    clearTimeout(graph.timers.get(g));
    g.classList.remove("taken");
    void g.getBoundingClientRect(); // restarts the animation
    g.classList.add("taken");
    graph.timers.set(
      g,
      setTimeout(() => g.classList.remove("taken"), TAKEN_MS),
    );
  });
}

/** The box of the first active leaf, in layout coordinates. */
export function leafBox(graph: Graph, leaves: readonly string[]): LayoutNode | undefined {
  return leaves.length ? graph.byPath.get(leaves[0]!) : undefined;
}
