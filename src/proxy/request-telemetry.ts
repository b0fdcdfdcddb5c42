/**
 * One proxy request's trace and metrics. The request continues the caller's W3C trace
 * (`traceparent`) with a SERVER span `chat <model>`; each backend attempt is a CLIENT span
 * `chat <model>` under it whose context goes to the backend as `traceparent`; guardrail
 * interventions are events on the server span. Counts go to the shared metric set
 * (src/telemetry/metrics.ts), labelled by backend and model through its label bound.
 *
 * Only `@opentelemetry/api`: with no SDK and no propagator registered every call is a no-op.
 * Message content is recorded only when the proxy was told to (`traceContent`): prompts and
 * answers are the caller's data.
 */
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapGetter } from "@opentelemetry/api";
import type { LLMClient, LLMResponse } from "../core/llm.js";
import type { ForgeMetrics } from "../telemetry/metrics.js";
import { Forge, forgeTracer, GenAI } from "../telemetry/tracer.js";
import type { ProxyGuardrailEvent } from "../proxy-request/guardrail-events.js";
import type { Dialect } from "../proxy-request/http-error.js";
import type { ProxyOutcome } from "../proxy-request/proxy-request.js";

export interface RequestTelemetryOptions {
  metrics: ForgeMetrics;
  api: Dialect;
  /** The caller's model name, or the default one when it sent none. */
  model: string;
  /** The caller's request headers: where an incoming `traceparent` is read from. */
  headers: Headers;
  /** Record prompts and answers on the spans (opt-in). */
  traceContent: boolean;
}

/** A request's outcome label: answered, answered with a budget spent, failed, cancelled. */
export type RequestOutcomeLabel = "ok" | "exhausted" | "failed" | "cancelled" | "rejected";

const headerGetter: TextMapGetter<Headers> = {
  get: (carrier, key) => carrier.get(key) ?? undefined,
  keys: (carrier) => [...carrier.keys()],
};

/** What a backend attempt needs: its trace context (the client sends it as `traceparent`), and how to end it. */
export interface AttemptTelemetry {
  context: Context;
  end(response: LLMResponse): void;
  fail(error: unknown): void;
}

/**
 * @example
 * const t = new RequestTelemetry({ metrics, api: "openai", model: "qwen3:8b", headers: request.headers, traceContent: false });
 * const attempt = t.attempt("gpu0", client, "qwen3:8b", 1);   // attempt.context → SendOptions.traceContext
 * attempt.end(response);
 * t.finish(outcome, addedMs);
 */
export class RequestTelemetry {
  readonly #o: RequestTelemetryOptions;
  readonly #span: Span;
  readonly #context: Context;
  readonly #model: string;
  /** The backend of the latest attempt: the one whose answer the guardrails judge. */
  #backend = "none";

