/**
 * The real OpenTelemetry SDK for tests: a BasicTracerProvider with an in-memory exporter behind
 * a SimpleSpanProcessor, registered globally with the W3C propagator; `reset()` undoes every
 * global registration so tests do not leak into each other.
 */
import { context, diag, propagation, trace, type Context, type ContextManager, ROOT_CONTEXT } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-base";

export interface TestTracing {
  exporter: InMemorySpanExporter;
  provider: BasicTracerProvider;
  spans(): ReadableSpan[];
  byName(name: string): ReadableSpan[];
  one(name: string): ReadableSpan;
}

export function installTracing(extra: SpanProcessor[] = []): TestTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), ...extra] });
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const spans = () => exporter.getFinishedSpans();
  const byName = (name: string) => spans().filter((s) => s.name === name);
  return {
    exporter,
    provider,
    spans,
    byName,
    one: (name) => {
      const found = byName(name);
      if (found.length !== 1) throw new Error(`expected one span "${name}", got ${found.length}: ${spans().map((s) => s.name).join(", ")}`);
      return found[0]!;
    },
  };
}

export function resetTracing(): void {
  trace.disable();
  propagation.disable();
  context.disable();
  diag.disable();
}

/**
 * A synchronous context manager: `context.with(ctx, fn)` makes ctx active while fn runs up to
 * its first await (enough for a tool to see its span when it starts). Real applications
 * register AsyncLocalStorageContextManager; this keeps the test free of another package.
 */
export class StackContextManager implements ContextManager {
  #current: Context = ROOT_CONTEXT;
  active(): Context {
    return this.#current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.#current;
    this.#current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#current = previous;
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#current = ROOT_CONTEXT;
    return this;
  }
}

/** The span's parent span id ("" for a root span). */
export function parentOf(span: ReadableSpan): string {
  return span.parentSpanContext?.spanId ?? "";
}
