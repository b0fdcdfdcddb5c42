/**
 * Time travel: a new run that starts from any earlier commit of another. Every commit of a run
 * stays addressable by its seq (`store.latest(runId, { seq })` rebuilds it); a fork reads one,
 * optionally edits it (the history, the args of calls not yet run) and writes it as the first
 * commit of a new run, with a `fork` event naming where it came from. The parent is never
 * touched; the fork is resumed like any run (`runner.resume(fork.runId, workflow)` / `proceed`).
 *
 * Restore semantics, each a choice:
 * - The fork gets its own id inside the state too (`context.run.id`): call ids and tool
 *   idempotency keys are derived from it, and a fork's tool call must not be deduplicated
 *   against the parent's (an in-flight call's key is rewritten to match). Call ids already in
 *   the history keep the parent's form; they only pair calls with results.
 * - Nothing from the parent's log after the state is carried over: no tool outcomes (a tool in
 *   flight at `at` runs again, under the fork's key) and no decisions (a waiting fork waits for
 *   its own).
 * - The clocks are the parent's (`startedAt`, each request's `askedAt`): the state is the
 *   commit's, unchanged but for the patch, so wall-clock and wait budgets count from the parent's start.
 * - The fork is in no session: a turn of it would otherwise become the session's latest turn.
 */
import { InvalidArgumentError, SnapshotError, StoreError } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import { isPlainObject, jsonIssue } from "../core/json-value.js";
import { compileJsonSchema } from "../core/tool.js";
import type { Workflow } from "../core/workflow.js";
import { estimateTokensChars4 } from "../context/token-estimator.js";
import { canonicalJson } from "../guardrails/canonical-json.js";
import { idempotencyKey } from "../loop/actions.js";
import type { WorkflowContext } from "../loop/context.js";
import { assertRunId, isFinalStatus, type Checkpoint, type RunStatus, type RunStore } from "../persistence/run-store.js";
import { CONTEXT_MESSAGES_REF, issueLines, PersistedRunSchema } from "../persistence/snapshot-schema.js";
import { assertRestorable, type PersistedRun } from "../persistence/snapshot.js";
import { assertWorkflow } from "./options.js";

/** Edits applied to the commit's state before it becomes the fork's first. */
export interface ForkPatch {
  /** The fork's history, from a copy of the commit's (e.g. a user message reworded). */
  messages?: (messages: Message[]) => Message[];
  /**
   * New args for calls of the current batch that have not run yet (a pending request, a
   * planned call), by call id. Checked against the tool's schema: the workflow's when given,
   * else the one a pending request carries; a planned call with neither is taken as given.
   */
  args?: Record<string, Record<string, unknown>>;
}

export interface ForkOptions {
  /** The parent's commit to start from (see `forge-ts runs show <runId> --history`); not a final one. */
  at: number;
  patch?: ForkPatch;
  /** The fork's id (default: a random UUID); must not exist in the store. */
  runId?: string;
  /** When given, the fork's state is checked against it (as resume would) before it is written. */
  workflow?: Workflow;
}

export interface ForkResult {
  runId: string;
  forkedFrom: { runId: string; seq: number };
  /** The state the fork starts in ("inferring", "awaitingHuman", ...) and its store status. */
  state: string;
  status: RunStatus;
}

/**
 * @example
 * const { runId } = await forkRun(store, "quote-1", { at: 3, patch: { messages: (m) => m.map((x, i) => (i === 1 ? { ...x, content: "Quote 900 units" } : x)) } });
 * await runner.resume(runId, workflow); // the parent "quote-1" is unchanged
 */
