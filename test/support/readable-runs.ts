import { expect } from "vitest";
import { isDamaged, type ListedRun, type RunInfo } from "../../src/persistence/run-store.js";

/**
 * A listing every run of which can be read, as RunInfo: asserts no entry is damaged.
 *
 * @example const runs = readableRuns(await store.listRuns()); runs[0]!.seq;
 */
export function readableRuns(runs: readonly ListedRun[]): RunInfo[] {
  expect(runs.filter(isDamaged)).toEqual([]);
  return runs as RunInfo[];
}
