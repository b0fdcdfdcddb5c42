/**
 * The `Guardrails` facade for foreign loops (seed 002, "Middleware"): `check(response)` before
 * executing anything, `record(results)` after. It is the workflow machine itself, stepped with
 * XState's pure transitions (no actor runs, no service is invoked): a response goes in as the
 * `infer` service's output, each executed call as the `executeTool` service's outcome. So a
 * foreign loop gets the runner's decisions, counters and errors, from the runner's own guards
 * and actions; the caller routes the returned results into its own history.
 */
import { createActor, type AnyActorScope, type SnapshotFrom } from "xstate";
import { createWorkflowMachine, type CompactOutput, type ExecuteToolOutput, type InferOutput, type WorkflowEmitted, type WorkflowMachine } from "../../machines/workflow.machine.js";
import { InvalidArgumentError, reviveError, ToolResolutionError, type ForgeError } from "../core/errors.js";
import type { LLMResponse, ToolCall } from "../core/llm.js";
import { MessageType, type Message } from "../core/messages.js";
import type { AnyToolDef } from "../core/tool.js";
import { DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE } from "../guardrails/assess-response.js";
import type { BlockedResult } from "../guardrails/blocked-batch.js";
import { budgetOption } from "../guardrails/budget.js";
import { DEFAULT_MAX_TOOL_REPEAT } from "../guardrails/loop-break.js";
import type { Nudge } from "../guardrails/nudges.js";
import { assertValidatorTools, toolDefinitions, toolNamesOf, type ValidatedCall, type ValidatorTools } from "../guardrails/response-validator.js";
import { pendingSteps, stepTier, summaryHint, type CompletedStep } from "../guardrails/step-enforcer.js";
import { callCountEntries } from "../loop/call-counts.js";
import type { WorkflowInput } from "../loop/context.js";
import { validatedCalls } from "../loop/guards.js";
import { WorkflowState } from "../loop/state-name.js";

export type GuardrailDecision =
  | { action: "execute"; toolCalls: ValidatedCall[] }
  | { action: "retry"; nudge: Nudge }
  | { action: "tool_error"; toolCalls: ToolCall[]; results: BlockedResult[] }
  | { action: "step_blocked"; toolCalls: ValidatedCall[]; results: BlockedResult[]; kind: "step" | "prerequisite"; tier: number }
  | { action: "fatal"; error: ForgeError };

export interface GuardrailsOptions {
  /** Tool definitions: enables schema validation and prerequisites. Give this or `toolNames`. */
  tools?: Readonly<Record<string, AnyToolDef>>;
  /** Bare tool names (no schema or prerequisite checks). Include "respond" for the synthetic respond tool. */
  toolNames?: readonly string[];
  requiredSteps?: readonly string[];
  terminalTools?: string | readonly string[];
  rescueEnabled?: boolean;
  maxRetries?: number;
  maxToolErrors?: number;
  maxPrematureAttempts?: number;
  maxPrereqViolations?: number;
  maxToolRepeat?: number;
  /** More calls than this in one response: none run, the model gets a retry nudge. Default 64, as the runner. */
  maxToolCallsPerResponse?: number;
}

/** What happened to one executed call. `resolution`: the tool found no data for valid arguments (ToolResolutionError). */
export interface ExecutedResult {
  tool: string;
  /** Informational: the decision's arguments are the ones recorded. */
  args?: unknown;
  ok: boolean;
  resolution?: boolean;
  /** The thrown value: its message is what a fatal ToolExecutionError reports. */
  error?: unknown;
}

type Snapshot = SnapshotFrom<WorkflowMachine>;
/** The services' outcomes, as XState delivers them to the invoking state. */
type ServiceEvent =
  | { type: "xstate.done.actor.compact"; output: CompactOutput }
  | { type: "xstate.done.actor.infer"; output: InferOutput }
  | { type: "xstate.done.actor.executeTool"; output: ExecuteToolOutput }
  | { type: "xstate.error.actor.executeTool"; error: unknown };
/** What a transition asks to be executed; only the emitted events are read. */
type Action = { type: string; params?: unknown };

/**
 * The machine's history is the foreign loop's business, not the facade's: once the scratch
 * history the actions append passes this many tokens, the facade's compaction empties it.
 */
const SCRATCH_TOKENS = 16_384;
const NO_USAGE = { inputTokens: 0, outputTokens: 0 };

/**
 * @example
 * const guard = new Guardrails({ tools: { search, answer }, requiredSteps: ["search"], terminalTools: "answer" });
 * const decision = guard.check(await model.send(messages));
 * if (decision.action === "execute") {
 *   const results = await runTools(decision.toolCalls);
 *   const { done, fatal } = guard.record(results);
 * }
 */
export class Guardrails {
  readonly toolNames: readonly string[];
  readonly maxToolRepeat: number;
  readonly #machine: WorkflowMachine;
  readonly #scope: AnyActorScope;
  /** Actions of the last transition (their emitted events are what it appended). */
  readonly #actions: Action[] = [];
  #snapshot: Snapshot;

