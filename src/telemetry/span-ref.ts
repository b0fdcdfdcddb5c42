/**
 * A run span's identity, kept with the run so a later attempt (resume, retry, another worker
 * taking the run over) can link to it. Stored as plain JSON at the top of persisted snapshots
 * under `forgeTrace`: optional, so snapshots without it (older ones, untraced runs) still load.
 */
import { isSpanContextValid, TraceFlags, type Link, type SpanContext } from "@opentelemetry/api";

/** The W3C identity of a span. */
export interface SpanRef {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** Where a persisted snapshot keeps the run span of the attempt that wrote it. */
export const TRACE_KEY = "forgeTrace";

const HEX = (n: number) => new RegExp(`^[0-9a-f]{${n}}$`);
const TRACE_ID = HEX(32);
const SPAN_ID = HEX(16);

/**
 * The span's reference, or undefined when it has no valid identity (a no-op span).
 *
 * @example
 * spanRefOf(span.spanContext()); // { traceId: "4bf9…", spanId: "00f0…", traceFlags: 1 }
 */
export function spanRefOf(context: SpanContext): SpanRef | undefined {
  if (!isSpanContextValid(context)) return undefined;
  return { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags };
}

/**
 * The span reference a snapshot carries, or undefined when it has none or it is malformed (a
 * bad reference costs the link, never the resume).
 *
 * @example
 * const previous = spanRefIn(snapshot);
 */
export function spanRefIn(snapshot: unknown): SpanRef | undefined {
  const ref = (snapshot as Record<string, unknown> | null)?.[TRACE_KEY] as Partial<SpanRef> | undefined;
  if (typeof ref !== "object" || ref === null) return undefined;
  const { traceId, spanId, traceFlags } = ref;
  if (typeof traceId !== "string" || !TRACE_ID.test(traceId) || typeof spanId !== "string" || !SPAN_ID.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: typeof traceFlags === "number" ? traceFlags : TraceFlags.NONE };
}

/**
 * A span link to an earlier attempt's run span.
 *
 * @example
 * tracer.startSpan("invoke_agent support", { links: [linkTo(previous)] });
 */
export function linkTo(ref: SpanRef): Link {
  return { context: { ...ref, isRemote: true }, attributes: { "forge.link": "previous_attempt" } };
}

/**
 * The snapshot with the attempt's run span noted (itself when there is no span to note).
 *
 * @example
 * store.save(withSpanRef(actor.getPersistedSnapshot(), runTrace.ref));
 */
export function withSpanRef<T extends object>(snapshot: T, ref: SpanRef | undefined): T {
  return ref ? { ...snapshot, [TRACE_KEY]: ref } : snapshot;
}

/**
 * The snapshot without a noted span (what XState is given: the note is the runner's, not the machine's).
 *
 * @example
 * createActor(machine, { snapshot: withoutSpanRef(persisted) });
 */
export function withoutSpanRef<T extends object>(snapshot: T): T {
  if (!(TRACE_KEY in snapshot)) return snapshot;
  const { [TRACE_KEY]: _ref, ...rest } = snapshot as Record<string, unknown>;
  return rest as T;
}
