import { describe, expect, it } from "vitest";
import { batchOutcome } from "../../src/guardrails/batch-outcome.js";

describe("batchOutcome", () => {
  it("records successes, flags the terminal tool", () => {
    expect(batchOutcome([{ tool: "s", args: { q: 1 }, ok: true }, { tool: "answer", args: {}, ok: true }], ["answer"])).toEqual({
      steps: [{ tool: "s", args: { q: 1 } }, { tool: "answer", args: {} }],
      hadError: false,
      terminalSucceeded: true,
    });
  });

  it("resolution errors are neither errors nor steps", () => {
    expect(batchOutcome([{ tool: "lookup", args: {}, ok: false, resolution: true }], [])).toEqual({ steps: [], hadError: false, terminalSucceeded: false });
  });

  it("a failure is reported with its error; a failed terminal is not success", () => {
    const boom = new Error("boom");
    const o = batchOutcome([{ tool: "s", args: {}, ok: false, error: boom }, { tool: "answer", args: {}, ok: false }], ["answer"]);
    expect(o.hadError).toBe(true);
    expect(o.terminalSucceeded).toBe(false);
    expect(o.lastFailure).toEqual({ tool: "answer", error: "the tool reported a failure" });
    expect(batchOutcome([{ tool: "s", args: {}, ok: false, error: boom }], []).lastFailure).toEqual({ tool: "s", error: boom });
  });
});