export async function forkRun(store: RunStore, parentId: string, options: ForkOptions, now: number = Date.now()): Promise<ForkResult> {
  if (typeof parentId !== "string" || parentId === "") throw new InvalidArgumentError("runId", "expected the id of the run to fork");
  if (!isPlainObject(options)) throw new InvalidArgumentError("options", "expected { at, patch?, runId?, workflow? }");
  const { at, patch = {}, workflow } = options;
  if (!Number.isSafeInteger(at) || at < 1) throw new InvalidArgumentError("at", `expected the seq of a commit (a positive integer), got ${JSON.stringify(at)}`);
  assertPatch(patch);
  if (workflow !== undefined) assertWorkflow(workflow);
  const runId = options.runId ?? globalThis.crypto.randomUUID();
  assertRunId(runId);
  if (runId === parentId) throw new InvalidArgumentError("runId", "a fork needs an id of its own, not its parent's");

  // Read without the parent's lease (it may be running): a run's commits are append-only, so
  // commit `at` is the same whenever it is read.
  const checkpoint = await resumableAt(store, parentId, at);
  const snapshot = forkedSnapshot(checkpoint, runId, patch, workflow);
  const lease = await store.lock(runId);
  try {
    if (await store.latest(runId)) throw new InvalidArgumentError("runId", `run ${runId} already exists in the store: choose another id for the fork`);
    const { workflow: name, state, status } = checkpoint;
    const forkedFrom = { runId: parentId, seq: at };
    await store.commit({ runId, fence: lease.fence, seq: 1, workflow: name, state, status, createdAt: now, savedAt: now, events: [{ type: "fork", from: forkedFrom }], snapshot });
    return { runId, forkedFrom, state, status };
  } finally {
    await lease.release();
  }
}

/** The parent's commit `at`, which a run can go on from; else an error naming the nearest earlier one. */
async function resumableAt(store: RunStore, runId: string, at: number): Promise<Checkpoint> {
  const last = await store.latest(runId);
  if (!last) throw new StoreError(`the store has no run ${runId}`, runId, "store");
  if (at > last.seq) throw new InvalidArgumentError("at", `run ${runId} has commits 1 to ${last.seq}, not ${at}`);
  const checkpoint = at === last.seq ? last : await store.latest(runId, { seq: at });
  if (!checkpoint) throw new StoreError(`run ${runId} has no commit ${at}`, runId, "store");
  if (!isFinalStatus(checkpoint.status)) return checkpoint;
  for (let seq = at - 1; seq >= 1; seq--) {
    const earlier = await store.latest(runId, { seq });
    if (earlier && !isFinalStatus(earlier.status)) {
      throw new InvalidArgumentError("at", `commit ${at} of run ${runId} is final (${checkpoint.state}): nothing goes on from there; the nearest earlier commit a fork can start from is ${seq} (${earlier.state})`);
    }
  }
  throw new InvalidArgumentError("at", `commit ${at} of run ${runId} is final (${checkpoint.state}) and no earlier commit can be resumed`);
}

/** The commit's state as the fork's: its own run id (and in-flight key), the patch applied, checked. */
function forkedSnapshot(checkpoint: Checkpoint, runId: string, patch: ForkPatch, workflow: Workflow | undefined): PersistedRun {
  const snapshot = structuredClone(checkpoint.snapshot);
  const ctx: WorkflowContext = snapshot.context;
  // A fork is no call's child (its first event is `fork`, not a start naming a parent).
  const { parent: _parent, ...run } = ctx.run;
  ctx.run = { ...run, id: runId };
  if (patch.messages) patchMessages(snapshot, patch.messages);
  for (const [callId, args] of Object.entries(patch.args ?? {})) patchArgs(snapshot, callId, args, workflow);
  const tool = inFlightTool(snapshot);
  // The in-flight call runs again as the fork's own (its key from its run id); anything else in
  // its input that disagrees with the batch is left for assertForkable to refuse.
  if (tool) Object.assign(tool, { runId, idempotencyKey: idempotencyKey(runId, ctx.iteration, tool.index as number) });
  assertForkable(snapshot, workflow);
  // Kept true to the history the fork starts with (resume recomputes it too; the commit should not lie).
  if (patch.messages) ctx.historyTokens = estimateTokensChars4(ctx.messages);
  return snapshot;
}

