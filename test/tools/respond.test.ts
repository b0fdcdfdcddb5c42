import { describe, expect, it } from "vitest";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import { Workflow } from "../../src/core/index.js";
import { respondTool, RESPOND_TOOL_NAME } from "../../src/tools/respond.js";
import { WorkflowRunner } from "../../src/runner.js";
import { PolicyClient, call } from "../support/loop-fixtures.js";
import { validateResponse } from "../../src/guardrails/response-validator.js";

describe("respondTool", () => {
  it("is a terminal tool whose result is the message", async () => {
    const respond = respondTool();
    expect(respond.name).toBe(RESPOND_TOOL_NAME);
    expect(respond.spec.parameters).toMatchObject({ type: "object", required: ["message"] });
    const wf = new Workflow({ name: "chat", tools: { respond }, terminalTool: "respond" });
    const runner = new WorkflowRunner({
      client: new PolicyClient(() => call("respond", { message: "Hello there" })),
      contextManager: new ContextManager({ strategy: new NoCompact(), budgetTokens: 10_000 }),
    });
    await expect(runner.run(wf, "hi")).resolves.toBe("Hello there");
  });

  it("passes validation like any other tool, and rejects a missing message", () => {
    const tools = { respond: respondTool() };
    expect(validateResponse(call("respond", { message: "ok" }), { tools }).kind).toBe("calls");
    const bad = validateResponse(call("respond", {}), { tools });
    expect(bad.kind).toBe("rejected");
  });

  it("can be renamed", () => {
    expect(respondTool({ name: "reply" }).name).toBe("reply");
  });
});
