/** The workers' stats as one (src/cli/proxy-cluster.ts): counts add, percentiles are taken over every worker's samples. */
import { describe, expect, it } from "vitest";
import { sumStats } from "../../src/cli/proxy-cluster.js";
import type { ProxyStatsSnapshot } from "../../src/proxy/proxy-stats.js";

const snapshot = (over: Partial<ProxyStatsSnapshot>): ProxyStatsSnapshot => ({
  uptimeSeconds: 1, requests: 0, inFlight: 0, waiting: 0, guarded: 0, passThrough: 0, rescues: 0, retries: 0, exhausted: 0, failed: 0, cancelled: 0, rejected: 0,
  addedLatencyMs: { p50: null, p99: null, samples: 0 },
  ...over,
});

describe("sumStats", () => {
  it("adds the counts, keeps the longest uptime, and takes p50/p99 over all samples together", () => {
    const a = { pid: 1, snapshot: snapshot({ uptimeSeconds: 30, requests: 3, inFlight: 1, rescues: 2 }), samples: [1, 1, 1] };
    const b = { pid: 2, snapshot: snapshot({ uptimeSeconds: 12, requests: 1, retries: 4 }), samples: [100] };
    const total = sumStats([a, b], 2);
    expect(total).toMatchObject({ uptimeSeconds: 30, requests: 4, inFlight: 1, rescues: 2, retries: 4 });
    // Averaging each worker's p50 would say 50.5; over the four requests it is 1.
    expect(total.addedLatencyMs).toEqual({ p50: 1, p99: 100, samples: 4 });
    expect(total.workers).toEqual({ live: 2, answered: 2, each: [{ pid: 1, requests: 3, inFlight: 1 }, { pid: 2, requests: 1, inFlight: 0 }] });
  });

  it("no worker answered: zero counts, no percentiles", () => {
    expect(sumStats([], 3)).toMatchObject({ requests: 0, addedLatencyMs: { p50: null, p99: null, samples: 0 }, workers: { live: 3, answered: 0 } });
  });
});
