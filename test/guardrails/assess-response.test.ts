import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LLMResponse } from "../../src/core/index.js";
import { validateResponse } from "../../src/guardrails/response-validator.js";
import { assessResponse, DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE, MAX_ARGS_DEPTH, type AssessOptions } from "../../src/guardrails/assess-response.js";
import { loopWorkflow } from "../support/loop-fixtures.js";

const { workflow } = loopWorkflow();
const ctx = (max?: number): AssessOptions => ({ rescueEnabled: true, toolNames: workflow.toolNames, ...(max ? { maxToolCalls: max } : {}) });
const extraCalls = (n: number): LLMResponse => ({ type: "tool_calls", toolCalls: Array.from({ length: n }, (_, i) => ({ tool: "extra", args: { n: i } })) });
const deep = (depth: number) => JSON.parse('{"n":'.repeat(depth) + "1" + "}".repeat(depth)) as unknown;

describe("assessResponse", () => {
  it("is validateResponse for ordinary responses", () => {
    for (const response of [extraCalls(2), { type: "text", content: "hi" } as LLMResponse, extraCalls(0)]) {
      expect(assessResponse(response, ctx(), workflow.tools)).toEqual(validateResponse(response, { tools: workflow.tools }));
    }
  });

  it("refuses more calls than the limit with a user-channel retry nudge (default 64)", () => {
    expect(DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE).toBe(64);
    expect(assessResponse(extraCalls(64), ctx(), workflow.tools).kind).toBe("calls");
    const v = assessResponse(extraCalls(65), ctx(), workflow.tools);
    expect(v).toMatchObject({ kind: "retry", raw: "", nudge: { role: "user", kind: "too_many_calls" } });
    expect(v.kind === "retry" && v.nudge.content).toMatch(/65 tool calls; at most 64/);
  });

  it("property: the batch is refused exactly when it exceeds the configured limit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 10 }), (max, n) => {
        const v = assessResponse(extraCalls(n), ctx(max), workflow.tools);
        expect(v.kind === "retry" && v.nudge.kind === "too_many_calls").toBe(n > max);
      }),
    );
  });

  it("refuses arguments nested deeper than MAX_ARGS_DEPTH, structured or rescued", () => {
    const structured: LLMResponse = { type: "tool_calls", toolCalls: [{ tool: "extra", args: { n: deep(MAX_ARGS_DEPTH + 1) } }] };
    expect(assessResponse(structured, ctx(), workflow.tools)).toMatchObject({ kind: "retry", nudge: { kind: "args_too_deep" } });
    const content = '```json\n{"tool": "extra", "args": {"n": ' + JSON.stringify(deep(400)) + "}}\n```";
    expect(assessResponse({ type: "text", content }, ctx(), workflow.tools)).toMatchObject({ kind: "retry", raw: content, nudge: { kind: "args_too_deep" } });
    // within the limit, the usual validation answers (here: n must be a number)
    const shallow: LLMResponse = { type: "tool_calls", toolCalls: [{ tool: "extra", args: { n: deep(10) } }] };
    expect(assessResponse(shallow, ctx(), workflow.tools).kind).toBe("rejected");
  });
});
