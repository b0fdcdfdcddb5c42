import { describe, expect, it } from "vitest";
import { NoCompact } from "../../src/context/no-compact.js";
import { buildHistory, deepFreeze } from "./history-fixtures.js";

describe("NoCompact", () => {
  it("returns a copy of the whole history with phase 0", () => {
    const h = deepFreeze(buildHistory([{ resultLengths: [5000] }, { resultLengths: [5000], stepNudge: true }]));
    const r = new NoCompact().compact(h, 0);
    expect(r.phase).toBe(0);
    expect(r.messages).toEqual(h);
    expect(r.messages).not.toBe(h);
    expect(new NoCompact().name).toBe("none");
  });
});