  constructor(options: GuardrailsOptions) {
    if ((options.tools === undefined) === (options.toolNames === undefined)) {
      throw new InvalidArgumentError("tools", "give exactly one of tools (definitions) or toolNames");
    }
    const given: unknown = options.tools ?? options.toolNames;
    assertValidatorTools(given);
    const tools: ValidatorTools = Array.isArray(given) ? [...given] : (given as Readonly<Record<string, AnyToolDef>>);
    this.toolNames = Object.freeze(toolNamesOf(tools));
    if (this.toolNames.length === 0) throw new InvalidArgumentError("tools", "at least one tool is required");
    const terminal = typeof options.terminalTools === "string" ? [options.terminalTools] : [...(options.terminalTools ?? [])];
    const required = [...(options.requiredSteps ?? [])];
    for (const [field, list] of [["requiredSteps", required], ["terminalTools", terminal]] as const) {
      const unknown = list.filter((t) => !this.toolNames.includes(t));
      if (unknown.length > 0) throw new InvalidArgumentError(field, `unknown tool(s) ${unknown.join(", ")}; tools are ${this.toolNames.join(", ")}`);
    }
    const both = terminal.filter((t) => required.includes(t));
    if (both.length > 0) throw new InvalidArgumentError("terminalTools", `${both.join(", ")} cannot also be a required step`);
    this.maxToolRepeat = budgetOption("maxToolRepeat", options.maxToolRepeat, DEFAULT_MAX_TOOL_REPEAT);
    const input: WorkflowInput = {
      runId: "guardrails",
      workflow: "guardrails",
      messages: [],
      toolNames: [...this.toolNames],
      terminalTools: terminal,
      requiredSteps: required,
      prerequisites: Object.fromEntries(Object.entries(toolDefinitions(tools)).map(([name, t]) => [name, [...t.prerequisites]])),
      // The runner's defaults; no iteration, token or wall-clock budget: the foreign loop owns those.
      budget: {
        maxIterations: Number.MAX_SAFE_INTEGER,
        maxRetries: budgetOption("maxRetries", options.maxRetries, 3),
        maxToolErrors: budgetOption("maxToolErrors", options.maxToolErrors, 2),
        maxPremature: budgetOption("maxPrematureAttempts", options.maxPrematureAttempts, 3),
        maxPrereq: budgetOption("maxPrereqViolations", options.maxPrereqViolations, 2),
        maxToolRepeat: this.maxToolRepeat,
        maxToolCallsPerResponse: budgetOption("maxToolCallsPerResponse", options.maxToolCallsPerResponse, DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE),
      },
      switches: { rescueEnabled: options.rescueEnabled ?? true, stepEnforcement: true },
      startedAt: 0,
      compactAt: SCRATCH_TOKENS,
    };
    this.#machine = machineFor(tools);
    // Never started: it only lends the transitions a scope. Actions are collected, not run.
    const actor = createActor(this.#machine, { input });
    this.#scope = {
      self: actor,
      id: actor.id,
      sessionId: actor.sessionId,
      system: actor.system,
      logger: () => {},
      defer: () => {},
      emit: () => {},
      stopChild: () => {},
      actionExecutor: (action) => void this.#actions.push(action),
    };
    this.#snapshot = actor.getSnapshot();
  }

