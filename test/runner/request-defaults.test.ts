/**
 * WorkflowRunnerOptions.request: the RequestOverrides every model call of the runner's runs
 * carries (sent, streamed, retried), checked like the other options.
 */
import { describe, expect, it } from "vitest";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import { InvalidArgumentError, type LLMResponse, type RequestOverrides, type SendOptions, type WireMessage } from "../../src/core/index.js";
import type { ToolSpec } from "../../src/core/tool.js";
import { WorkflowRunner, type WorkflowRunnerOptions } from "../../src/runner.js";
import { correctNext, loopWorkflow, PolicyClient, scriptThenCorrect } from "../support/loop-fixtures.js";

/** A PolicyClient that keeps the `request` of every call it gets. */
class RecordingClient extends PolicyClient {
  readonly seen: (RequestOverrides | undefined)[] = [];
  override async send(messages: WireMessage[], tools?: ToolSpec[], options?: SendOptions): Promise<LLMResponse> {
    this.seen.push(options?.request);
    return super.send(messages, tools, options);
  }
}

const cm = () => new ContextManager({ strategy: new NoCompact(), budgetTokens: 1_000_000 });
const vars = { promptVars: { company: "Acme" } };

function runner(client: RecordingClient, options: Partial<WorkflowRunnerOptions> = {}) {
  return new WorkflowRunner({ client, contextManager: cm(), ...options });
}

describe("WorkflowRunnerOptions.request", () => {
  const request: RequestOverrides = { toolChoice: "required", body: { temperature: 0.2, reasoning_effort: "high", options: { num_ctx: 8192 } } };

  it.each([false, true])("goes with every model call, retries included (stream: %s)", async (stream) => {
    // Turn 0 answers prose: the retry nudge means one call more, and it carries the defaults too.
    const client = new RecordingClient(scriptThenCorrect([{ type: "text", content: "thinking about it" }]));
    const { workflow } = loopWorkflow();
    await expect(runner(client, { request, stream }).run(workflow, "go", vars)).resolves.toEqual({ done: "all done" });
    expect(client.seen.length).toBe(4);
    for (const seen of client.seen) expect(seen).toEqual(request);
  });

  it("sends none when unset", async () => {
    const client = new RecordingClient(correctNext);
    await runner(client).run(loopWorkflow().workflow, "go", vars);
    expect(client.seen.length).toBe(3);
    expect(client.seen.every((r) => r === undefined)).toBe(true);
  });

  it.each<[string, unknown, RegExp]>([
    ["not an object", "required", /expected \{ toolChoice\?, body\?, model\?, apiKey\? \}/],
    ["an unknown field", { tool_choice: "required" }, /unknown field\(s\) tool_choice/],
    ["a misspelt toolChoice", { toolChoice: "any" }, /use "none", "auto", "required"/],
    ["a body that is not an object", { body: [1] }, /expected an object of request fields/],
    ["a body field the client owns", { body: { tools: [] } }, /tools is set by the client/],
    ["a body that is not JSON", { body: { n: 1n } }, /must be plain JSON/],
    ["an empty model", { model: "" }, /non-empty string/],
  ])("refuses %s", (_name, bad, message) => {
    const client = new RecordingClient(correctNext);
    const make = () => runner(client, { request: bad as RequestOverrides });
    expect(make).toThrow(InvalidArgumentError);
    expect(make).toThrow(message);
  });

  it("takes a named function as toolChoice", () => {
    expect(() => runner(new RecordingClient(correctNext), { request: { toolChoice: { type: "function", function: { name: "finish" } } } })).not.toThrow();
  });
});
