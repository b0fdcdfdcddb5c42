/**
 * A trace context as plain strings (the W3C `traceparent` / `tracestate` headers, or whatever
 * propagator the user registered), for what crosses a process boundary as data: a queued job
 * carries its producer's context to the worker that runs it.
 */
import { context as otel, propagation, ROOT_CONTEXT, type Context } from "@opentelemetry/api";

/** Propagation fields by name (`traceparent`, `tracestate`, `baggage`, ...). */
export type TraceCarrier = Record<string, string>;

/**
 * The fields of `ctx` (default: the active context) by the registered propagator, or undefined
 * when there are none (no propagator, or no span in the context).
 *
 * @example
 * const carrier = injectTraceCarrier(); // { traceparent: "00-4bf9…-00f0…-01" }
 */
export function injectTraceCarrier(ctx: Context = otel.active()): TraceCarrier | undefined {
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * The context a carrier describes (the root context when it is absent): a run span started
 * under it continues the producer's trace.
 *
 * @example
 * const parent = extractTraceCarrier(job.data.trace);
 */
export function extractTraceCarrier(carrier: TraceCarrier | undefined): Context {
  if (!carrier) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** A carrier as it arrives in job data: strings only, or undefined (a job without one, or a malformed one). */
export function asTraceCarrier(value: unknown): TraceCarrier | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string");
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}
