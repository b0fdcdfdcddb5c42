import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { createMessage, MessageType, type Message } from "../../src/core/messages.js";
import { checkPolicy, parsePolicy, stepRecordOf } from "../../src/proxy-request/request-policy.js";

const call = (id: string, name: string, args: unknown = {}): Message =>
  createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: [{ name, args, callId: id }] });
const result = (id: string, content: string): Message => createMessage("tool", content, MessageType.TOOL_RESULT, { toolCallId: id });
const user = createMessage("user", "go", MessageType.USER_INPUT);

const policy = parsePolicy({ requiredSteps: ["search", "summarize"], terminalTool: "answer", prerequisites: { edit: [{ tool: "read", args: { path: "$path" } }] }, maxToolRepeat: 2 });
const offered = ["search", "summarize", "answer", "read", "edit"];
const none = { premature: 0, prereq: 0 };

describe("parsePolicy", () => {
  it("fills defaults and takes one terminal tool or several", () => {
    expect(parsePolicy({})).toEqual({ requiredSteps: [], terminalTools: [], prerequisites: {}, maxToolRepeat: 3, maxPrematureAttempts: 3, maxPrereqViolations: 2 });
    expect(parsePolicy({ requiredSteps: ["a"], terminalTool: ["b", "c"] }).terminalTools).toEqual(["b", "c"]);
  });

  it.each([
    [{ requiredSteps: ["a"] }, /need a terminalTool/],
    [{ requiredSteps: ["a"], terminalTool: "a" }, /both a required step and a terminal tool/],
    [{ terminalTool: "a", maxToolRepeat: -1 }, /maxToolRepeat/],
    [{ terminalTools: "a" }, /terminalTools/],
    [{ prerequisites: { edit: [{ tool: "" }] } }, /prerequisites\.edit\.0/],
  ])("refuses %j with a message naming the field", (value, message) => {
    expect(() => parsePolicy(value)).toThrow(InvalidArgumentError);
    expect(() => parsePolicy(value)).toThrow(message);
  });
});

describe("stepRecordOf", () => {
  it("a call counts as a step once a successful result answers it", () => {
    const record = stepRecordOf([user, call("1", "search", { q: "x" }), result("1", "3 hits"), call("2", "summarize"), result("2", "[ToolError] boom"), call("3", "read")], new Set());
    expect(record.completed).toEqual([{ tool: "search", args: { q: "x" } }]);
    expect(Object.values(record.counts)).toEqual([1, 1]);
  });

  it("results flagged as errors by the caller, or starting with Error, are not steps", () => {
    const messages = [call("1", "search"), result("1", "ok"), call("2", "summarize"), result("2", "fine"), call("3", "read"), result("3", "Error: ENOENT")];
    expect(stepRecordOf(messages, new Set(["2"])).completed.map((s) => s.tool)).toEqual(["search"]);
  });

  it("a second result for one call id is not a second run (property: runs ≤ calls answered)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("a", "b"), fc.integer({ min: 0, max: 4 }), fc.boolean())), (ops) => {
        const messages = ops.map(([tool, id, isCall]) => (isCall ? call(String(id), tool) : result(String(id), "ok")));
        const record = stepRecordOf(messages, new Set());
        const runs = Object.values(record.counts).reduce((a, b) => a + b, 0);
        expect(record.completed.length).toBe(runs);
        expect(runs).toBeLessThanOrEqual(ops.filter(([, , isCall]) => !isCall).length);
      }),
    );
  });
});

describe("checkPolicy", () => {
  it("blocks a terminal call while required steps are pending, naming the next one", () => {
    const v = checkPolicy([{ tool: "answer", args: {} }], policy, stepRecordOf([user], new Set()), offered, none);
    expect(v).toMatchObject({ ok: false, kind: "step" });
    expect(!v.ok && v.results[0]!.content).toMatch(/^\[StepEnforcementError\] "answer" cannot run yet.*Call "search" next/);
  });

  it("escalates with this request's earlier blocks", () => {
    const v = checkPolicy([{ tool: "answer", args: {} }], policy, stepRecordOf([user], new Set()), offered, { premature: 2, prereq: 0 });
    expect(!v.ok && v.results[0]!.content).toMatch(/Last warning/);
  });

  it("lets the terminal call through once the history shows every step done", () => {
    const history = [user, call("1", "search"), result("1", "ok"), call("2", "summarize"), result("2", "ok")];
    expect(checkPolicy([{ tool: "answer", args: {} }], policy, stepRecordOf(history, new Set()), offered, none)).toEqual({ ok: true });
  });

  it("ignores required steps the request does not offer", () => {
    expect(checkPolicy([{ tool: "answer", args: {} }], policy, stepRecordOf([user], new Set()), ["answer"], none)).toEqual({ ok: true });
  });

  it("checks arg-matched prerequisites and the loop break from the history", () => {
    const read = [call("1", "read", { path: "a" }), result("1", "text")];
    expect(checkPolicy([{ tool: "edit", args: { path: "b" } }], policy, stepRecordOf(read, new Set()), offered, none)).toMatchObject({ ok: false, kind: "prerequisite" });
    expect(checkPolicy([{ tool: "edit", args: { path: "a" } }], policy, stepRecordOf(read, new Set()), offered, none)).toEqual({ ok: true });
    const twice = [...read, call("2", "read", { path: "a" }), result("2", "text")];
    const v = checkPolicy([{ tool: "search", args: {} }, { tool: "read", args: { path: "a" } }], policy, stepRecordOf(twice, new Set()), offered, none);
    expect(v).toMatchObject({ ok: false, kind: "loop_break" });
    expect(!v.ok && v.results.map((r) => r.content.slice(0, 11))).toEqual(["[Skipped] \"", "[LoopBreak]"]);
  });
});
