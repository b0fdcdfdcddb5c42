/**
 * Checks a persisted workflow snapshot before restoring it. XState restores an in-flight
 * invoke from `children[id].src`; a src it cannot resolve is silently dropped and the actor
 * then waits forever — so every hazard is turned into a SnapshotError here instead.
 */
import { SnapshotError } from "../core/errors.js";
import { isPlainObject } from "../core/messages.js";
import type { Workflow } from "../core/workflow.js";
import { MACHINE_VERSION, type WorkflowContext } from "../loop/context.js";
import { stateName } from "../loop/state-name.js";

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

/** The service each waiting state invokes. */
const SERVICE_OF_STATE: Record<string, (typeof SERVICE_NAMES)[number]> = {
  compacting: "compact",
  inferring: "infer",
  "executingTools.running": "executeTool",
};

export function assertRestorable(snapshot: unknown, workflow: Workflow): PersistedRun {
  if (!isPlainObject(snapshot) || !isPlainObject(snapshot.context)) {
    throw new SnapshotError("not a persisted workflow snapshot (expected { status, value, context, children })");
  }
  const ctx = snapshot.context as unknown as WorkflowContext;
  if (ctx.machineVersion !== MACHINE_VERSION) {
    throw new SnapshotError(
      `snapshot was written by machine version ${String(ctx.machineVersion)}; this forge-ts runs version ${MACHINE_VERSION}`,
      { snapshotVersion: ctx.machineVersion, machineVersion: MACHINE_VERSION },
    );
  }
  if (ctx.workflow !== workflow.name) {
    throw new SnapshotError(`snapshot belongs to workflow "${ctx.workflow}", not "${workflow.name}"`, {
      snapshotWorkflow: ctx.workflow,
      workflow: workflow.name,
    });
  }
  const missingTools = ctx.toolNames.filter((t) => !(t in workflow.tools));
  if (missingTools.length > 0) {
    throw new SnapshotError(`workflow "${workflow.name}" lacks tools the snapshot used: ${missingTools.join(", ")}`, { missingTools });
  }
  if (snapshot.status !== "active" && snapshot.status !== "done") {
    throw new SnapshotError(
      `snapshot status is "${String(snapshot.status)}": only an active or finished run can be resumed ` +
        "(take the snapshot before stopping the actor; WorkflowRunner.stop() keeps one for you)",
      { status: snapshot.status },
    );
  }
  const children = snapshot.children ?? {};
  if (!isPlainObject(children)) throw new SnapshotError("snapshot children must be an object");
  for (const [id, child] of Object.entries(children)) {
    const src = isPlainObject(child) ? child.src : undefined;
    if (typeof src !== "string" || !(SERVICE_NAMES as readonly string[]).includes(src)) {
      throw new SnapshotError(
        `snapshot child "${id}" has service ${JSON.stringify(src)}, which this machine cannot resolve (known: ${SERVICE_NAMES.join(", ")})`,
        { child: id, src },
      );
    }
  }
  // An active run waiting in a service state must carry that service, or restoring would hang.
  const waitingOn = snapshot.status === "active" ? SERVICE_OF_STATE[stateName(snapshot.value)] : undefined;
  if (waitingOn && !Object.values(children).some((c) => isPlainObject(c) && c.src === waitingOn)) {
    throw new SnapshotError(`snapshot is in state "${stateName(snapshot.value)}" but carries no "${waitingOn}" service to resume`, {
      state: stateName(snapshot.value),
    });
  }
  return snapshot as unknown as PersistedRun;
}

/** Stands for `context.messages` inside a persisted service input. */
export const CONTEXT_MESSAGES_REF = "$context.messages";

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
