// The statechart as SVG, from the server's GraphLayout (absolute coordinates), and its live
// decoration: active states, edge counts, the edges just taken.
const NS = "http://www.w3.org/2000/svg";
const TAKEN_MS = 700;

function el(tag, attrs, parent) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  parent?.appendChild(node);
  return node;
}

function text(parent, content, attrs) {
  const t = el("text", attrs, parent);
  t.textContent = content;
  return t;
}

/** Draws `layout` into `svg` (replacing what was there); returns the handle the setters take. */
export function drawGraph(svg, layout) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${Math.max(1, layout.width)} ${Math.max(1, layout.height)}`);
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  const defs = el("defs", {}, svg);
  for (const [id, cls] of [["arrow", "arrow"], ["arrow-hot", "arrow hot"], ["arrow-recent", "arrow recent"]]) {
    const m = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", class: cls }, m);
  }
  const graph = { nodes: new Map(), byPath: new Map(), edges: new Map(), timers: new Map(), active: new Set(), recent: new Set() };
  const nodeLayer = el("g", {}, svg);
  const edgeLayer = el("g", {}, svg);
  const labelLayer = el("g", {}, svg);

  for (const n of layout.nodes ?? []) {
    const kind = String(n.kind ?? "atomic");
    const g = el("g", { class: `node ${kind}`, "data-state-id": n.id, "data-path": n.path ?? "" }, nodeLayer);
    const { x, y, width: w, height: hh } = n;
    el("title", {}, g).textContent = n.path ?? n.id;
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

  for (const e of layout.edges ?? []) {
    const g = el("g", { class: "edge", "data-edge-key": e.key, "data-count": 0 }, edgeLayer);
    el("polyline", { points: (e.points ?? []).map((p) => `${p.x},${p.y}`).join(" "), class: "line" }, g);
    const label = el("g", { class: "edge-label" }, labelLayer);
    const lb = e.labelBox ?? { x: 0, y: 0, width: 0, height: 0 };
    const mid = lb.y + lb.height / 2 + 3.7;
    el("rect", { x: lb.x, y: lb.y, width: lb.width, height: lb.height, rx: 3, class: "lbg" }, label);
    el("title", {}, text(label, e.label ?? "", { x: lb.x + 3, y: mid, class: "elabel" })).textContent = `${e.label}\n${e.key}`;
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
export function setActive(graph, leaves) {
  const next = new Set();
  for (const path of leaves) {
    for (let n = graph.byPath.get(path); n; n = n.parent ? graph.nodes.get(n.parent)?.node : undefined) next.add(n.id);
  }
  for (const id of graph.active) if (!next.has(id)) graph.nodes.get(id)?.g.classList.remove("active");
  for (const id of next) graph.nodes.get(id)?.g.classList.add("active");
  graph.active = next;
}

/** Edge counts: `data-count` and the "×N" badge. */
export function setCounts(graph, counts) {
  for (const [key, list] of graph.edges) {
    const n = counts[key] ?? 0;
    for (const item of list) {
      if (item.g.getAttribute("data-count") === String(n)) continue;
      item.g.setAttribute("data-count", String(n));
      item.g.classList.toggle("used", n > 0);
      item.label.classList.toggle("used", n > 0);
      item.count.textContent = n > 0 ? `×${n}` : "";
      item.box.setAttribute("width", String(`×${n}`.length * 6.3 + 6));
    }
  }
}

const each = (graph, keys, fn) => {
  for (const key of keys) for (const item of graph.edges.get(key) ?? []) for (const g of [item.g, item.label]) fn(g);
};

/** The edges of the latest microstep keep a soft highlight (class `recent`). */
export function setRecent(graph, keys) {
  const next = new Set(keys);
  each(graph, [...graph.recent].filter((k) => !next.has(k)), (g) => g.classList.remove("recent"));
  each(graph, next, (g) => g.classList.add("recent"));
  graph.recent = next;
}

/** The edges just taken get class `taken` for ~700 ms (a CSS animation on the stroke). */
export function flash(graph, keys) {
  each(graph, keys, (g) => {
    clearTimeout(graph.timers.get(g));
    g.classList.remove("taken");
    void g.getBoundingClientRect(); // restarts the animation
    g.classList.add("taken");
    graph.timers.set(g, setTimeout(() => g.classList.remove("taken"), TAKEN_MS));
  });
}

/** The box of the first active leaf, in layout coordinates. */
export function leafBox(graph, leaves) {
  return leaves.length ? graph.byPath.get(leaves[0]) : undefined;
}
