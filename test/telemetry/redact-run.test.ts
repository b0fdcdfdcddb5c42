import { describe, expect, it } from "vitest";
import { addCallKeys, callCountEntries, EMPTY_CALL_COUNTS } from "../../src/loop/call-counts.js";
import { callKey } from "../../src/guardrails/loop-break.js";
import { mergeRedactionMaps, redactContext, redactEmitted, redactionMapIn, redactRunEvent } from "../../src/telemetry/redact-run.js";

const map = { login: ["password"] };
const args = { user: "ann", password: "s3cret" };
const context = {
  run: { id: "r", redact: map },
  messages: [{ role: "assistant", content: "", toolCalls: [{ name: "login", args, callId: "c1" }] }],
  steps: { completed: [{ tool: "login", args }] },
  batch: { calls: [{ tool: "login", args, callId: "c1" }], done: [], human: [{ tool: "login", args, callId: "c1", decision: { type: "approve", args } }] },
  callCounts: addCallKeys(EMPTY_CALL_COUNTS, [callKey("login", args)]),
  lastResponse: { type: "tool_calls", toolCalls: [{ tool: "login", args }] },
  terminal: { tool: "login", args, result: "ok" },
};

describe("redactContext", () => {
  it("report scope masks every copy, loop-break keys included", () => {
    const out = JSON.stringify(redactContext(context, map, "report"));
    expect(out).not.toContain("s3cret");
    expect(callCountEntries(redactContext(context, map, "report").callCounts)).toEqual([[callKey("login", { user: "ann", password: "[redacted]" }), 1]]);
  });

  it("stored scope masks only what a resume never reads back", () => {
    const out = redactContext(context, map, "stored");
    expect(out.lastResponse.toolCalls[0]!.args.password).toBe("[redacted]");
    expect(out.terminal.args.password).toBe("[redacted]");
    expect(out.messages).toBe(context.messages);
    expect(out.steps).toBe(context.steps);
    expect(out.batch).toBe(context.batch);
    expect(out.callCounts).toBe(context.callCounts);
  });

  it("without a map it is the identity", () => {
    expect(redactContext(context, undefined, "report")).toBe(context);
  });
});

describe("events", () => {
  it("masks emitted tool.start and history.message facts", () => {
    expect(redactEmitted({ type: "tool.start", tool: "login", args, callId: "c1", index: 0 }, map).args.password).toBe("[redacted]");
    expect(JSON.stringify(redactEmitted({ type: "history.message", message: context.messages[0] }, map))).not.toContain("s3cret");
    expect(redactEmitted({ type: "tool.start", tool: "other", args, callId: "c1", index: 0 }, map).args).toBe(args);
  });

  it("keeps a decision's edited args real in the stored scope (a resume applies it) and masks it in reports", () => {
    const decision = { type: "decision" as const, callId: "c1", decision: { type: "approve" as const, args }, at: 1 };
    expect(redactRunEvent(decision, map, "stored")).toBe(decision);
    expect(JSON.stringify(redactRunEvent(decision, map, "report"))).not.toContain("s3cret");
  });
});

describe("maps", () => {
  it("reads a run's map defensively and merges two", () => {
    expect(redactionMapIn(context)).toEqual(map);
    expect(redactionMapIn({ run: { redact: { x: "no" } } })).toBeUndefined();
    expect(redactionMapIn(null)).toBeUndefined();
    expect(mergeRedactionMaps(map, { login: ["otp"], pay: ["card"] })).toEqual({ login: ["password", "otp"], pay: ["card"] });
  });
});
