/**
 * The workflow machine's services: the only place the loop touches the outside world.
 * `infer` serializes the history (incrementally: `WireHistory`) and calls the client
 * (streaming through `onChunk`), `compact` runs the ContextManager, `executeTool` runs one tool with its abort signal,
 * idempotency key and deadline. Each reports the wall clock so the machine's guards stay pure.
 *
 * They are also the boundary where outside values are checked before the machine sees them:
 * a client's answer against the LLMResponse contract, a tool's result against JSON, a user
 * callback's throw turned into a CallbackError.
 */
import type { Context } from "@opentelemetry/api";
import { fromPromise } from "xstate";
import type { CompactOutput, ExecuteToolInput, ExecuteToolOutput, InferInput, InferOutput, CompactInput } from "../../machines/workflow.machine.js";
import type { ContextManager } from "../context/context-manager.js";
import { CallbackError, ClientContractError, InvalidArgumentError, StreamError, ToolTimeoutError } from "../core/errors.js";
import type { AnyToolDef, ChildRunOptions, ToolExecuteContext } from "../core/tool.js";
import type { ChildCall } from "./child-run.js";
import type { LLMClient, LLMResponse, RequestOverrides, SendOptions, StreamChunk } from "../core/llm.js";
import type { ReasoningReplay, WireMessage } from "../core/wire-messages.js";
import type { Workflow } from "../core/workflow.js";
import { cloneJson } from "../core/json-clone.js";
import { assertLLMResponse, assertStreamChunk, clientName, previewValue } from "../core/response-contract.js";
import { capToolOutput, toolOutput } from "../loop/tool-output.js";
import { WireHistory } from "../loop/wire-history.js";
import { outcomeFromError } from "../loop/actions.js";
import { isUnencodableTerminalResult } from "../loop/guards.js";
import { RecordedToolError } from "../loop/tool-output.js";
import type { RunEvent } from "../persistence/run-store.js";
import type { RunTrace } from "../telemetry/run-trace.js";

export interface ServiceOptions {
  workflow: Workflow;
  client: LLMClient;
  contextManager: ContextManager;
  reasoningReplay: ReasoningReplay;
  /** Sent with every model call (the runner's `request` option). */
  request?: RequestOverrides;
  stream: boolean;
  onChunk?: (chunk: StreamChunk) => void | Promise<void>;
  now: () => number;
  /** Deadline for one tool call in ms when the tool sets none (`defineTool({ timeoutMs })` wins). */
  toolTimeoutMs?: number;
  /** What the model sees of a result, in chars, when the tool sets none (`defineTool({ maxResultChars })` wins). */
  maxResultChars?: number;
  /**
   * The error that already ended the run outside the machine (a callback threw), if any. A
   * service started in the same step as that failure must not begin its I/O.
   */
  haltedBy?: () => Error | undefined;
  /** Awaited before each tool runs: the run's checkpoint with every finished result is durable first. */
  beforeTool?: () => Promise<void>;
  /** Outcomes written ahead before a crash, by idempotency key: taken instead of running the tool again. */
  recorded?: ReadonlyMap<string, RecordedOutcome>;
  /** Awaited with each finished call's outcome before the machine takes it in (write-ahead). */
  afterTool?: (outcome: RecordedOutcome) => Promise<void>;
  /** The run attempt's spans (absent: tracing is off): model calls and tool calls are traced through it. */
  trace?: RunTrace;
  /** Runs a workflow as a call's child run: what a tool gets as `ctx.runChild` (see src/runner/child-run.ts). */
  runChild?: (call: ChildCall, workflow: Workflow, message: string, options?: ChildRunOptions) => Promise<unknown>;
}

/** A finished call's outcome as the run's log records it. */
export type RecordedOutcome = Extract<RunEvent, { type: "outcome" }>;

/** What the machine's three services do for one run. */
export interface WorkflowServices {
  infer(input: InferInput, signal: AbortSignal): Promise<InferOutput>;
  compact(input: CompactInput): Promise<CompactOutput>;
  executeTool(input: ExecuteToolInput, signal: AbortSignal): Promise<ExecuteToolOutput>;
}

