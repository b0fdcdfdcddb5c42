/**
 * `forge-ts runs show <runId>`: a run's latest checkpoint; for a waiting run its requests (with
 * the decisions logged since) and the commands that decide and continue it; for a fork where it
 * came from; a child run's parent and a run's children (`workflowTool`); `--history` every
 * commit to fork from, `--events` the event log.
 */
import type { WorkflowContext } from "../loop/context.js";
import type { HumanDecisionEvent } from "../loop/human.js";
import { isDamaged, type Checkpoint, type ListedRun, type RunStore } from "../persistence/run-store.js";
import { childRunsOf, parentLinkOf } from "../runner/child-links.js";
import { requestsWithLog } from "../runner/decisions.js";
import { resumeCommand, type HintFlags } from "../cli-kit/resume-command.js";
import { waitingLines } from "./runs-decide.js";
import { commitHistory, historyLines } from "./runs-fork.js";
import { mergeRedactionMaps, redactContext, redactHumanRequest, redactionMapIn, redactRunEvent } from "../telemetry/redact-run.js";

export interface ShowFlags {
  events?: boolean | undefined;
  history?: boolean | undefined;
  json?: boolean | undefined;
}

/**
 * Runs as an aligned table: id, workflow, session, state, status, seq, saved (and queue job). A
 * run that cannot be read is a row with status "damaged", and a line under the table says where
 * and why.
 */
export function runTable(runs: readonly (ListedRun & { job?: string })[]): string {
  const withJobs = runs.some((r) => r.job !== undefined);
  const job = (r: { job?: string }) => (withJobs ? [r.job ?? "-"] : []);
  const rows = runs.map((r) =>
    isDamaged(r)
      ? [r.runId, "-", r.sessionId ?? "-", "-", "damaged", "-", "-", ...job(r)]
      : [r.runId, r.workflow, r.sessionId ?? "-", r.state, r.status, String(r.seq), new Date(r.savedAt).toISOString(), ...job(r)],
  );
  const head = ["run", "workflow", "session", "state", "status", "seq", "saved", ...(withJobs ? ["job"] : [])];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const table = [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  const damage = runs.filter(isDamaged).map((r) => `damaged ${r.runId}: ${r.damaged.message} (forge-ts runs delete ${r.runId} removes it)`);
  return [...table, ...damage].join("\n");
}

/** `forge-ts runs show`: the latest checkpoint, a waiting run's requests, a fork's origin; --history, --events. */
export async function showMain(store: RunStore, checkpoint: Checkpoint, values: ShowFlags, hints: HintFlags): Promise<number> {
  const { runId } = checkpoint;
  const rawLog = await store.events(runId);
  // What this prints is a report: its tools' `redact` names are masked (the run carries them).
  const start = rawLog.find((e) => e.type === "start");
  const redact = mergeRedactionMaps(redactionMapIn(checkpoint.snapshot.context), start?.type === "start" ? start.input.redact : undefined);
  const log = rawLog.map((e) => redactRunEvent(e, redact, "report"));
  const history = values.history ? await commitHistory(store, checkpoint) : undefined;
  const ctx = redactContext(checkpoint.snapshot.context as WorkflowContext, redact, "report");
  const decisions: HumanDecisionEvent[] = log.flatMap((e) => (e.type === "decision" ? [{ type: "human.decide" as const, callId: e.callId, decision: e.decision, at: e.at }] : []));
  const requests = checkpoint.status === "waiting" ? requestsWithLog(ctx, decisions).map(({ parameters: _schema, index: _index, ...r }) => redactHumanRequest(r, redact)) : undefined;
  const forkedFrom = log.find((e) => e.type === "fork")?.from;
  const parent = parentLinkOf(log);
  const children = (await childRunsOf(store, runId)).map(({ runId: child, callId, workflow, state, status }) => ({ runId: child, callId, workflow, state, status }));
  if (values.json) {
    const extra = {
      ...(requests ? { requests } : {}),
      ...(forkedFrom ? { forkedFrom } : {}),
      ...(parent ? { parent } : {}),
      ...(children.length > 0 ? { children } : {}),
      ...(history ? { history } : {}),
      ...(values.events ? { events: log } : {}),
    };
    console.log(JSON.stringify({ ...checkpoint, snapshot: { ...checkpoint.snapshot, context: ctx }, ...extra }, null, 2));
    return 0;
  }
  const { snapshot: _snapshot, ...info } = checkpoint;
  console.log(runTable([info]));
  if (forkedFrom) console.log(`forked from run ${forkedFrom.runId} at commit ${forkedFrom.seq}`);
  if (parent) console.log(`child of run ${parent.runId} (tool call ${parent.callId})`);
  for (const c of children) console.log(`child run ${c.runId} (${c.workflow}, tool call ${c.callId}): ${c.state}, ${c.status}`);
  console.log(`iteration ${ctx.iteration}, ${ctx.messages.length} messages, steps done: ${ctx.steps.completed.map((s) => s.tool).join(", ") || "none"}`);
  if (ctx.terminal) console.log(`result ${JSON.stringify(ctx.terminal.result)}`);
  if (ctx.error) console.log(`error ${ctx.error.name} (${ctx.error.code}): ${ctx.error.message}`);
  if (requests) {
    const pending = requests.filter((r) => !r.decision);
    for (const r of requests.filter((x) => x.decision)) console.log(`decided ${r.callId} (${r.tool}): ${r.decision!.type}, applied when the run is resumed`);
    console.log(pending.length > 0 ? waitingLines(runId, pending, hints).join("\n") : `every request is decided; continue with: ${resumeCommand(runId, hints)}`);
  }
  if (history) console.log(historyLines(runId, history, hints).join("\n"));
  for (const e of values.events ? log : []) console.log(JSON.stringify(e));
  return 0;
}
