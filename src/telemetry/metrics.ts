/**
 * The Prometheus metrics every forge-ts surface reports (prom-client). One definition, shared by
 * the proxy, the runner and the workers, so a dashboard reads the same names whichever surface
 * feeds it. Labels are bounded: a label value beyond the first `maxLabelValues` distinct ones
 * (per label) is reported as "other", so a client sending random model names cannot grow the
 * series without limit.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** Which front door a count came from. */
export type Surface = "runner" | "proxy";

export interface ForgeMetricsOptions {
  /** Where the metrics are registered. Default: a new Registry (not prom-client's global one). */
  registry?: Registry;
  /** Distinct values kept per label before the rest read "other". Default 50. */
  maxLabelValues?: number;
  /** Also collect Node's process metrics (CPU, memory, event loop lag). Default true. */
  processMetrics?: boolean;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

/**
 * Creates the metric families on one registry.
 *
 * @example
 * const metrics = createForgeMetrics();
 * metrics.runs.inc({ surface: "runner", workflow: "support", outcome: "done" });
 * const text = await metrics.registry.metrics();
 */
export function createForgeMetrics(options: ForgeMetricsOptions = {}) {
  const registry = options.registry ?? new Registry();
  const bound = labelBounder(options.maxLabelValues ?? 50);
  const registers = [registry];
  const metrics = {
    registry,
    /** Bounds a label value (see the module comment). */
    label: bound,
    requests: new Counter({ name: "forge_proxy_requests_total", help: "Proxy requests by API surface and outcome.", labelNames: ["api", "backend", "model", "outcome"] as const, registers }),
    addedLatency: new Histogram({ name: "forge_proxy_added_latency_seconds", help: "Time the proxy adds to a request beyond the backend's own.", labelNames: ["backend", "model"] as const, buckets: LATENCY_BUCKETS, registers }),
    runs: new Counter({ name: "forge_runs_total", help: "Runs ended, by outcome (done, failed, cancelled, waiting).", labelNames: ["surface", "workflow", "outcome"] as const, registers }),
    runDuration: new Histogram({ name: "forge_run_duration_seconds", help: "Wall-clock time of a run (or of one leg of it, until it ends or waits).", labelNames: ["surface", "workflow", "outcome"] as const, buckets: DURATION_BUCKETS, registers }),
    activeRuns: new Gauge({ name: "forge_active_runs", help: "Runs being driven now.", labelNames: ["surface"] as const, registers }),
    rescues: new Counter({ name: "forge_rescues_total", help: "Tool calls rescued from the model's text, by format.", labelNames: ["surface", "backend", "model", "format"] as const, registers }),
    nudges: new Counter({ name: "forge_nudges_total", help: "Nudges sent back to the model, by kind (retry, step, prerequisite, unknown_tool, structured_output, ...).", labelNames: ["surface", "backend", "model", "kind"] as const, registers }),
    droppedCalls: new Counter({ name: "forge_proxy_dropped_calls_total", help: "Calls of an exhausted answer not handed to the caller: to a tool the request did not offer (unoffered) or beyond the per-answer limit (over_limit).", labelNames: ["api", "reason"] as const, registers }),
    budgetsExhausted: new Counter({ name: "forge_budgets_exhausted_total", help: "Runs or requests that gave up because a budget ran out, by budget.", labelNames: ["surface", "kind"] as const, registers }),
    tokens: new Counter({ name: "forge_tokens_total", help: "Tokens the backends reported, by model and direction (input, output).", labelNames: ["surface", "backend", "model", "direction"] as const, registers }),
    jobs: new Counter({ name: "forge_jobs_total", help: "Queue jobs finished by a worker, by outcome.", labelNames: ["queue", "outcome"] as const, registers }),
    leaseTakeovers: new Counter({ name: "forge_lease_takeovers_total", help: "Runs whose expired lease this process took over from another holder.", labelNames: ["store"] as const, registers }),
  };
  if (options.processMetrics !== false) collectProcessMetrics(registry);
  return metrics;
}

export type ForgeMetrics = ReturnType<typeof createForgeMetrics>;

/** The text a Prometheus scrape expects, with its content type. */
export async function metricsResponse(metrics: ForgeMetrics): Promise<Response> {
  return new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } });
}

/** Returns a function that maps a label's value to itself or "other" once `max` distinct values were seen for that label. */
export function labelBounder(max: number): (label: string, value: string | undefined) => string {
  const seen = new Map<string, Set<string>>();
  return (label, value) => {
    const v = value === undefined || value === "" ? "unknown" : value;
    let values = seen.get(label);
    if (!values) seen.set(label, (values = new Set()));
    if (values.has(v)) return v;
    if (values.size >= max) return "other";
    values.add(v);
    return v;
  };
}

function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, prefix: "forge_" });
}
