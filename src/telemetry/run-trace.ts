/**
 * The spans of one run attempt, following the OpenTelemetry GenAI semantic conventions:
 *
 *   invoke_agent <workflow>          (INTERNAL; interventions as events, links to earlier attempts)
 *   ├── chat <model>                 (CLIENT; one per model call, its context sent as `traceparent`)
 *   └── execute_tool <tool>          (INTERNAL; one per call; the tool runs inside its context)
 *
 * The runner creates one per attempt and feeds it the machine's facts and each step's state; the services wrap their
 * I/O in `chat()` and `tool()`. Tracing must never break a run: every OTel call of ours is
 * guarded, and a failure is reported on OTel's own `diag` channel (where exporter errors go),
 * not thrown and not hidden.
 */
import { context as otel, diag, INVALID_SPAN_CONTEXT, isSpanContextValid, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import type { LLMClient, LLMResponse } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { Workflow } from "../core/workflow.js";
import type { WorkflowContext } from "../loop/context.js";
import type { WorkflowFact } from "../loop/facts.js";
import { interventionOf } from "./interventions.js";
import { providerName, requestModel } from "./provider-name.js";
import { finishReason, inputMessagesJson, outputMessagesJson, toolArgumentsJson, type RedactionOf } from "./span-content.js";
import { linkTo, spanRefOf, type SpanRef } from "./span-ref.js";
import { Forge, GenAI } from "./tracer.js";

export interface RunTraceInit {
  tracer: Tracer;
  recordContent: boolean;
  workflow: Workflow;
  client: LLMClient;
  runId: string;
  sessionId?: string | undefined;
  /** The run span's parent: the caller's context (a producer's, extracted from a queued job). */
  parent: Context;
  /** The run span of the attempt this one continues. */
  previous?: SpanRef | undefined;
}

/** One tool call as its span describes it. */
export interface TracedCall {
  tool: string;
  callId: string;
  args: unknown;
  /** Answered from the run's log instead of running (written ahead before a crash). */
  replayed?: boolean;
}

/** How a run attempt ended. */
export type AttemptOutcome = "done" | "failed" | "cancelled" | "waiting";

/**
 * @example
 * const t = new RunTrace({ tracer: forgeTracer(), recordContent: false, workflow, client, runId, parent: context.active() });
 * const response = await t.chat(1, messages, (ctx) => client.send(wire, tools, { traceContext: ctx }));
 * t.end("done", "done", finalContext);
 */
export class RunTrace {
  readonly #init: RunTraceInit;
  readonly #span: Span;
  readonly #context: Context;
  readonly #provider: string;
  readonly #model: string;
  readonly #redactionOf: RedactionOf;
  #ended = false;
  /** The facts of the step in progress. */
  #facts: WorkflowFact[] = [];

  constructor(init: RunTraceInit) {
    this.#init = init;
    const { tracer, workflow, client, runId, sessionId, parent, previous } = init;
    this.#provider = safely("reading the client's provider", () => providerName(client), "unknown");
    this.#model = safely("reading the client's model", () => requestModel(client), "unknown");
    this.#redactionOf = (name) => (workflow.tools[name] as { redact?: readonly string[] } | undefined)?.redact;
    const attributes: Attributes = {
      [GenAI.operationName]: "invoke_agent",
      [GenAI.agentName]: workflow.name,
      [GenAI.providerName]: this.#provider,
      [GenAI.requestModel]: this.#model,
      [Forge.runId]: runId,
      ...(sessionId !== undefined ? { [GenAI.conversationId]: sessionId } : {}),
      ...(previous ? { [Forge.resumed]: true } : {}),
    };
    this.#span = safely(
      "starting the run span",
      () => tracer.startSpan(`invoke_agent ${workflow.name}`, { kind: SpanKind.INTERNAL, attributes, ...(previous ? { links: [linkTo(previous)] } : {}) }, parent),
      trace.wrapSpanContext(INVALID_SPAN_CONTEXT),
    );
    this.#context = trace.setSpan(parent, this.#span);
  }

  /** The run span's identity (undefined when tracing records nothing): kept with the run for later attempts. */
  get ref(): SpanRef | undefined {
    return safely("reading the run span's context", () => spanRefOf(this.#span.spanContext()), undefined);
  }

  /**
   * Nothing of this attempt can be seen: its run span is the no-op API's invalid span (no SDK
   * registered and no caller span to continue), so every span under it would be one too and no
   * context it hands out carries anything to propagate. The runner then skips tracing per step.
   */
  get inert(): boolean {
    return safely("reading the run span", () => !this.#span.isRecording() && !isSpanContextValid(this.#span.spanContext()), false);
  }

  /** The run span's context: what a child run or a queued job continues. */
  get context(): Context {
    return this.#context;
  }

  /** A fact the machine emitted: an intervention is kept for the end of its step. */
  fact(fact: WorkflowFact): void {
    if (!this.#ended) this.#facts.push(fact);
  }

  /** A step ended in `state`: its interventions as events on the run span, and the state it is in. */
  step(state: string): void {
    const facts = this.#facts;
    this.#facts = [];
    if (this.#ended) return;
    safely("recording the run's interventions", () => {
      if (!this.#span.isRecording()) return;
      for (const fact of facts) {
        const e = interventionOf(fact, state);
        if (e) this.#span.addEvent(e.name, e.attributes);
      }
      this.#span.setAttribute(Forge.state, state);
    }, undefined);
  }

  /** A model call under a `chat` span; `send` gets the span's context to inject into its request. */
  async chat(iteration: number, messages: readonly Message[], send: (traceContext: Context) => Promise<LLMResponse>): Promise<LLMResponse> {
    const attributes: Attributes = {
      [GenAI.operationName]: "chat",
      [GenAI.providerName]: this.#provider,
      [GenAI.requestModel]: this.#model,
      [Forge.iteration]: iteration,
    };
    const span = this.#child(`chat ${this.#model}`, SpanKind.CLIENT, attributes);
    if (this.#init.recordContent) safely("recording the input messages", () => span.setAttribute(GenAI.inputMessages, inputMessagesJson(messages, this.#redactionOf)), undefined);
    let response: LLMResponse;
    try {
      response = await send(trace.setSpan(this.#context, span));
    } catch (error) {
      failSpan(span, error, this.#init.recordContent);
      throw error;
    }
    safely("ending the chat span", () => {
      if (response.usage) span.setAttributes({ [GenAI.inputTokens]: response.usage.inputTokens, [GenAI.outputTokens]: response.usage.outputTokens });
      span.setAttribute(GenAI.finishReasons, [finishReason(response)]);
      if (this.#init.recordContent) span.setAttribute(GenAI.outputMessages, outputMessagesJson(response, this.#redactionOf));
      span.end();
    }, undefined);
    return response;
  }

  /**
   * One tool call under an `execute_tool` span. `run` is called inside the span's context (a
   * user's instrumented fetch joins the trace when a context manager is registered) and also
   * gets that context, for what must be given it explicitly (a child run).
   */
  async tool<T extends { content: string }>(call: TracedCall, run: (traceContext: Context) => Promise<T>): Promise<T> {
    const attributes: Attributes = {
      [GenAI.operationName]: "execute_tool",
      [GenAI.toolName]: call.tool,
      [GenAI.toolCallId]: call.callId,
      [GenAI.toolType]: "function",
      ...(call.replayed ? { [Forge.toolReplayed]: true } : {}),
    };
    const span = this.#child(`execute_tool ${call.tool}`, SpanKind.INTERNAL, attributes);
    if (this.#init.recordContent) safely("recording the tool's arguments", () => span.setAttribute(GenAI.toolCallArguments, toolArgumentsJson(call.args, this.#redactionOf(call.tool))), undefined);
    const toolContext = trace.setSpan(this.#context, span);
    let output: T;
    try {
      output = await otel.with(toolContext, () => run(toolContext));
    } catch (error) {
      safely("recording the tool's failure", () => span.setAttribute(Forge.toolStatus, toolStatusOf(error)), undefined);
      failSpan(span, error, this.#init.recordContent);
      throw error;
    }
    safely("ending the tool span", () => {
      span.setAttribute(Forge.toolStatus, "ok");
      if (this.#init.recordContent) span.setAttribute(GenAI.toolCallResult, output.content);
      span.end();
    }, undefined);
    return output;
  }

  /** End the attempt's span with its outcome and the machine's final (or waiting) state. */
  end(outcome: AttemptOutcome, state: string, ctx: WorkflowContext | undefined, error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    safely("ending the run span", () => {
      this.#span.setAttributes({
        [Forge.outcome]: outcome,
        [Forge.state]: state,
        ...(ctx ? { [Forge.iterations]: ctx.iteration, [GenAI.inputTokens]: ctx.usage.inputTokens, [GenAI.outputTokens]: ctx.usage.outputTokens } : {}),
      });
      if (outcome === "failed") {
        this.#span.setAttribute(GenAI.errorType, errorType(error));
        this.#span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error ?? "failed") });
      }
      this.#span.end();
    }, undefined);
  }

  #child(name: string, kind: SpanKind, attributes: Attributes): Span {
    return safely(`starting span "${name}"`, () => this.#init.tracer.startSpan(name, { kind, attributes }, this.#context), trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  }
}

/** A span that ends in an error: `error.type`, ERROR status; the message only with content recording (it may quote arguments). */
function failSpan(span: Span, error: unknown, recordContent: boolean): void {
  safely("recording a failure", () => {
    const type = errorType(error);
    span.setAttribute(GenAI.errorType, type);
    if (recordContent && error instanceof Error) span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: recordContent && error instanceof Error ? error.message : type });
    span.end();
  }, undefined);
}

/** A low-cardinality error type: the forge error's code, else the error's class name. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && code.startsWith("FORGE_")) return code;
  return error instanceof Error && error.name ? error.name : "_OTHER";
}

/** "resolution" for a tool-author error (ToolResolutionError or a recorded one), else "error". */
function toolStatusOf(error: unknown): string {
  const e = error as { name?: unknown; status?: unknown } | null;
  if (e?.name === "ToolResolutionError" || e?.status === "resolution") return "resolution";
  return "error";
}

/**
 * Run `fn`; if tracing code throws (a broken tracer or span processor), report it on OTel's
 * diag channel and go on with `fallback`: the run must not fail because of its telemetry.
 */
function safely<T>(what: string, fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (error) {
    diag.error(`forge-ts tracing: ${what} failed; the run goes on without it`, error);
    return fallback;
  }
}
