/**
 * Checks a persisted workflow snapshot before restoring it. A snapshot is outside input, and
 * XState trusts it: a child it cannot resolve is silently dropped and the actor waits forever,
 * a finished child never reports back, a wrong-typed context field surfaces as a TypeError deep
 * in a guard. So the whole snapshot is validated (zod schema + the per-state rules below) and
 * every hazard becomes a SnapshotError naming what is wrong.
 */
import { SnapshotError } from "../core/errors.js";
import { isPlainObject, jsonIssue } from "../core/json-value.js";
import type { Workflow } from "../core/workflow.js";
import { canonicalJson } from "../guardrails/canonical-json.js";
import { nextToolInput } from "../loop/actions.js";
import { MACHINE_VERSION, type WorkflowContext } from "../loop/context.js";
import { stateName, WorkflowState } from "../loop/state-name.js";
import { CONTEXT_MESSAGES_REF, childSchema, issueLines, PersistedRunSchema } from "./snapshot-schema.js";

export { CONTEXT_MESSAGES_REF };

/** The JSON form of `actor.getPersistedSnapshot()` for the workflow machine. */
export interface PersistedRun {
  status: "active" | "done" | "error" | "stopped";
  value: unknown;
  context: WorkflowContext;
  children?: Record<string, { src?: unknown; snapshot?: unknown; syncSnapshot?: boolean }>;
  [key: string]: unknown;
}

/** The services the workflow machine invokes; nothing else may appear as a child src. */
export const SERVICE_NAMES = ["infer", "compact", "executeTool"] as const;
type ServiceName = (typeof SERVICE_NAMES)[number];

/** The service each waiting state invokes (its invoke id equals its src). */
const SERVICE_OF_STATE: Record<string, ServiceName> = {
  [WorkflowState.compactingRunning]: "compact",
  [WorkflowState.inferring]: "infer",
  [WorkflowState.executingToolsRunning]: "executeTool",
};

const FINAL_STATES = new Set<string>([WorkflowState.done, WorkflowState.failed, WorkflowState.cancelled]);
const MAX_LISTED_ISSUES = 8;

function malformed(where: string, issues: string[]): SnapshotError {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).join("; ") + (issues.length > MAX_LISTED_ISSUES ? `; … ${issues.length - MAX_LISTED_ISSUES} more` : "");
  return new SnapshotError(`${where} is malformed: ${listed}`, { issues });
}

/**
 * The snapshot, validated for `workflow`, or a SnapshotError.
 *
 * @example
 * const snapshot = assertRestorable(JSON.parse(text), workflow); // throws SnapshotError on any defect
 */
export function assertRestorable(snapshot: unknown, workflow: Workflow): PersistedRun {
  if (!isPlainObject(snapshot) || !isPlainObject(snapshot.context)) {
    throw new SnapshotError("not a persisted workflow snapshot (expected { status, value, context, children })");
  }
  const version = snapshot.context.machineVersion;
  if (typeof version !== "number") {
    throw new SnapshotError(
      `snapshot machineVersion has the wrong type: expected the number ${MACHINE_VERSION}, got ${typeof version} ${JSON.stringify(version) ?? String(version)}`,
      { snapshotVersion: version ?? null, machineVersion: MACHINE_VERSION },
    );
  }
  if (version !== MACHINE_VERSION) {
    throw new SnapshotError(`snapshot was written by machine version ${version}; this forge-ts runs version ${MACHINE_VERSION}`, {
      snapshotVersion: version,
      machineVersion: MACHINE_VERSION,
    });
  }
  const owner = isPlainObject(snapshot.context.run) ? snapshot.context.run.workflow : undefined;
  if (owner !== workflow.name) {
    throw new SnapshotError(`snapshot belongs to workflow ${JSON.stringify(owner)}, not "${workflow.name}"`, {
      snapshotWorkflow: owner ?? null,
      workflow: workflow.name,
    });
  }
  if (snapshot.status !== "active" && snapshot.status !== "done") {
    throw new SnapshotError(
      `snapshot status is ${JSON.stringify(snapshot.status)}: only an active or finished run can be resumed ` +
        "(take the snapshot before stopping the actor; WorkflowRunner.stop() keeps one for you)",
      { status: snapshot.status ?? null },
    );
  }
  const notJson = jsonIssue(snapshot);
  if (notJson) throw new SnapshotError(`snapshot is not plain JSON: ${notJson}`, { issues: [notJson] });
  const parsed = PersistedRunSchema.safeParse(snapshot);
  if (!parsed.success) throw malformed("snapshot", issueLines(parsed.error));
  const run = snapshot as unknown as PersistedRun;
  checkTools(run.context, workflow);
  checkState(run);
  return run;
}

