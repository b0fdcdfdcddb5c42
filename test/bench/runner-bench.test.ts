import { describe, expect, it } from "vitest";
import { aiSdkRun, benchRunner, benchWorkflow, forgeRun, InstantToolClient } from "../../eval/bench/runner.bench.js";

describe("runner bench loops", () => {
  it("runs the forge loop for exactly N iterations, ending on finish", async () => {
    await expect(forgeRun(3)).resolves.toBeUndefined();
    const runner = benchRunner(4);
    await expect(runner.run(benchWorkflow, "go")).resolves.toBe("done");
    expect(runner.lastRunStats).toMatchObject({ outcome: "done", iterations: 4, toolCalls: 4, completedSteps: ["step", "finish"] });
  });

  it("runs the AI SDK loop for exactly N steps, ending on finish", async () => {
    await expect(aiSdkRun(3)).resolves.toBeUndefined();
  });

  it("InstantToolClient scripts N-1 step calls, then finish, then fails loudly", async () => {
    const client = new InstantToolClient(2);
    await expect(client.send()).resolves.toMatchObject({ toolCalls: [{ tool: "step", args: { i: 0 } }] });
    await expect(client.send()).resolves.toMatchObject({ toolCalls: [{ tool: "finish", args: {} }] });
    await expect(client.send()).rejects.toThrow(/past the scripted 2/);
  });
});
