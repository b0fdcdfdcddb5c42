// What the address says: `#run=<id>&step=<n>&compare=<id>` plus the filters, so a link (or a
// reload) opens the same view. `token=` is the api module's, taken off before this reads it.
import { NO_RUN_FILTER, type RunFilter } from "./filters.js";

export interface UrlState {
  run?: string;
  /** A step of the run (1-based): its replay position, and the context diff shown. */
  step?: number;
  /** A second run shown beside the first. */
  compare?: string;
  filter: RunFilter;
  /** Timeline entry kinds hidden. */
  hide: string[];
  /** Timeline search. */
  find: string;
}

export function parseHash(hash: string): UrlState {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const step = Number(p.get("step"));
  const s: UrlState = {
    filter: { text: p.get("q") ?? "", status: p.get("status") ?? "", workflow: p.get("workflow") ?? "", session: p.get("session") ?? "" },
    hide: (p.get("hide") ?? "").split(",").filter(Boolean),
    find: p.get("find") ?? "",
  };
  const run = p.get("run");
  if (run) s.run = run;
  if (Number.isSafeInteger(step) && step > 0) s.step = step;
  const compare = p.get("compare");
  if (compare) s.compare = compare;
  return s;
}

/** The hash for `s`, fields in a fixed order and empty ones left out ("" when nothing is set). */
export function formatHash(s: UrlState): string {
  const p = new URLSearchParams();
  const f = s.filter ?? NO_RUN_FILTER;
  const set = (k: string, v: string | number | undefined) => v !== undefined && v !== "" && p.set(k, String(v));
  set("run", s.run);
  set("step", s.step);
  set("compare", s.compare);
  set("q", f.text);
  set("status", f.status);
  set("workflow", f.workflow);
  set("session", f.session);
  set("hide", s.hide.join(","));
  set("find", s.find);
  const text = p.toString();
  return text ? `#${text}` : "";
}
