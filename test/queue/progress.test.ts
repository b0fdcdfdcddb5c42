import { afterEach, describe, expect, it, vi } from "vitest";
import { throttledProgress, type RunProgress } from "../../src/queue/progress.js";

describe("throttledProgress", () => {
  afterEach(() => void vi.useRealTimers());

  it("sends at most one update per interval, the latest one, and the last at close, in order", async () => {
    vi.useFakeTimers();
    const sent: RunProgress[] = [];
    const progress = throttledProgress(async (p) => void sent.push(p), 250);
    for (let i = 0; i < 100; i++) progress.report({ state: "infer", iteration: i });
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([{ state: "infer", iteration: 0 }]);
    await vi.advanceTimersByTimeAsync(250);
    expect(sent).toEqual([{ state: "infer", iteration: 0 }, { state: "infer", iteration: 99 }]);
    progress.report({ state: "executeTools", iteration: 100 });
    progress.report({ state: "done", iteration: 100 });
    await progress.close();
    expect(sent.at(-1)).toEqual({ state: "done", iteration: 100 });
    expect(sent).toHaveLength(3);
  });

  it("never fails the run: a send that throws is dropped", async () => {
    const progress = throttledProgress(async () => {
      throw new Error("Redis away");
    }, 10);
    progress.report({ state: "infer", iteration: 1 });
    await expect(progress.close()).resolves.toBeUndefined();
  });
});