function checkTools(ctx: WorkflowContext, workflow: Workflow): void {
  const used = new Set([...ctx.run.toolNames, ...ctx.run.terminalTools, ...ctx.steps.required, ...(ctx.batch?.calls.map((c) => c.tool) ?? [])]);
  const missingTools = [...used].filter((t) => !Object.hasOwn(workflow.tools, t));
  if (missingTools.length > 0) {
    throw new SnapshotError(`workflow "${workflow.name}" lacks tools the snapshot used: ${missingTools.join(", ")}`, { missingTools });
  }
  // The tool service decides from the workflow which results to keep as the run's result.
  const terminal = [...workflow.terminalTools].sort();
  if (canonicalJson([...ctx.run.terminalTools].sort()) !== canonicalJson(terminal)) {
    throw new SnapshotError(
      `snapshot ends on terminal tools [${ctx.run.terminalTools.join(", ")}], workflow "${workflow.name}" on [${terminal.join(", ")}]`,
      { snapshotTerminalTools: ctx.run.terminalTools, terminalTools: terminal },
    );
  }
}

/** Status, state value, children and context must tell one consistent story. */
function checkState(run: PersistedRun): void {
  const state = stateName(run.value);
  const final = FINAL_STATES.has(state);
  if (final !== (run.status === "done")) {
    throw new SnapshotError(`snapshot status "${run.status}" contradicts its state "${state}"`, { status: run.status, state });
  }
  const ctx = run.context;
  if (state === WorkflowState.done && ctx.terminal === undefined) {
    throw new SnapshotError('snapshot is in state "done" but has no terminal result', { state });
  }
  if ((state === WorkflowState.failed || state === WorkflowState.cancelled) && ctx.error === undefined) {
    throw new SnapshotError(`snapshot is in state "${state}" but carries no error`, { state });
  }
  if (state === WorkflowState.awaitingHuman && !(ctx.batch?.human ?? []).some((r) => r.decision === undefined)) {
    throw new SnapshotError('snapshot is in state "awaitingHuman" but no request is waiting for a decision', { state });
  }
  const children = run.children ?? {};
  const expected = final ? undefined : SERVICE_OF_STATE[state];
  for (const [id, child] of Object.entries(children)) {
    const src = isPlainObject(child) ? child.src : undefined;
    if (typeof src !== "string" || !(SERVICE_NAMES as readonly string[]).includes(src)) {
      throw new SnapshotError(
        `snapshot child "${id}" has service ${JSON.stringify(src)}, which this machine cannot resolve (known: ${SERVICE_NAMES.join(", ")})`,
        { child: id, src: src ?? null },
      );
    }
    if (src !== expected || id !== expected) {
      throw new SnapshotError(`snapshot child "${id}" (service "${src}") does not belong to state "${state}"`, { child: id, src, state });
    }
  }
  // An active run waiting in a service state must carry that service, or restoring would hang.
  if (!expected) return;
  const child = children[expected];
  if (child === undefined) {
    throw new SnapshotError(`snapshot is in state "${state}" but carries no "${expected}" service to resume`, { state });
  }
  const parsed = childSchema(expected).safeParse(child);
  if (!parsed.success) throw malformed(`in-flight "${expected}" service`, issueLines(parsed.error, `children.${expected}`));
  if (expected === "executeTool") checkToolInFlight(ctx, (child.snapshot as { input: Record<string, unknown> }).input);
}

/** The re-run tool call must be the batch's next call, as the machine would have invoked it. */
function checkToolInFlight(ctx: WorkflowContext, input: Record<string, unknown>): void {
  const call = ctx.batch?.calls[ctx.batch.done.length];
  if (!call) {
    throw new SnapshotError("snapshot is running a tool but its batch has no pending call", { batch: ctx.batch ?? null });
  }
  const expected = nextToolInput(ctx);
  const differing = (Object.keys(expected) as (keyof typeof expected)[]).filter((k) => canonicalJson(input[k]) !== canonicalJson(expected[k]));
  if (differing.length > 0) {
    throw new SnapshotError(`the in-flight tool call does not match the batch's next call (${differing.join(", ")} differ)`, { differing });
  }
}

type ChildRecord = NonNullable<PersistedRun["children"]>[string];

function mapChildInputs(snapshot: PersistedRun, map: (input: Record<string, unknown>) => Record<string, unknown>): PersistedRun {
  const children = snapshot.children;
  if (!children) return snapshot;
  const mapped: Record<string, ChildRecord> = {};
  for (const [id, child] of Object.entries(children)) {
    const inner = isPlainObject(child.snapshot) ? child.snapshot : undefined;
    const input = inner && isPlainObject(inner.input) ? inner.input : undefined;
    mapped[id] = input ? { ...child, snapshot: { ...inner, input: map(input) } } : child;
  }
  return { ...snapshot, children: mapped };
}

/**
 * The in-flight service's persisted input repeats the whole history (XState re-runs it with
 * that input on restore). Persist it as a reference to `context.messages` instead: the history
 * cannot change while a service runs, and this halves the snapshot.
 */
export function dehydrate(snapshot: PersistedRun): PersistedRun {
  const messages = snapshot.context.messages;
  return mapChildInputs(snapshot, (input) => (input.messages === messages ? { ...input, messages: CONTEXT_MESSAGES_REF } : input));
}

/** Undo {@link dehydrate} before handing the snapshot to XState. */
export function hydrate(snapshot: PersistedRun): PersistedRun {
  const messages = snapshot.context.messages;
  return mapChildInputs(snapshot, (input) => (input.messages === CONTEXT_MESSAGES_REF ? { ...input, messages } : input));
}
