// The chart's size and position: fitted to its pane (on load, and whenever the pane changes
// size) until the zoom buttons take over; then larger charts scroll, following the active
// state; wheel and drag pan (a phone scrolls it with a finger).
import { byId } from "./dom.js";
import { leafBox } from "./graph.js";
import { state } from "./state.js";

export function applyZoom(): void {
  const L = state.layout;
  if (!L) return;
  const box = byId("graph-box");
  const W = Math.max(1, L.width);
  const H = Math.max(1, L.height);
  const cw = box.clientWidth - 4;
  const ch = box.clientHeight - 4;
  if (state.zoom.mode === "fit") state.zoom.scale = Math.max(0.01, Math.min(cw / W, ch / H));
  const s = state.zoom.scale;
  const svg = byId("graph");
  svg.style.width = `${Math.floor(W * s)}px`;
  svg.style.height = `${Math.floor(H * s)}px`;
  box.classList.toggle("overflow", W * s > cw + 1 || H * s > ch + 1);
  byId("zoom-fit").classList.toggle("on", state.zoom.mode === "fit");
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
    applyZoom();
  };
  byId("zoom-in").addEventListener("click", () => zoomBy(1.25));
  byId("zoom-out").addEventListener("click", () => zoomBy(0.8));
  byId("zoom-fit").addEventListener("click", () => {
    state.zoom.mode = "fit";
    applyZoom();
  });
  // The pane changes size with the window, and with what appears above it (the replay bar, a notice).
  let size = "";
  new ResizeObserver(() => {
    const next = `${box.clientWidth}x${box.clientHeight}`;
    if (next === size) return;
    size = next;
    applyZoom();
  }).observe(box);
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