  /** Decide what to do with one model response. Call before executing anything. */
  check(response: LLMResponse): GuardrailDecision {
    if (this.#snapshot.matches({ compacting: "running" })) this.#step({ type: "xstate.done.actor.compact", output: { messages: [], event: null, now: 0 } });
    if (!this.#snapshot.matches(WorkflowState.inferring)) throw this.#outOfTurn("check");
    const appended = this.#step({ type: "xstate.done.actor.infer", output: { response, usage: NO_USAGE, now: 0 } });
    const ctx = this.#snapshot.context;
    if (this.#snapshot.matches(WorkflowState.failed)) return { action: "fatal", error: this.#error() };
    if (this.#snapshot.matches(WorkflowState.executingTools)) return { action: "execute", toolCalls: validatedCalls(ctx) };
    const validation = ctx.validation!;
    if (validation.kind === "retry") return { action: "retry", nudge: validation.nudge };
    const results = blockedResults(appended);
    if (validation.kind === "rejected") return { action: "tool_error", toolCalls: validation.calls, results };
    const kind = appended.find((m) => m.role === "tool")?.meta.type;
    if (kind === MessageType.STEP_NUDGE) return { action: "step_blocked", toolCalls: validation.calls, results, kind: "step", tier: stepTier(ctx.counters.premature) };
    if (kind === MessageType.PREREQUISITE_NUDGE) return { action: "step_blocked", toolCalls: validation.calls, results, kind: "prerequisite", tier: ctx.counters.prereq };
    // The loop break: the batch is answered on the tool channel and counts as a tool error.
    return { action: "tool_error", toolCalls: validation.calls, results };
  }

  /**
   * Report the outcome of every call of the last `execute` decision, in its order (the
   * arguments the decision carried are the ones recorded). Successful calls become completed
   * steps; a fully successful batch resets the tool-error, premature and prerequisite counters.
   */
  record(results: readonly ExecutedResult[]): { done: boolean; fatal?: ForgeError } {
    if (!this.#snapshot.matches(WorkflowState.executingTools)) throw this.#outOfTurn("record");
    const planned = this.#snapshot.context.batch!.calls.map((c) => c.tool);
    const given = results.map((r) => r?.tool);
    if (given.length !== planned.length || given.some((tool, i) => tool !== planned[i])) {
      throw new InvalidArgumentError("results", `expected one result per call of the executed batch, in order (${planned.join(", ")}); got ${given.join(", ") || "none"}`);
    }
    for (const r of results) {
      if (r.ok) this.#step({ type: "xstate.done.actor.executeTool", output: { content: "", result: undefined, now: 0 } });
      else this.#step({ type: "xstate.error.actor.executeTool", error: failureOf(r) });
    }
    if (this.#snapshot.matches(WorkflowState.failed)) return { done: false, fatal: this.#error() };
    return { done: this.#snapshot.matches(WorkflowState.done) };
  }

  /** Current counters: the workflow machine's `counters`. */
  get counters(): { retries: number; toolErrors: number; premature: number; prereq: number } {
    return { ...this.#snapshot.context.counters };
  }

  get completedSteps(): CompletedStep[] {
    return [...this.#snapshot.context.steps.completed];
  }

  /** Canonical call key → times the call was started (the loop break's count). */
  get callCounts(): Record<string, number> {
    return Object.fromEntries(callCountEntries(this.#snapshot.context.callCounts));
  }

  pending(): string[] {
    const { required, completed } = this.#snapshot.context.steps;
    return pendingSteps(required, completed);
  }

  summaryHint(): string {
    return summaryHint(this.#snapshot.context.steps.completed);
  }

  /** One transition; returns the messages its actions appended (their emitted events). */
  #step(event: ServiceEvent): Message[] {
    this.#actions.length = 0;
    // The machine's event type lists only the events callers send; service outcomes are XState's own.
    this.#snapshot = this.#machine.transition(this.#snapshot, event as never, this.#scope);
    const appended: Message[] = [];
    for (const action of this.#actions) {
      const emitted = action.type === "xstate.emit" ? (action.params as { event: WorkflowEmitted }).event : undefined;
      if (emitted?.type === "history.message") appended.push(emitted.message);
    }
    return appended;
  }

  #error(): ForgeError {
    return reviveError(this.#snapshot.context.error!) as ForgeError;
  }

  #outOfTurn(method: "check" | "record"): InvalidArgumentError {
    const s = this.#snapshot;
    const why = s.matches(WorkflowState.done)
      ? "the terminal tool already succeeded: start a new Guardrails for the next task"
      : s.matches(WorkflowState.failed)
        ? `the guardrails already gave up (${s.context.error?.code}): start a new Guardrails`
        : method === "check"
          ? "record() the results of the last execute decision first"
          : "record() reports the calls of an execute decision; the last decision was not one";
    return new InvalidArgumentError(method, why);
  }
}

/** The statechart for a tool set, built once per definitions object (as an application keeps its tools). */
const machines = new WeakMap<object, WorkflowMachine>();
function machineFor(tools: ValidatorTools): WorkflowMachine {
  if (Array.isArray(tools)) return createWorkflowMachine({ tools });
  let machine = machines.get(tools);
  if (!machine) machines.set(tools, (machine = createWorkflowMachine({ tools: withoutPeople(tools as Readonly<Record<string, AnyToolDef>>) })));
  return machine;
}

/** Approvals and human input are the foreign loop's own: the facade never waits for a person. */
function withoutPeople(tools: Readonly<Record<string, AnyToolDef>>): Record<string, AnyToolDef> {
  return Object.fromEntries(Object.entries(tools).map(([name, t]) => [name, { ...t, needsApproval: undefined, humanInput: undefined }]));
}

/** The appended tool-channel answers, by their call's position in the batch. */
function blockedResults(appended: readonly Message[]): BlockedResult[] {
  const ids = appended.find((m) => m.meta.type === MessageType.TOOL_CALL)?.toolCalls?.map((c) => c.callId) ?? [];
  return appended
    .filter((m) => m.role === "tool")
    .map((m) => ({ index: ids.indexOf(m.toolCallId!), tool: m.toolName!, content: m.content }));
}

/** A failed call as the executeTool service would have thrown it. */
function failureOf(r: ExecutedResult): unknown {
  if (r.resolution === true) return ToolResolutionError.isInstance(r.error) ? r.error : new ToolResolutionError(r.error instanceof Error ? r.error.message : "no data for these arguments", r.tool);
  return r.error ?? new Error("the tool reported a failure");
}