  constructor(o: RequestTelemetryOptions) {
    this.#o = o;
    this.#model = o.metrics.label("model", o.model);
    const parent = propagation.extract(ROOT_CONTEXT, o.headers, headerGetter);
    this.#span = forgeTracer().startSpan(
      `chat ${o.model}`.trim(),
      { kind: SpanKind.SERVER, attributes: { [GenAI.operationName]: "chat", [GenAI.requestModel]: o.model, "forge.api": o.api } },
      parent,
    );
    this.#context = trace.setSpan(parent, this.#span);
  }

  /** The caller-facing model label (bounded). */
  get model(): string {
    return this.#model;
  }

  /** The backend label of the latest attempt ("none" before any). */
  get backend(): string {
    return this.#backend;
  }

  /** One backend attempt: a CLIENT span, its trace context, and its token counts. */
  attempt(backend: string, client: LLMClient, model: string | undefined, attempt: number): AttemptTelemetry {
    this.#backend = this.#o.metrics.label("backend", backend);
    const requestModel = model ?? this.#o.model;
    const span = forgeTracer().startSpan(
      `chat ${requestModel}`.trim(),
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [GenAI.operationName]: "chat",
          [GenAI.providerName]: providerOf(client),
          [GenAI.requestModel]: requestModel,
          [Forge.backend]: backend,
          [Forge.iteration]: attempt,
        },
      },
      this.#context,
    );
    const backendLabel = this.#backend;
    return {
      context: trace.setSpan(this.#context, span),
      end: (response) => {
        if (response.usage) {
          span.setAttribute(GenAI.inputTokens, response.usage.inputTokens);
          span.setAttribute(GenAI.outputTokens, response.usage.outputTokens);
          const labels = { surface: "proxy", backend: backendLabel, model: this.#model };
          this.#o.metrics.tokens.inc({ ...labels, direction: "input" }, response.usage.inputTokens);
          this.#o.metrics.tokens.inc({ ...labels, direction: "output" }, response.usage.outputTokens);
        }
        span.setAttribute(GenAI.finishReasons, [response.type === "tool_calls" ? "tool_calls" : "stop"]);
        if (this.#o.traceContent && span.isRecording()) span.setAttribute(GenAI.outputMessages, JSON.stringify(response));
        span.end();
      },
      fail: (error) => {
        const e = error as { name?: unknown; statusCode?: unknown; message?: unknown } | null;
        span.setAttribute(GenAI.errorType, typeof e?.statusCode === "number" && e.statusCode > 0 ? String(e.statusCode) : String(e?.name ?? "Error"));
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(e?.message ?? error) });
        span.end();
      },
    };
  }

  /** A guardrail stepped in: a span event, and its count. */
  guardrail(event: ProxyGuardrailEvent): void {
    const labels = { surface: "proxy", backend: this.#backend, model: this.#model };
    const attempt = { [Forge.iteration]: event.attempt };
    switch (event.type) {
      case "guardrail.rescue":
        this.#o.metrics.rescues.inc({ ...labels, format: event.format });
        this.#span.addEvent(Forge.events.rescue, { ...attempt, "forge.rescue.format": event.format });
        return;
      case "guardrail.nudge": {
        this.#o.metrics.nudges.inc({ ...labels, kind: event.kind });
        const reason = this.#o.traceContent ? { "forge.nudge.reason": event.reason } : {};
        this.#span.addEvent(NUDGE_EVENTS[event.kind], { ...attempt, "forge.nudge.kind": event.kind, ...reason });
        return;
      }
      case "guardrail.exhausted":
        this.#o.metrics.budgetsExhausted.inc({ surface: "proxy", kind: event.budget });
        this.#span.addEvent("forge.budget_exhausted", { ...attempt, "forge.budget": event.budget });
        return;
    }
  }

  /** The request is over: its count, the latency the proxy added, and the server span's end. */
  finish(outcome: ProxyOutcome, addedMs: number, messages?: unknown): void {
    const label = outcomeLabel(outcome);
    this.#o.metrics.requests.inc({ api: this.#o.api, backend: this.#backend, model: this.#model, outcome: label });
    this.#o.metrics.addedLatency.observe({ backend: this.#backend, model: this.#model }, Math.max(0, addedMs) / 1000);
    const span = this.#span;
    span.setAttribute("forge.outcome", label);
    if (outcome.kind === "answer") {
      const dropped = outcome.exhausted?.dropped;
      if (dropped?.unoffered) this.#o.metrics.droppedCalls.inc({ api: this.#o.api, reason: "unoffered" }, dropped.unoffered);
      if (dropped?.overLimit) this.#o.metrics.droppedCalls.inc({ api: this.#o.api, reason: "over_limit" }, dropped.overLimit);
      span.setAttribute(GenAI.inputTokens, outcome.usage.inputTokens);
      span.setAttribute(GenAI.outputTokens, outcome.usage.outputTokens);
      span.setAttribute(GenAI.finishReasons, [outcome.answer.type === "tool_calls" ? "tool_calls" : "stop"]);
      span.setAttribute("forge.attempts", outcome.attempts);
      if (this.#o.traceContent && span.isRecording()) {
        if (messages !== undefined) span.setAttribute(GenAI.inputMessages, JSON.stringify(messages));
        span.setAttribute(GenAI.outputMessages, JSON.stringify(outcome.answer));
      }
    } else if (outcome.kind === "failed") {
      span.setAttribute(GenAI.errorType, outcome.error.statusCode !== undefined ? String(outcome.error.statusCode) : outcome.error.name);
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
    } else {
      span.setAttribute(GenAI.errorType, "cancelled");
    }
    span.end();
  }
}

const NUDGE_EVENTS: Record<Extract<ProxyGuardrailEvent, { type: "guardrail.nudge" }>["kind"], string> = {
  retry: Forge.events.retryNudge,
  unknown_tool: "forge.nudge.unknown_tool",
  invalid_args: "forge.nudge.invalid_args",
  structured_output: Forge.events.structuredOutputNudge,
  step: Forge.events.stepNudge,
  prerequisite: Forge.events.prerequisiteBlock,
  loop_break: Forge.events.loopBreak,
};

function outcomeLabel(outcome: ProxyOutcome): RequestOutcomeLabel {
  if (outcome.kind === "answer") return outcome.exhausted ? "exhausted" : "ok";
  return outcome.kind;
}

/** gen_ai.provider.name for a client (the semantic conventions' well-known values where one fits). */
function providerOf(client: LLMClient): string {
  const name = (client as { constructor?: { name?: unknown } }).constructor?.name;
  switch (name) {
    case "OllamaClient":
      return "ollama";
    case "AnthropicClient":
      return "anthropic";
    case "LlamafileClient":
      return "llama.cpp";
    case "OpenAICompatClient":
      return "openai";
    default:
      return client.apiFormat;
  }
}
