// The chart's size and position: fitted when readable, else drawn larger and scrolled to the
// active state; zoom buttons, wheel and drag to pan (a phone scrolls it with a finger).
import { byId } from "./dom.js";
import { leafBox } from "./graph.js";
import { state } from "./state.js";

/** Below this scale the chart is unreadable: it is drawn larger and scrolls to the active state. */
const MIN_SCALE = 0.7;

export function applyZoom(): void {
  const L = state.layout;
  if (!L) return;
  const box = byId("graph-box");
  const W = Math.max(1, L.width);
  const H = Math.max(1, L.height);
  const cw = box.clientWidth - 4;
  const ch = box.clientHeight - 4;
  const fit = Math.min(cw / W, ch / H);
  // auto: the whole chart when that is readable, else its height fitted (at least MIN_SCALE).
  if (state.zoom.mode === "auto") state.zoom.scale = fit >= MIN_SCALE ? fit : Math.max(MIN_SCALE, Math.min(1, ch / H));
  if (state.zoom.mode === "fit") state.zoom.scale = fit;
  const s = state.zoom.scale;
  const svg = byId("graph");
  svg.style.width = `${Math.floor(W * s)}px`;
  svg.style.height = `${Math.floor(H * s)}px`;
  box.classList.toggle("overflow", W * s > cw + 1 || H * s > ch + 1);
  followActive(true);
}

/** Scrolls the active state into view when the chart is larger than its box. */
export function followActive(force = false): void {
  const box = byId("graph-box");
  if (!state.graph || !box.classList.contains("overflow")) return;
  if (!force && Date.now() - state.userScrolledAt < 5000) return;
  const b = leafBox(state.graph, state.view.leaves);
  if (!b) return;
  const s = state.zoom.scale;
  const [x0, x1, y0, y1] = [b.x * s, (b.x + b.width) * s, b.y * s, (b.y + b.height) * s];
  const m = 50;
  if (x0 >= box.scrollLeft + m && x1 <= box.scrollLeft + box.clientWidth - m && y0 >= box.scrollTop + m && y1 <= box.scrollTop + box.clientHeight - m) return;
  box.scrollTo({ left: (x0 + x1 - box.clientWidth) / 2, top: (y0 + y1 - box.clientHeight) / 2, behavior: force ? "auto" : "smooth" });
}

export function wireZoomAndPan(): void {
  const box = byId("graph-box");
  const zoomBy = (f: number) => {
    state.zoom.mode = "manual";
    state.zoom.scale = Math.max(0.05, Math.min(3, state.zoom.scale * f));
    byId("zoom-fit").classList.remove("on");
    applyZoom();
  };
  byId("zoom-in").addEventListener("click", () => zoomBy(1.25));
  byId("zoom-out").addEventListener("click", () => zoomBy(0.8));
  byId("zoom-fit").addEventListener("click", () => {
    state.zoom.mode = state.zoom.mode === "fit" ? "auto" : "fit";
    byId("zoom-fit").classList.toggle("on", state.zoom.mode === "fit");
    applyZoom();
  });
  addEventListener("resize", applyZoom);
  box.addEventListener("wheel", () => (state.userScrolledAt = Date.now()), { passive: true });
  box.addEventListener("touchstart", () => (state.userScrolledAt = Date.now()), { passive: true });
  // Drag to pan with a mouse (touch scrolls natively).
  let drag: { x: number; y: number; left: number; top: number } | null = null;
  box.addEventListener("pointerdown", (e) => {
    if (e.button === 0 && e.pointerType === "mouse") drag = { x: e.clientX, y: e.clientY, left: box.scrollLeft, top: box.scrollTop };
  });
  box.addEventListener("pointermove", (e) => {
    if (!drag || !(e.buttons & 1)) return;
    state.userScrolledAt = Date.now();
    box.scrollLeft = drag.left - (e.clientX - drag.x);
    box.scrollTop = drag.top - (e.clientY - drag.y);
  });
  addEventListener("pointerup", () => (drag = null));
}
