import { describe, expect, it } from "vitest";
import { MaxIterationsError, RunWaitingError, WorkflowCancelledError } from "../../src/core/errors.js";
import { doneResult, failedResult, RUN_ID_META, RUN_STATUS_META, waitingResult } from "../../src/mcp-server/call-result.js";

const text = (r: { content: unknown[] }, i = 0) => (r.content[i] as { text: string }).text;

describe("call results", () => {
  it("a string result is the text; a string of a JSON object is structured too", () => {
    const plain = doneResult("r1", "all done");
    expect(text(plain)).toBe("all done");
    expect(plain.structuredContent).toBeUndefined();
    expect(plain._meta).toEqual({ [RUN_ID_META]: "r1", [RUN_STATUS_META]: "done" });
    expect(text(plain, 1)).toContain("forge-ts runs show r1");
    expect(doneResult("r1", '{"total":85}').structuredContent).toEqual({ total: 85 });
    expect(doneResult("r1", "{not json").structuredContent).toBeUndefined();
  });

  it("an object result is JSON text and structuredContent; an array or a number only text", () => {
    const object = doneResult("r1", { total: 85 });
    expect(JSON.parse(text(object))).toEqual({ total: 85 });
    expect(object.structuredContent).toEqual({ total: 85 });
    expect(doneResult("r1", [1, 2]).structuredContent).toBeUndefined();
    expect(text(doneResult("r1", 42))).toBe("42");
    expect(text(doneResult("r1", undefined))).toBe("null");
    expect(doneResult("r1", "x").isError).toBeUndefined();
  });

  it("a failure is isError with the typed error's name, code and message", () => {
    const error = new MaxIterationsError(10, [], []);
    const result = failedResult("r2", error);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(`MaxIterationsError (FORGE_MAX_ITERATIONS): ${error.message}`);
    expect(result.structuredContent).toEqual({ status: "failed", runId: "r2", error: { name: "MaxIterationsError", code: "FORGE_MAX_ITERATIONS", message: error.message } });
    expect(result._meta).toEqual({ [RUN_ID_META]: "r2", [RUN_STATUS_META]: "failed" });
    expect(text(failedResult("r3", new TypeError("boom")))).toBe("TypeError: boom");
    expect(text(failedResult("r3", "thrown string"))).toBe("Error: thrown string");
  });

  it("a cancelled run is isError with status cancelled, as the store lists it", () => {
    const result = failedResult("r5", new WorkflowCancelledError([], [], 2, "client cancelled"));
    expect(result.isError).toBe(true);
    expect(result.content).toContainEqual({ type: "text", text: "forge-ts run r5: cancelled (forge-ts runs show r5)" });
    expect(result.structuredContent).toMatchObject({ status: "cancelled", runId: "r5", error: { code: "FORGE_WORKFLOW_CANCELLED" } });
    expect(result._meta).toEqual({ [RUN_ID_META]: "r5", [RUN_STATUS_META]: "cancelled" });
  });

  it("a run waiting for a person is not an error: its requests, and the lines given", () => {
    const requests = new RunWaitingError("r4", [{ callId: "c1", tool: "refund", args: { amount: 500 }, kind: "approval", askedAt: 1 }]).requests;
    const result = waitingResult("r4", requests, ["run r4 is waiting for a person (1 pending):"]);
    expect(result.isError).toBeUndefined();
    expect(text(result)).toMatch(/^run r4 is waiting for a person \(1 pending\):\nforge-ts run r4: waiting/);
    expect(result.structuredContent).toEqual({ status: "waiting", runId: "r4", requests });
    expect(result._meta).toEqual({ [RUN_ID_META]: "r4", [RUN_STATUS_META]: "waiting" });
  });
});
