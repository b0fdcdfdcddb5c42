/**
 * Deterministic replay: re-drive the workflow statechart from a run's event log, with no model
 * and no tools. The log's `start` event is the machine input; each inference answers with the
 * response recorded for that iteration (its usage and clock), each tool call with the outcome
 * recorded for its call id, each wait for a person with the decisions recorded for its requests;
 * compaction runs the given context manager (it is deterministic: pass one configured like the
 * run's). Where a call was recorded twice (a crash, then a resume), the later record is the one
 * the run went on with.
 *
 * The replay walks the same states and ends with the same messages, steps and result as the
 * run; it is what a visualizer plays back.
 */
import { createActor, type InspectionEvent } from "xstate";
import type { CompactOutput, ExecuteToolOutput, InferOutput } from "../../machines/workflow.machine.js";
import { ContextManager } from "../context/context-manager.js";
import { NoCompact } from "../context/no-compact.js";
import { reviveError, RunNotReplayableError, StoreError } from "../core/errors.js";
import type { Usage } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { Workflow } from "../core/workflow.js";
import type { WorkflowContext } from "../loop/context.js";
import { pendingRequests } from "../loop/human.js";
import { stateName, WorkflowState } from "../loop/state-name.js";
import { RecordedToolError } from "../loop/tool-output.js";
import type { RunEvent, RunStore } from "../persistence/run-store.js";
import type { WorkflowServices } from "./services.js";
import { machineWith } from "./run-input.js";

export interface ReplayOptions {
  /** Compaction as the run did it (default: none, with a budget no history reaches). */
  contextManager?: ContextManager;
  /** XState inspection of the replaying actor (the visualizer plays a stored run back from these). */
  inspect?: (event: InspectionEvent) => void;
}

export interface ReplayResult {
  /** Every state entered, in order (macrosteps, as `onStateChange` reports them). */
  states: string[];
  /**
   * The final state: "done", "failed", "cancelled", "waiting" when the run waits for a person's
   * decision the log does not have yet, or "incomplete" when the log stops first.
   */
  state: string;
  context: WorkflowContext;
  messages: Message[];
  /** The terminal tool's result (state "done"). */
  result?: unknown;
}

type ResponseEvent = Extract<RunEvent, { type: "response" }>;
type ToolEndEvent = Extract<RunEvent, { type: "toolEnd" }>;
type DecisionEvent = Extract<RunEvent, { type: "decision" }>;

/** The log ran out before the run's end (it was cancelled, or is still going): the replay stops there. */
class LogExhausted extends Error {}

/**
 * @example
 * const replay = await replayRun(store, "quote-1", workflow);
 * replay.states; // ["inferring", "executingTools.running", ..., "done"]
 */
