/** Run ids in the run list: distinct labels, whole ids when short. */
import { describe, expect, it } from "vitest";
import { shortIds } from "../../../visualizer/page/src/run-ids.js";

describe("shortIds", () => {
  it("shows demo ids whole: the clock part that tells them apart is kept", () => {
    const ids = ["demo-mwu1k2a", "demo-mwu1k9z", "demo-mwu2a00", "demo-mwu3b7c", "demo-mwu4x1y"];
    const labels = shortIds(ids);
    expect([...labels.values()]).toEqual(ids);
  });

  it("cuts long ids to their first word and the part where they differ", () => {
    const ids = ["batch-2026-11-26T09:25:01.123Z-run-0001", "batch-2026-11-26T09:25:01.123Z-run-0002", "eval-sim-x"];
    const labels = shortIds(ids);
    expect(labels.get("batch-2026-11-26T09:25:01.123Z-run-0001")).toBe("batch-…run-0001");
    expect(labels.get("batch-2026-11-26T09:25:01.123Z-run-0002")).toBe("batch-…run-0002");
    expect(labels.get("eval-sim-x")).toBe("eval-sim-x");
  });

  it("gives every id a distinct label, falling back to the whole id", () => {
    const ids = Array.from({ length: 60 }, (_, i) => `session-${"abcdefghij".repeat(3)}-${(i * 7919).toString(36).padStart(4, "0")}-tail-${i % 3}`);
    const labels = shortIds(ids);
    expect(new Set(labels.values()).size).toBe(ids.length);
    for (const [id, label] of labels) expect(label.length <= id.length + 2, label).toBe(true);
  });

  it("keeps a long id with no neighbour readable", () => {
    expect(shortIds(["x".repeat(40)]).get("x".repeat(40))).toMatch(/^xxxx…x{12}…$/);
  });
});
