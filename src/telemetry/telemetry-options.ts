/**
 * The runner's `telemetry` option: whether runs are traced, with which tracer, and whether
 * message content goes on spans. Checked up front like every runner option.
 */
import type { Tracer, TracerProvider } from "@opentelemetry/api";
import { InvalidArgumentError } from "../core/errors.js";
import { previewValue } from "../core/response-contract.js";
import { forgeTracer, TRACER_NAME, TRACER_VERSION } from "./tracer.js";

export interface TelemetryOptions {
  /** false: no spans at all, not even no-op ones (the run does no tracing work). Default true. */
  enabled?: boolean;
  /** Spans come from this provider instead of the globally registered one. */
  tracerProvider?: TracerProvider;
  /** Spans come from this tracer (wins over `tracerProvider`). */
  tracer?: Tracer;
  /**
   * Put message content on spans: the model's input and output messages, tool arguments (masked
   * per the tool's `redact`) and tool results. Off by default: prompts and results often hold
   * personal data, and span attributes travel to whatever backend the exporter feeds.
   */
  recordContent?: boolean;
}

/**
 * Throws InvalidArgumentError naming the first wrong field of `telemetry`.
 *
 * @example
 * assertTelemetryOptions({ recordContent: true }); // ok
 */
export function assertTelemetryOptions(value: unknown): asserts value is TelemetryOptions | undefined {
  if (value === undefined) return;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError("telemetry", `expected { enabled?, tracerProvider?, tracer?, recordContent? }, got ${previewValue(value)}`);
  }
  const o = value as Record<string, unknown>;
  for (const key of ["enabled", "recordContent"] as const) {
    if (o[key] !== undefined && typeof o[key] !== "boolean") throw new InvalidArgumentError(`telemetry.${key}`, `expected a boolean, got ${previewValue(o[key])}`);
  }
  const provider = o.tracerProvider as { getTracer?: unknown } | undefined;
  if (provider !== undefined && typeof provider?.getTracer !== "function") {
    throw new InvalidArgumentError("telemetry.tracerProvider", "expected an OpenTelemetry TracerProvider (with getTracer)");
  }
  const tracer = o.tracer as { startSpan?: unknown } | undefined;
  if (tracer !== undefined && typeof tracer?.startSpan !== "function") {
    throw new InvalidArgumentError("telemetry.tracer", "expected an OpenTelemetry Tracer (with startSpan)");
  }
  const known = new Set(["enabled", "tracerProvider", "tracer", "recordContent"]);
  const unknown = Object.keys(o).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new InvalidArgumentError(`telemetry.${unknown[0]}`, "unknown option; use enabled, tracerProvider, tracer or recordContent");
}

/**
 * The tracer a run uses, or undefined when tracing is off. Looked up per run, so a provider
 * registered globally after the runner was made is used.
 *
 * @example
 * const tracer = runTracer({ tracerProvider: provider });
 */
export function runTracer(options: TelemetryOptions | undefined): Tracer | undefined {
  if (options?.enabled === false) return undefined;
  if (options?.tracer) return options.tracer;
  if (options?.tracerProvider) return options.tracerProvider.getTracer(TRACER_NAME, TRACER_VERSION);
  return forgeTracer();
}
