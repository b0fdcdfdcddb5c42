/**
 * Property tests run on a fixed seed so CI is reproducible; set FC_SEED to explore others
 * (a failure prints its seed and path for replay).
 */
import fc from "fast-check";
import { afterAll, vi } from "vitest";

fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20261121) });

// The contract tier runs files in shared workers (isolate: false): what a file changes of the
// process must not reach the next file. Each file restores its own; this is the net under it.
afterAll(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});
