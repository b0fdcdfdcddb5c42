// Run ids as the run list prints them. Ids made the same way share long prefixes (the demo's
// are `demo-<base36 clock>`: five runs a minute apart all start `demo-mwu`), so cutting every
// id to its first characters makes them look alike; the part that tells an id apart is kept.

/** Ids up to this long are shown whole. */
export const FULL_UP_TO = 16;
/** Characters kept before the first one that differs, so the cut reads as a piece of the id. */
const LEAD = 3;
/** The tail shown of a long id. */
const TAIL = 12;

const commonPrefix = (a: string, b: string) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

/**
 * A short, distinct label for each of `ids`: the id itself when short, else its first word and
 * the piece from just before where it differs from the most similar other id
 * (`demo-…u9k2x7`). Labels that would still collide fall back to the whole id.
 */
export function shortIds(ids: readonly string[]): Map<string, string> {
  const unique = [...new Set(ids)];
  const sorted = [...unique].sort();
  const shared = new Map<string, number>();
  sorted.forEach((id, i) => {
    // In sorted order the most similar id is a neighbour.
    const before = i > 0 ? commonPrefix(id, sorted[i - 1]!) : 0;
    const after = i + 1 < sorted.length ? commonPrefix(id, sorted[i + 1]!) : 0;
    shared.set(id, Math.max(before, after));
  });
  const labels = new Map<string, string>();
  for (const id of unique) labels.set(id, shorten(id, shared.get(id) ?? 0));
  const seen = new Map<string, number>();
  for (const label of labels.values()) seen.set(label, (seen.get(label) ?? 0) + 1);
  for (const [id, label] of labels) if ((seen.get(label) ?? 0) > 1) labels.set(id, id);
  return labels;
}

function shorten(id: string, shared: number): string {
  if (id.length <= FULL_UP_TO) return id;
  const head = /^[^-_.:/]{1,10}[-_.:/]/.exec(id)?.[0] ?? id.slice(0, 4);
  // From a little before the first differing character (or the last TAIL characters when it
  // is among them), then on to the next word break if one is near: `…run-0002`, not `…0002`.
  let from = Math.max(head.length, Math.min(shared - LEAD, id.length - TAIL));
  const gap = id.slice(from, from + 5).search(/[-_.:/]/);
  if (gap >= 0 && from + gap + 1 <= shared) from += gap + 1;
  if (from <= head.length && id.length - head.length <= TAIL + 1) return id;
  const tail = id.slice(from, from + TAIL);
  return `${head}…${tail}${from + TAIL < id.length ? "…" : ""}`;
}
