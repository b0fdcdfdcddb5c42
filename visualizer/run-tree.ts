/**
 * The run list's order: top-level runs newest first, each followed by the child runs its tool
 * calls started (`workflowTool`), in the order they started, nested as deep as they go.
 *
 * The links come from the live feed (any process may post them) and from the store, so they
 * are not trusted to form a tree: a child whose parent is not listed, or a loop of runs naming
 * each other, is shown at the top level (its `parent` still set, so the page can say so).
 */

/** What nesting needs of a run. */
export interface NestableRun {
  runId: string;
  startedAt: number;
  parent?: { runId: string };
}

/**
 * `runs` in display order, each with its `depth` (0 for the top level).
 *
 * @example
 * nestRuns([{ runId: "plan-7", startedAt: 1 }, { runId: "plan-7.1-0", startedAt: 2, parent: { runId: "plan-7" } }])
 * // [{ runId: "plan-7", depth: 0, ... }, { runId: "plan-7.1-0", depth: 1, ... }]
 */
export function nestRuns<TRun extends NestableRun>(runs: readonly TRun[]): (TRun & { depth: number })[] {
  const ids = new Set(runs.map((r) => r.runId));
  const children = new Map<string, TRun[]>();
  const roots: TRun[] = [];
  for (const run of runs) {
    const parentId = run.parent?.runId;
    if (parentId === undefined || parentId === run.runId || !ids.has(parentId)) {
      roots.push(run);
      continue;
    }
    const siblings = children.get(parentId);
    if (siblings) siblings.push(run);
    else children.set(parentId, [run]);
  }
  for (const siblings of children.values()) siblings.sort(oldestFirst);

  const out: (TRun & { depth: number })[] = [];
  const placed = new Set<string>();
  // Iterative depth-first walk: a hostile feed could chain many runs, and placed ids end loops.
  const place = (root: TRun) => {
    const stack: { run: TRun; depth: number }[] = [{ run: root, depth: 0 }];
    while (stack.length > 0) {
      const { run, depth } = stack.pop()!;
      if (placed.has(run.runId)) continue;
      placed.add(run.runId);
      out.push({ ...run, depth });
      const kids = children.get(run.runId) ?? [];
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ run: kids[i]!, depth: depth + 1 });
    }
  };
  for (const root of [...roots].sort(newestFirst)) place(root);
  // Runs only reachable through a loop of parent links: shown at the top level, newest first.
  for (const run of [...runs].sort(newestFirst)) if (!placed.has(run.runId)) place(run);
  return out;
}

const newestFirst = (a: NestableRun, b: NestableRun) => b.startedAt - a.startedAt || a.runId.localeCompare(b.runId);
const oldestFirst = (a: NestableRun, b: NestableRun) => a.startedAt - b.startedAt || a.runId.localeCompare(b.runId);
