/**
 * A run's record in the runner's store, opened once per attempt: the run locked (its lease),
 * its latest commit read, and a checkpoint writer continuing its log. A new run, a stored run
 * resumed or retried by id, and a snapshot object resumed on a runner with a store each open
 * it here; the lock is released again whenever opening fails.
 */
import { InvalidArgumentError, StoreError } from "../core/errors.js";
import { clientName } from "../core/response-contract.js";
import type { WorkflowInput } from "../loop/context.js";
import type { HumanDecisionEvent } from "../loop/human.js";
import { WorkflowState } from "../loop/state-name.js";
import { isFinalStatus, latestRun, sessionRuns, type Checkpoint, type RunEvent, type RunLease, type RunStore } from "../persistence/run-store.js";
import type { PersistedRun } from "../persistence/snapshot.js";
import type { ForgeMetrics } from "../telemetry/metrics.js";
import { redactionMapOf, type RedactionMap } from "../telemetry/redact-run.js";
import type { Workflow } from "../core/workflow.js";
import { countTakeover } from "../telemetry/run-metrics.js";
import { CheckpointWriter, type CheckpointMeta } from "./checkpoints.js";
import type { RunOptions, WorkflowRunnerOptions } from "./options.js";

type OutcomeEvent = Extract<RunEvent, { type: "outcome" }>;

/** What a run on a runner with a store holds while it runs. */
export interface RunRecord {
  lease: RunLease;
  writer: CheckpointWriter;
  /** Outcomes written ahead for calls the restored run has in flight, by idempotency key. */
  recorded: Map<string, OutcomeEvent>;
  /** Decisions in the log of a run restored while waiting for a person (applied first). */
  decisions?: HumanDecisionEvent[];
}

/** The runner's store and what its records need. */
export interface RecordSetup {
  store: RunStore;
  metrics?: ForgeMetrics | undefined;
  now: () => number;
  /** What the writer masks (`redactStoredLogs`). */
  redact?: RedactionMap | undefined;
}

/** The runner's store and what a run's record needs (the workflow's `redact` names, with `redactStoredLogs` only); none without a store. */
export function recordSetup(options: Pick<WorkflowRunnerOptions, "store" | "metrics" | "redactStoredLogs">, workflow: Workflow, now: () => number): RecordSetup | undefined {
  const { store, metrics, redactStoredLogs } = options;
  if (!store) return undefined;
  return { store, metrics, now, redact: redactStoredLogs ? redactionMapOf(workflow.tools) : undefined };
}

/** A new run given the id of one already stored. */
export function runExistsError(runId: string): InvalidArgumentError {
  return new InvalidArgumentError("runId", `run ${runId} already exists in the store: resume it (runner.resume("${runId}", workflow)) or choose another id`);
}

/**
 * A new run's record: refused if the id is taken; its log starts with the start event.
 * `notBefore`: the least creation time it may be stored with (a session turn's: see sessionSeed).
 */
export async function openNewRun(setup: RecordSetup, input: WorkflowInput, options: Pick<RunOptions, "sessionId" | "parent" | "launch"> & { notBefore?: number | undefined }): Promise<RunRecord> {
  const { lease, last } = await leased(setup, input.runId);
  if (last) {
    await lease.release();
    throw runExistsError(input.runId);
  }
  const createdAt = Math.max(input.startedAt, options.notBefore ?? -Infinity);
  const meta = { runId: input.runId, workflow: input.workflow, sessionId: options.sessionId, createdAt, seq: 0, state: "start", status: "active" as const };
  const writer = writerFor(setup, lease, meta);
  writer.record({
    type: "start",
    input,
    ...(options.parent ? { parent: { runId: options.parent.runId, callId: options.parent.callId } } : {}),
    ...(options.launch ? { launch: { ...options.launch } } : {}),
  });
  return { lease, writer, recorded: new Map() };
}

/**
 * A stored run to continue by id: its latest checkpoint (`retry`: the one before its failed or
 * cancelled end), with the outcomes written ahead for its calls in flight and the decisions
 * recorded while it waited.
 */
export async function openStoredRun(setup: RecordSetup, runId: string, how: { retry?: boolean | undefined }): Promise<{ snapshot: PersistedRun; record: RunRecord }> {
  const { lease, last } = await leased(setup, runId);
  try {
    if (!last) throw new StoreError(`the store has no run ${runId}`, runId, "store");
    const checkpoint = how.retry ? await beforeTheEnd(setup.store, last) : last;
    const { workflow, sessionId, createdAt, state, status } = checkpoint;
    const events = state === WorkflowState.executingToolsRunning || state === WorkflowState.awaitingHuman ? await setup.store.events(runId) : [];
    const record: RunRecord = {
      lease,
      writer: writerFor(setup, lease, { runId, workflow, sessionId, createdAt, seq: last.seq, state, status }),
      recorded: state === WorkflowState.executingToolsRunning ? recordedOutcomes(events) : new Map(),
      decisions: state === WorkflowState.awaitingHuman && !how.retry ? recordedDecisions(events) : [],
    };
    return { snapshot: checkpoint.snapshot, record };
  } catch (error) {
    await lease.release();
    throw error;
  }
}

