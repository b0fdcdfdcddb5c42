/**
 * What a run starts from: the machine's input for a new run (history seed, budgets with their
 * defaults), or a validated snapshot made ready for XState to restore; and the statechart
 * itself, built once per workflow.
 */
import type { Snapshot } from "xstate";
import { createWorkflowMachine, type WorkflowMachine } from "../../machines/workflow.machine.js";
import { createMessage, MessageType, type Message } from "../core/messages.js";
import { isPlainObject } from "../core/json-value.js";
import type { Workflow } from "../core/workflow.js";
import type { ContextManager } from "../context/context-manager.js";
import { estimateTokensChars4 } from "../context/token-estimator.js";
import { DEFAULT_MAX_TOOL_REPEAT } from "../guardrails/loop-break.js";
import { DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE, restoredContext, workflowInputOf, type WorkflowContext, type WorkflowInput } from "../loop/context.js";
import { assertRestorable, hydrate, type PersistedRun } from "../persistence/snapshot.js";
import { serviceActors, type WorkflowServices } from "./services.js";
import { mergeRedactionMaps, redactionMapIn, redactionMapOf, type RedactionMap } from "../telemetry/redact-run.js";
import type { RunOptions, WorkflowRunnerOptions } from "./options.js";

/** The statechart with a workflow's tools, built once per workflow (services are provided by whoever drives it). */
const machines = new WeakMap<Workflow, WorkflowMachine>();

export function machineFor(workflow: Workflow): WorkflowMachine {
  let machine = machines.get(workflow);
  if (!machine) {
    machine = createWorkflowMachine({ tools: workflow.tools });
    machines.set(workflow, machine);
  }
  return machine;
}

/** The statechart of `workflow` whose service actors run `current()`'s services. */
export function machineWith(workflow: Workflow, current: () => WorkflowServices): WorkflowMachine {
  return machineFor(workflow).provide({ actors: serviceActors(current) });
}

/** The machine input of a new run (options already validated). */
export function runInput(
  o: Readonly<WorkflowRunnerOptions>,
  workflow: Workflow,
  userMessage: string,
  options: RunOptions,
  now: number,
): WorkflowInput {
  const seed = options.from ? assertRestorable(options.from, workflow).context.messages : options.initialMessages;
  const messages: Message[] = seed
    ? [...seed]
    : [createMessage("system", systemPrompt(workflow, options.promptVars), MessageType.SYSTEM_PROMPT)];
  if (userMessage.length > 0 || !seed) messages.push(createMessage("user", userMessage, MessageType.USER_INPUT));
  return {
    runId: options.runId ?? globalThis.crypto.randomUUID(),
    workflow: workflow.name,
    messages,
    toolNames: workflow.toolNames,
    terminalTools: [...workflow.terminalTools],
    requiredSteps: [...workflow.requiredSteps],
    prerequisites: Object.fromEntries(Object.values(workflow.tools).map((t) => [t.name, [...t.prerequisites]])),
    budget: {
      maxIterations: o.maxIterations ?? 10,
      maxRetries: o.maxRetries ?? o.maxRetriesPerStep ?? 3,
      maxToolErrors: o.maxToolErrors ?? 2,
      maxPremature: o.maxPrematureAttempts ?? 3,
      maxPrereq: o.maxPrereqViolations ?? 2,
      maxToolRepeat: o.maxToolRepeat ?? DEFAULT_MAX_TOOL_REPEAT,
      ...(o.maxTotalTokens !== undefined ? { maxTotalTokens: o.maxTotalTokens } : {}),
      ...(o.maxWallClockMs !== undefined ? { maxWallClockMs: o.maxWallClockMs } : {}),
      ...(o.maxWaitMs !== undefined ? { maxWaitMs: o.maxWaitMs, onWaitTimeout: o.onWaitTimeout ?? "reject" } : {}),
      maxToolCallsPerResponse: o.maxToolCallsPerResponse ?? DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE,
    },
    switches: { rescueEnabled: o.rescueEnabled ?? true, stepEnforcement: o.stepEnforcement ?? true },
    startedAt: now,
    compactAt: o.contextManager.chars4Trigger,
    ...(options.parent ? { parent: { runId: options.parent.runId, callId: options.parent.callId } } : {}),
    ...redactionOf(workflow.tools, undefined),
  };
}

/** The run's redaction map: its workflow's, plus what the run already masked (a resume never unmasks). */
function redactionOf(tools: Workflow["tools"], carried: RedactionMap | undefined): { redact?: Record<string, string[]> } {
  const map = mergeRedactionMaps(carried, redactionMapOf(tools));
  return map ? { redact: Object.fromEntries(Object.entries(map).map(([tool, keys]) => [tool, [...keys]])) } : {};
}

function systemPrompt(workflow: Workflow, vars: Record<string, string> | undefined): string {
  const rendered = workflow.buildSystemPrompt(vars ?? {});
  if (rendered.length > 0) return rendered;
  // An empty template still needs a system message: compaction protects messages[0].
  return `You complete the "${workflow.name}" workflow by calling its tools.${workflow.description ? ` ${workflow.description}` : ""}`;
}

/**
 * A snapshot checked against `workflow` (SnapshotError otherwise) and ready for XState: the
 * history reference in the in-flight service's input resolved, the context's running totals
 * recomputed (older snapshots lack them), and the in-flight service given the same total.
 * The caller's object is not modified.
 */
export function restorableRun(
  snapshot: PersistedRun,
  workflow: Workflow,
  contextManager: ContextManager,
): { persisted: Snapshot<unknown>; input: WorkflowInput } {
  const run = hydrate(assertRestorable(snapshot, workflow));
  const restoredCtx = restoredContext(run.context, contextManager.chars4Trigger);
  const ctx = { ...restoredCtx, run: { ...restoredCtx.run, ...redactionOf(workflow.tools, redactionMapIn(restoredCtx)) } };
  const children = run.children && Object.fromEntries(Object.entries(run.children).map(([id, child]) => [id, withTokens(child, run.context.messages, ctx)]));
  const restored: PersistedRun = { ...run, context: ctx, ...(children ? { children } : {}) };
  // XState ignores `input` when a snapshot is given; the context's own copy keeps types honest.
  const input = workflowInputOf(ctx);
  // Shape was checked by assertRestorable; XState's snapshot type is opaque here.
  return { persisted: restored as unknown as Snapshot<unknown>, input };
}

type Child = NonNullable<PersistedRun["children"]>[string];

/** A service input over a history carries that history's token total, recomputed (a snapshot is outside input). */
function withTokens(child: Child, messages: Message[], ctx: WorkflowContext): Child {
  const inner = isPlainObject(child.snapshot) ? child.snapshot : undefined;
  const input = inner && isPlainObject(inner.input) ? inner.input : undefined;
  if (!input || !Array.isArray(input.messages)) return child;
  const tokens = input.messages === messages ? ctx.historyTokens : estimateTokensChars4(input.messages as Message[]);
  return { ...child, snapshot: { ...inner, input: { ...input, tokens } } };
}
