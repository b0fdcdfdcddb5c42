/**
 * Inline SVG charts for the HTML dashboard, rendered as strings: no script, no network, so
 * the page opens offline and prints as-is.
 */
export const esc = (s: string): string => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const W = 720;

/**
 * Horizontal bars with a 95% interval whisker per row (values in 0..1).
 *
 * @example scoreBars([{ label: "a", value: 0.8, low: 0.5, high: 0.9 }])
 */
export function scoreBars(rows: { label: string; value: number; low: number; high: number }[]): string {
  const rowH = 24;
  const left = 260;
  const plot = W - left - 60;
  const h = rows.length * rowH + 30;
  const x = (v: number): number => left + v * plot;
  const bars = rows.map((r, i) => {
    const y = 10 + i * rowH;
    return [
      `<text x="${left - 8}" y="${y + 15}" text-anchor="end" class="lbl">${esc(r.label)}</text>`,
      `<rect x="${left}" y="${y + 3}" width="${(r.value * plot).toFixed(1)}" height="${rowH - 8}" class="bar"><title>${esc(r.label)}: ${Math.round(r.value * 100)}%</title></rect>`,
      `<line x1="${x(r.low).toFixed(1)}" x2="${x(r.high).toFixed(1)}" y1="${y + 12}" y2="${y + 12}" class="ci"/>`,
      `<text x="${x(r.value) + 6}" y="${y + 15}" class="val">${Math.round(r.value * 100)}%</text>`,
    ].join("");
  });
  const axis = [0, 0.25, 0.5, 0.75, 1].map((t) => `<line x1="${x(t)}" x2="${x(t)}" y1="5" y2="${h - 20}" class="grid"/><text x="${x(t)}" y="${h - 6}" text-anchor="middle" class="ax">${t * 100}%</text>`);
  return `<svg viewBox="0 0 ${W} ${h}" width="${W}" height="${h}" role="img" aria-label="score per config">${axis.join("")}${bars.join("")}</svg>`;
}

/**
 * Diverging bars around zero (values in -1..1), e.g. per-scenario lift.
 *
 * @example liftBars([{ label: "basic_2step", value: 0.4 }])
 */
export function liftBars(rows: { label: string; value: number }[]): string {
  const rowH = 20;
  const left = 260;
  const plot = W - left - 60;
  const zero = left + plot / 2;
  const h = rows.length * rowH + 30;
  const bars = rows.map((r, i) => {
    const y = 10 + i * rowH;
    const w = (Math.abs(r.value) * plot) / 2;
    const x0 = r.value >= 0 ? zero : zero - w;
    return `<text x="${left - 8}" y="${y + 13}" text-anchor="end" class="lbl">${esc(r.label)}</text><rect x="${x0.toFixed(1)}" y="${y + 2}" width="${w.toFixed(1)}" height="${rowH - 6}" class="${r.value >= 0 ? "pos" : "neg"}"><title>${esc(r.label)}: ${Math.round(r.value * 100)} pts</title></rect><text x="${(r.value >= 0 ? zero + w + 4 : zero - w - 4).toFixed(1)}" y="${y + 13}" text-anchor="${r.value >= 0 ? "start" : "end"}" class="val">${r.value > 0 ? "+" : ""}${Math.round(r.value * 100)}</text>`;
  });
  return `<svg viewBox="0 0 ${W} ${h}" width="${W}" height="${h}" role="img" aria-label="lift per scenario"><line x1="${zero}" x2="${zero}" y1="5" y2="${h - 20}" class="grid"/>${bars.join("")}</svg>`;
}

/**
 * Vertical count bars, one per bucket.
 *
 * @example histogram([{ label: "2", count: 10 }, { label: "3", count: 4 }])
 */
export function histogram(buckets: { label: string; count: number }[]): string {
  const h = 220;
  const bottom = h - 30;
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const bw = Math.max(8, Math.floor((W - 60) / Math.max(1, buckets.length)) - 4);
  const bars = buckets.map((b, i) => {
    const bh = (b.count / max) * (bottom - 20);
    const x = 40 + i * (bw + 4);
    return `<rect x="${x}" y="${(bottom - bh).toFixed(1)}" width="${bw}" height="${bh.toFixed(1)}" class="bar"><title>${esc(b.label)}: ${b.count} runs</title></rect><text x="${x + bw / 2}" y="${bottom + 14}" text-anchor="middle" class="ax">${esc(b.label)}</text><text x="${x + bw / 2}" y="${(bottom - bh - 4).toFixed(1)}" text-anchor="middle" class="val">${b.count}</text>`;
  });
  return `<svg viewBox="0 0 ${W} ${h}" width="${W}" height="${h}" role="img" aria-label="iterations histogram">${bars.join("")}<line x1="36" x2="${W - 10}" y1="${bottom}" y2="${bottom}" class="grid"/></svg>`;
}