/** A snapshot object resumed on a runner with a store: recorded under its own run id, after what is stored. */
export async function openSnapshotRun(setup: RecordSetup, input: WorkflowInput): Promise<RunRecord> {
  const { lease, last } = await leased(setup, input.runId);
  const meta: CheckpointMeta = {
    runId: input.runId,
    workflow: input.workflow,
    sessionId: last?.sessionId,
    createdAt: last?.createdAt ?? input.startedAt,
    seq: last?.seq ?? 0,
    state: last?.state ?? "start",
    status: last?.status ?? "active",
  };
  return { lease, writer: writerFor(setup, lease, meta), recorded: new Map() };
}

/**
 * The snapshot a session's next turn continues from: its latest run, which must have finished
 * (an unfinished one is resumed, not talked over); none for a new session. `notBefore`: the turn
 * is stored as created after that run. A session's turns are ordered by creation time, which
 * each host takes from its own clock: a turn started on a host whose clock is behind the one
 * that ran the turn before would sort before it, and the turn after would continue the wrong
 * conversation, dropping a turn. Stamped after the turn it continues, each turn sorts after
 * it whatever the clocks say.
 */
export async function sessionSeed(
  store: RunStore | undefined,
  sessionId: string,
  options: { from?: unknown; initialMessages?: unknown; runId?: string | undefined },
): Promise<{ from?: PersistedRun; notBefore?: number }> {
  if (!store) throw new InvalidArgumentError("sessionId", "sessions live in a run store: new WorkflowRunner({ ..., store })");
  if (options.from !== undefined || options.initialMessages !== undefined) {
    throw new InvalidArgumentError("sessionId", "the session's history seeds the turn: give sessionId, or from / initialMessages, not both");
  }
  const runs = sessionRuns(sessionId, await store.listRuns({ sessionId }));
  // The turn itself is already stored (another worker started it first): its id is taken, which
  // a caller handles as for any stored run, rather than "the last turn did not finish".
  if (options.runId !== undefined && runs.some((run) => run.runId === options.runId)) throw runExistsError(options.runId);
  const last = latestRun(runs);
  if (!last) return {};
  if (!isFinalStatus(last.status)) {
    throw new InvalidArgumentError(
      "sessionId",
      `session ${sessionId}'s last turn (run ${last.runId}) did not finish: resume it first (runner.resume("${last.runId}", workflow))`,
    );
  }
  const from = (await store.latest(last.runId))?.snapshot;
  return { ...(from ? { from } : {}), notBefore: last.createdAt + 1 };
}

/** Lock a run and read its latest commit; the lock is released if the read fails. */
async function leased(setup: RecordSetup, runId: string): Promise<{ lease: RunLease; last: Checkpoint | undefined }> {
  const lease = await setup.store.lock(runId);
  if (setup.metrics) countTakeover(setup.metrics, clientName(setup.store), lease);
  try {
    return { lease, last: await setup.store.latest(runId) };
  } catch (error) {
    await lease.release();
    throw error;
  }
}

function writerFor(setup: RecordSetup, lease: RunLease, meta: CheckpointMeta): CheckpointWriter {
  return new CheckpointWriter(setup.store, lease, meta, setup.now, setup.redact ? { redact: setup.redact } : {});
}

/** The decisions recorded in a run's log, in order, as machine events. */
function recordedDecisions(events: readonly RunEvent[]): HumanDecisionEvent[] {
  const out: HumanDecisionEvent[] = [];
  for (const e of events) if (e.type === "decision") out.push({ type: "human.decide", callId: e.callId, decision: e.decision, at: e.at });
  return out;
}

/** A failed or cancelled run's checkpoint just before its end, or an error saying why there is none to retry. */
async function beforeTheEnd(store: RunStore, last: Checkpoint): Promise<Checkpoint> {
  const { runId, state } = last;
  if (state !== WorkflowState.failed && state !== WorkflowState.cancelled) {
    throw new InvalidArgumentError("runId", `run ${runId} is ${last.status === "active" ? `still active (${state}): resume it` : state}; only a failed or cancelled run can be retried`);
  }
  const before = last.seq > 1 ? await store.latest(runId, { seq: last.seq - 1 }) : undefined;
  if (!before || before.status !== "active") throw new InvalidArgumentError("runId", `run ${runId} ended in its first commit: there is no earlier state to retry from`);
  return before;
}

/** The outcomes written ahead in a run's log, by idempotency key (the latest for a key wins). */
function recordedOutcomes(events: readonly RunEvent[]): Map<string, OutcomeEvent> {
  const recorded = new Map<string, OutcomeEvent>();
  for (const event of events) if (event.type === "outcome") recorded.set(event.key, event);
  return recorded;
}