/** @example const services = createServices({ workflow: wf, client, ... }); // one run's */
export function createServices(o: ServiceOptions): WorkflowServices {
  const { client, contextManager, workflow, now } = o;
  // Read per model call, not once: an MCP tool's description and schema follow its server's
  // tools/list_changed, and the model must see the schema its arguments are checked against.
  const specs = () => workflow.getToolSpecs();
  const name = clientName(client);
  // The run's history in wire form, extended call to call.
  const history = new WireHistory(client.apiFormat, o.reasoningReplay);
  const throwIfHalted = () => {
    const halted = o.haltedBy?.();
    if (halted) throw halted;
  };

  // One model call's options: its signal and trace context, and the runner's request defaults.
  const sendOptions = (signal: AbortSignal, traceContext: Context | undefined): SendOptions => ({
    signal,
    ...(traceContext ? { traceContext } : {}),
    ...(o.request ? { request: o.request } : {}),
  });

  async function streamed(wire: WireMessage[], signal: AbortSignal, traceContext: Context | undefined): Promise<LLMResponse> {
    const stream: unknown = client.sendStream!(wire, specs(), sendOptions(signal, traceContext));
    if (typeof (stream as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] !== "function") {
      throw new ClientContractError(name, ["sendStream must return an AsyncIterable of stream chunks"], previewValue(stream));
    }
    let response: LLMResponse | undefined;
    for await (const raw of stream as AsyncIterable<unknown>) {
      const chunk = assertStreamChunk(raw, name) as StreamChunk;
      // Checked before onChunk sees it: consumers render the FINAL response too.
      if (chunk.type === "final") response = assertLLMResponse(chunk.response, name);
      if (o.onChunk) await deliverChunk(o.onChunk, chunk);
    }
    if (!response) throw new StreamError();
    return response;
  }

  async function request(wire: WireMessage[], signal: AbortSignal, traceContext: Context | undefined): Promise<LLMResponse> {
    if (o.stream && client.sendStream) return streamed(wire, signal, traceContext);
    return assertLLMResponse(await client.send(wire, specs(), sendOptions(signal, traceContext)), name);
  }

  // A call's output, shaped and timed (the tool's own deadline, maxResultChars, the clock).
  async function runTool(tool: AnyToolDef, input: ExecuteToolInput, signal: AbortSignal, traceContext: Context | undefined): Promise<ExecuteToolOutput> {
    const timeoutMs = tool.timeoutMs ?? o.toolTimeoutMs;
    const result = await withDeadline(signal, timeoutMs, () => new ToolTimeoutError(tool.name, timeoutMs!), (toolSignal) =>
      // A copy: a tool that mutates its arguments (a BigInt, a cycle) must not reach the
      // machine's context, which stays plain JSON.
      tool.execute(cloneJson(input.args), {
        signal: toolSignal,
        idempotencyKey: input.idempotencyKey,
        runId: input.runId,
        iteration: input.iteration,
        callIndex: input.index,
        ...(o.runChild ? { runChild: childRunner(o.runChild, input, toolSignal, traceContext) } : {}),
      }),
    );
    // The model sees at most maxResultChars; the whole text rides along for the caller (toolEnd).
    const shaped = capToolOutput(toolOutput(tool.name, result, workflow.isTerminal(tool.name)), tool.maxResultChars ?? o.maxResultChars);
    return { ...shaped, now: now() };
  }

  return {
    async infer(input, signal) {
      throwIfHalted();
      const wire = history.serialize(input.messages);
      const trace = o.trace;
      const response = trace
        ? await trace.chat(input.iteration + 1, input.messages, (traceContext) => request(wire, signal, traceContext))
        : await request(wire, signal, undefined);
      // Backends that report no usage still count against token budgets, by estimate.
      const usage = response.usage ?? {
        inputTokens: contextManager.estimateTokens(input.messages, { chars4Tokens: input.tokens }),
        outputTokens: Math.ceil(JSON.stringify(response).length / 4),
      };
      return { response, usage, now: now() };
    },

    async compact(input) {
      throwIfHalted();
      const { messages, event } = contextManager.compact(input.messages, {
        stepIndex: input.iteration,
        stepHint: input.stepHint,
        chars4Tokens: input.tokens,
      });
      return { messages, event, now: now() };
    },

    async executeTool(input, signal) {
      throwIfHalted();
      const key = input.idempotencyKey;
      const recorded = o.recorded?.get(key);
      const trace = o.trace;
      if (recorded) {
        // Finished before a crash and written ahead: the tool does not run again.
        const answer = async () => {
          if (recorded.error) throw new RecordedToolError(recorded.error.status, recorded.error.content);
          return recorded.output as ExecuteToolOutput;
        };
        return trace ? trace.tool({ tool: input.tool, callId: input.callId, args: input.args, replayed: true }, answer) : answer();
      }
      if (o.beforeTool) {
        await o.beforeTool();
        throwIfHalted();
      }
      const tool = workflow.getTool(input.tool);
      let output: ExecuteToolOutput;
      try {
        output = trace
          ? await trace.tool({ tool: input.tool, callId: input.callId, args: input.args }, (traceContext) => runTool(tool, input, signal, traceContext))
          : await runTool(tool, input, signal, undefined);
      } catch (error) {
        // A call cut off (the run cancelled or stopped) has no outcome: it runs again on resume.
        // A fatal one fails the run: nothing to resume into.
        if (o.afterTool && !signal.aborted && !o.haltedBy?.() && !isUnencodableTerminalResult(error)) {
          const { status, content } = outcomeFromError(tool.name, error);
          await o.afterTool({ type: "outcome", key, error: { status: status === "resolution" ? "resolution" : "error", content } });
        }
        throw error;
      }
      await o.afterTool?.({ type: "outcome", key, output });
      return output;
    },
  };
}