export async function replayRun(store: RunStore, runId: string, workflow: Workflow, options: ReplayOptions = {}): Promise<ReplayResult> {
  const events = await store.events(runId);
  const start = events.find((e): e is Extract<RunEvent, { type: "start" }> => e.type === "start");
  if (!start) throw new StoreError(`run ${runId} has no start event to replay from (runs recorded before event logs had one, or not by run())`, runId, "events");
  // Masked arguments would be validated, matched and counted as other calls than the run made:
  // the replay would diverge without saying so. Refuse instead.
  const masked = events.find((e) => (e.type === "start" || e.type === "response") && e.redacted === true);
  if (masked) {
    const where = masked.type === "response" ? `the model response of iteration ${masked.iteration}` : "its seed messages";
    throw new RunNotReplayableError(runId, `${where} had tool-call arguments masked when stored (redactStoredLogs); resume the run instead, or run it without redactStoredLogs to keep it replayable`);
  }
  const responses = new Map<number, ResponseEvent>();
  const tools = new Map<string, ToolEndEvent>();
  const decisions = new Map<string, DecisionEvent>();
  for (const e of events) {
    if (e.type === "response") responses.set(e.iteration, e);
    else if (e.type === "toolEnd") tools.set(e.callId, e);
    // A call is decided once (a repeat is never recorded): the first record is the decision.
    else if (e.type === "decision" && !decisions.has(e.callId)) decisions.set(e.callId, e);
  }
  const end = [...events].reverse().find((e): e is Extract<RunEvent, { type: "end" }> => e.type === "end");
  const contextManager = options.contextManager ?? new ContextManager({ budgetTokens: Number.MAX_SAFE_INTEGER, strategy: new NoCompact() });
  let clock = start.input.startedAt;
  let totals: Usage = { inputTokens: 0, outputTokens: 0 };

  const services: WorkflowServices = {
    async infer(input): Promise<InferOutput> {
      const recorded = responses.get(input.iteration + 1);
      if (!recorded) throw new LogExhausted(`no response recorded for iteration ${input.iteration + 1}`);
      const usage = { inputTokens: recorded.usage.inputTokens - totals.inputTokens, outputTokens: recorded.usage.outputTokens - totals.outputTokens };
      totals = recorded.usage;
      clock = recorded.now;
      return { response: recorded.response, usage, now: recorded.now };
    },
    async compact(input): Promise<CompactOutput> {
      const { messages, event } = contextManager.compact(input.messages, { stepIndex: input.iteration, stepHint: input.stepHint, chars4Tokens: input.tokens });
      return { messages, event, now: clock };
    },
    async executeTool(input): Promise<ExecuteToolOutput> {
      const recorded = tools.get(input.callId);
      if (!recorded) {
        // A terminal tool whose result had no JSON form ended the run without an outcome.
        if (end?.error?.code === "FORGE_TOOL_RESULT") throw reviveError(end.error);
        throw new LogExhausted(`no outcome recorded for call ${input.callId}`);
      }
      if (recorded.status === "ok") {
        if (recorded.now !== undefined) clock = recorded.now;
        const whole = recorded.fullContent !== undefined ? { fullContent: recorded.fullContent } : {};
        return { content: recorded.content, ...("result" in recorded ? { result: recorded.result } : {}), ...whole, now: clock };
      }
      throw new RecordedToolError(recorded.status === "resolution" ? "resolution" : "error", recorded.content);
    },
  };

  const actor = createActor(machineWith(workflow, () => services), { input: start.input, ...(options.inspect ? { inspect: options.inspect } : {}) });
  const states: string[] = [];
  let exhausted = false;
  let waiting = false;
  const sent = new Set<string>();
  const settled = new Promise<void>((resolve) => {
    actor.on("service.error", (e) => {
      if (e.error instanceof LogExhausted) exhausted = true;
    });
    actor.subscribe({
      next: (snapshot) => {
        const state = stateName(snapshot.value);
        if (states.at(-1) !== state) states.push(state);
        if (snapshot.status === "done") return resolve();
        if (state !== WorkflowState.awaitingHuman) return;
        // The person's decisions as the run took them; one the log lacks: the run still waits.
        const pending = pendingRequests(snapshot.context);
        for (const request of pending) {
          const logged = decisions.get(request.callId);
          if (!logged || sent.has(request.callId)) continue;
          sent.add(request.callId);
          actor.send({ type: "human.decide", callId: logged.callId, decision: logged.decision, at: logged.at });
        }
        if (pending.some((r) => !decisions.has(r.callId))) {
          waiting = true;
          resolve();
        }
      },
      error: () => resolve(),
    });
  });
  actor.start();
  await settled;
  const snapshot = actor.getSnapshot();
  const context = snapshot.context;
  // A log that stops early belongs to a cancelled run (or one still going).
  const state = waiting ? "waiting" : exhausted ? (end?.state === WorkflowState.cancelled ? "cancelled" : "incomplete") : stateName(snapshot.value);
  return { states, state, context, messages: context.messages, ...(context.terminal ? { result: context.terminal.result } : {}) };
}
