/**
 * GET /forge/stats: counts since start and the proxy's own added latency (request time minus
 * time waiting on the backend) as p50/p99 over the most recent requests.
 */
import type { ProxyOutcome } from "../proxy-request/proxy-request.js";

/** Latency percentiles cover this many most recent requests. */
const WINDOW = 10_000;

export interface ProxyStatsSnapshot {
  uptimeSeconds: number;
  requests: number;
  inFlight: number;
  /** Of those, the ones waiting for a backend slot (the fleet's wait queue). */
  waiting: number;
  guarded: number;
  passThrough: number;
  rescues: number;
  retries: number;
  exhausted: number;
  failed: number;
  cancelled: number;
  rejected: number;
  addedLatencyMs: { p50: number | null; p99: number | null; samples: number };
}

/** Nearest-rank percentile of an unsorted sample. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export class ProxyStats {
  readonly #started = Date.now();
  readonly #latency: number[] = [];
  #next = 0;
  requests = 0;
  inFlight = 0;
  guarded = 0;
  passThrough = 0;
  rescues = 0;
  retries = 0;
  exhausted = 0;
  failed = 0;
  cancelled = 0;
  /** Refused before reaching the backend: bad input, auth, size. */
  rejected = 0;

  /** One finished request: its outcome and the milliseconds the proxy itself added. */
  record(outcome: ProxyOutcome, guarded: boolean, addedMs: number): void {
    if (guarded) this.guarded++;
    else this.passThrough++;
    if (outcome.kind === "answer") {
      if (outcome.rescued) this.rescues++;
      this.retries += outcome.attempts - 1;
      if (outcome.exhausted) this.exhausted++;
    } else if (outcome.kind === "failed") {
      this.failed++;
      this.retries += Math.max(0, outcome.attempts - 1);
    } else {
      this.cancelled++;
    }
    this.#latency[this.#next] = addedMs;
    this.#next = (this.#next + 1) % WINDOW;
  }

  /** The added latencies the percentiles are taken over (the most recent WINDOW requests). */
  latencySamples(): readonly number[] {
    return this.#latency;
  }

  /** `waiting` is the pool's to know: the caller passes its queue length. */
  snapshot(live: { waiting: number }): ProxyStatsSnapshot {
    const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
    return {
      uptimeSeconds: Math.round((Date.now() - this.#started) / 1000),
      requests: this.requests,
      inFlight: this.inFlight,
      waiting: live.waiting,
      guarded: this.guarded,
      passThrough: this.passThrough,
      rescues: this.rescues,
      retries: this.retries,
      exhausted: this.exhausted,
      failed: this.failed,
      cancelled: this.cancelled,
      rejected: this.rejected,
      addedLatencyMs: { p50: round(percentile(this.#latency, 50)), p99: round(percentile(this.#latency, 99)), samples: this.#latency.length },
    };
  }
}