/**
 * The machine's service actors, each running the current run's services. A runner provides
 * them once per workflow (a run's services differ, the statechart does not: providing per run
 * would rebuild every state node, which costs more than a short run).
 */
export function serviceActors(current: () => WorkflowServices) {
  return {
    infer: fromPromise<InferOutput, InferInput>(async ({ input, signal }) => current().infer(input, signal)),
    compact: fromPromise<CompactOutput, CompactInput>(async ({ input }) => current().compact(input)),
    executeTool: fromPromise<ExecuteToolOutput, ExecuteToolInput>(async ({ input, signal }) => current().executeTool(input, signal)),
  };
}

/** `ctx.runChild` for one call: its child run is named after the call, so a call has one. */
function childRunner(runChild: NonNullable<ServiceOptions["runChild"]>, input: ExecuteToolInput, signal: AbortSignal, traceContext: Context | undefined): NonNullable<ToolExecuteContext["runChild"]> {
  let started = false;
  return (workflow, message, options) => {
    if (started) return Promise.reject(new InvalidArgumentError("runChild", `tool "${input.tool}" already ran a child workflow in this call; a call runs at most one`));
    started = true;
    const call = { runId: input.runId, callId: input.callId, iteration: input.iteration, index: input.index, signal, ...(traceContext ? { traceContext } : {}) };
    return runChild(call, workflow, message, options);
  };
}

async function deliverChunk(onChunk: NonNullable<ServiceOptions["onChunk"]>, chunk: StreamChunk): Promise<void> {
  try {
    await onChunk(chunk);
  } catch (error) {
    throw new CallbackError("onChunk", error);
  }
}

/**
 * Run `work` with a signal that follows `signal` and is also aborted after `timeoutMs`; the
 * returned promise rejects with the timeout error on time even if `work` ignores its signal
 * (its eventual settlement is then ignored).
 */
async function withDeadline<T>(
  signal: AbortSignal,
  timeoutMs: number | undefined,
  timeoutError: () => Error,
  work: (signal: AbortSignal) => T | Promise<T>,
): Promise<T> {
  if (timeoutMs === undefined) return work(signal);
  const controller = new AbortController();
  const follow = () => controller.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener("abort", follow, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = timeoutError();
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => work(controller.signal)), deadline]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", follow);
  }
}
