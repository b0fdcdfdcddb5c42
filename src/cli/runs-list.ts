/**
 * `forge-ts runs list` and `forge-ts runs delete`: the store's runs as a table or JSON, a run
 * whose stored record cannot be read marked `damaged` with where (file and line, or table, run
 * and seq) while the others are listed as usual; deleting a run, a damaged one included.
 */
import { InvalidArgumentError } from "../core/errors.js";
import { damagedRun, isDamaged, RUN_STATUSES, type ListedRun, type RunStore } from "../persistence/run-store.js";
import { runTable } from "./runs-show.js";

/** What `--status` takes: a RunStatus, or "damaged" for the runs that cannot be read. */
const LIST_STATUSES: readonly string[] = [...RUN_STATUSES, "damaged"];

export interface ListFlags {
  session?: string | undefined;
  status?: string | undefined;
  redis?: string | undefined;
  json?: boolean | undefined;
}

/** `forge-ts runs list`. */
export async function listMain(store: RunStore, label: string, values: ListFlags): Promise<number> {
  const { status } = values;
  if (status !== undefined && !LIST_STATUSES.includes(status)) {
    throw new InvalidArgumentError("--status", `expected one of ${LIST_STATUSES.join(", ")}, got ${JSON.stringify(status)}`);
  }
  // active: not final (running, or left by a runner that died); waiting: for a person; the others name the final state.
  const runs = (await store.listRuns(values.session ? { sessionId: values.session } : {})).filter((r) => status === undefined || (isDamaged(r) ? status === "damaged" : r.status === status));
  const listed = values.redis ? await withJobs(values.redis, runs) : runs;
  console.log(values.json ? JSON.stringify(listed, null, 2) : listed.length > 0 ? runTable(listed) : `no runs in ${label}`);
  return 0;
}

/** `forge-ts runs delete <runId>`: a run whose records cannot be read is found (named by where) and removed too. */
export async function deleteMain(store: RunStore, runId: string, label: string): Promise<number> {
  const found = await store.latest(runId).catch((error: unknown) => damagedRun(runId, error));
  if (!found) throw new InvalidArgumentError("runId", `no run ${runId} in ${label} (see forge-ts runs list)`);
  await store.deleteRun(runId);
  console.log(isDamaged(found) ? `deleted damaged run ${runId} (${found.damaged.where})` : `deleted run ${runId}`);
  return 0;
}

/** Each run with its queue job, when it has one: BullMQ's state and the progress its worker published. */
async function withJobs(redis: string, runs: ListedRun[]): Promise<(ListedRun & { job?: string })[]> {
  const { createRunQueue } = await import("../queue/run-queue.js");
  const queue = createRunQueue({ redis });
  try {
    const out: (ListedRun & { job?: string })[] = [];
    for (const run of runs) {
      // A damaged run's workflow, which names its queue, cannot be read.
      const job = isDamaged(run) ? undefined : await queue.job(run.workflow, run.runId);
      const p = job?.progress as { state?: unknown; iteration?: unknown } | undefined;
      const progress = p && typeof p.state === "string" ? ` (${p.state}, iteration ${String(p.iteration)})` : "";
      out.push(job ? { ...run, job: `${job.state}${progress}` } : run);
    }
    return out;
  } finally {
    await queue.close();
  }
}
