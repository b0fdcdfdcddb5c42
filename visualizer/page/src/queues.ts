// Job queues' counts (`forge-ts visualize --redis`): one row per queue, its running jobs under it.
import type { QueuesBody } from "../../protocol.js";
import { el, one } from "./dom.js";

type Running = NonNullable<QueuesBody["queues"][number]["running"]>[number];

export function renderQueues(body: Partial<QueuesBody> | null): void {
  const box = one("[data-testid=queues]");
  const queues = Array.isArray(body?.queues) ? body.queues : [];
  box.hidden = queues.length === 0 && !body?.error;
  const cell = (name: string, value: number) => el("td", "", String(value), { "data-count": name });
  one("tbody", box).replaceChildren(
    ...queues.flatMap((c) => {
      const tr = el("tr", "", undefined, { "data-queue": c.queue });
      const name = el("td", "", String(c.queue).replace(/^forge-/, ""), { title: c.queue });
      tr.append(name, cell("waiting", (c.waiting ?? 0) + (c.delayed ?? 0)), cell("active", c.active ?? 0), cell("completed", c.completed ?? 0), cell("failed", c.failed ?? 0));
      return [tr, ...(Array.isArray(c.running) ? c.running : []).map(runningRow)];
    }),
  );
  one(".queues-error", box).textContent = body?.error ? `Redis: ${body.error}` : "";
}

/** A running job under its queue: its id and the progress its worker published (state, iteration). */
function runningRow(job: Running): HTMLTableRowElement {
  const tr = el("tr", "running", undefined, { "data-job": String(job?.id ?? "") });
  const td = el("td");
  td.colSpan = 5;
  const p = job?.progress as { state?: unknown; iteration?: unknown } | undefined;
  const where = p && typeof p === "object" && typeof p.state === "string" ? ` · ${p.state} · iteration ${Number(p.iteration) || 0}` : "";
  td.textContent = `↳ ${job?.id ?? "?"}${where}`;
  tr.append(td);
  return tr;
}