/** The patched state, checked as resume will check it (with the workflow) or for its shape alone. */
function assertForkable(snapshot: PersistedRun, workflow: Workflow | undefined): void {
  if (workflow) {
    try {
      assertRestorable(snapshot, workflow);
      return;
    } catch (error) {
      if (error instanceof SnapshotError) throw new InvalidArgumentError("patch", `the fork could not be resumed by workflow "${workflow.name}": ${error.message}`);
      throw error;
    }
  }
  const notJson = jsonIssue(snapshot);
  if (notJson) throw new InvalidArgumentError("patch", `the patched state is not plain JSON: ${notJson}`);
  const parsed = PersistedRunSchema.safeParse(snapshot);
  if (!parsed.success) throw new InvalidArgumentError("patch", `the patched state is malformed: ${issueLines(parsed.error).slice(0, 8).join("; ")}`);
}

function patchMessages(snapshot: PersistedRun, edit: (messages: Message[]) => Message[]): void {
  const ctx = snapshot.context;
  const before = ctx.messages;
  const after = edit(structuredClone(before));
  if (!Array.isArray(after)) throw new InvalidArgumentError("patch.messages", "must return the fork's messages (an array)");
  ctx.messages = after;
  // A service in flight re-runs on the history it was started with: the patched one, if that
  // was the context's (stored as a reference to it already, or as an equal copy).
  const original = canonicalJson(before);
  for (const child of Object.values(snapshot.children ?? {})) {
    const input = childInput(child);
    if (input && Array.isArray(input.messages) && canonicalJson(input.messages) === original) input.messages = CONTEXT_MESSAGES_REF;
  }
}

/**
 * New args for a call of the batch that has not run: in the batch, in its pending request, in
 * the in-flight service's input, and in the model's tool-call message, so the fork's history
 * reads as if the model had proposed them.
 */
function patchArgs(snapshot: PersistedRun, callId: string, args: Record<string, unknown>, workflow: Workflow | undefined): void {
  const ctx = snapshot.context;
  const batch = ctx.batch;
  const index = batch?.calls.findIndex((c) => c.callId === callId) ?? -1;
  const open = batch ? batch.calls.slice(batch.done.length).map((c) => `${c.callId} (${c.tool})`) : [];
  if (!batch || index < 0) throw new InvalidArgumentError("patch.args", `no call ${callId} in this commit's batch; calls not yet run: ${open.join(", ") || "none"}`);
  if (index < batch.done.length) throw new InvalidArgumentError("patch.args", `call ${callId} already ran at this commit; calls not yet run: ${open.join(", ") || "none"}`);
  const call = batch.calls[index]!;
  const request = batch.human?.find((r) => r.callId === callId);
  const validate = workflow?.tools[call.tool]?.validateArgs ?? (request ? compileJsonSchema(request.parameters) : undefined);
  const checked = validate?.(args);
  if (checked && !checked.ok) throw new InvalidArgumentError("patch.args", `args for ${call.tool} (call ${callId}): ${checked.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`);
  const value = checked?.ok ? checked.value : args;
  batch.calls[index] = { ...call, args: value };
  if (request) request.args = value;
  const tool = inFlightTool(snapshot);
  if (tool && tool.callId === callId) tool.args = value;
  for (const m of ctx.messages) for (const c of m.toolCalls ?? []) if (c.callId === callId) c.args = value;
}

function childInput(child: unknown): Record<string, unknown> | undefined {
  const inner = isPlainObject(child) && isPlainObject(child.snapshot) ? child.snapshot : undefined;
  return inner && isPlainObject(inner.input) ? inner.input : undefined;
}

/** The executeTool service's persisted input, when a tool is in flight in this state. */
function inFlightTool(snapshot: PersistedRun): Record<string, unknown> | undefined {
  return childInput(snapshot.children?.executeTool);
}

function assertPatch(patch: unknown): asserts patch is ForkPatch {
  if (!isPlainObject(patch)) throw new InvalidArgumentError("patch", "expected { messages?, args? }");
  if (patch.messages !== undefined && typeof patch.messages !== "function") throw new InvalidArgumentError("patch.messages", "expected a function (messages) => messages");
  if (patch.args === undefined) return;
  if (!isPlainObject(patch.args)) throw new InvalidArgumentError("patch.args", "expected { [callId]: args }");
  for (const [callId, args] of Object.entries(patch.args)) {
    if (!isPlainObject(args)) throw new InvalidArgumentError("patch.args", `args for call ${callId} must be a JSON object`);
  }
}
