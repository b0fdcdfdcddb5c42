/**
 * The simulated model under a forced tool call (tool_choice "required" or a named function):
 * like a grammar-constrained backend it cannot answer in prose, so a bare_text (or call-as-text)
 * mistake never happens and an oracle's text becomes a call carrying that text.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { defineTool } from "../../src/core/tool.js";
import { SimulatedClient, type OracleStep } from "../../src/clients/simulated.js";
import { supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { Workflow } from "../../src/core/index.js";

const demo = supplierQuoteWorkflow();
const specs = demo.workflow.getToolSpecs();
const ask = [{ role: "user" as const, content: demo.userInput }];
const allBare = { name: "all-bare", rates: { bare_text: 1 } };
const allText = { name: "all-text", rates: { bare_text: 0.5, rescue_format: 0.5 } };

describe("SimulatedClient with a forced tool call", () => {
  it("never answers in prose where the same profile always does without it", async () => {
    for (let seed = 0; seed < 40; seed++) {
      const free = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: allText, seed });
      const forced = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: allText, seed });
      expect((await free.send(ask, specs)).type).toBe("text");
      const answer = await forced.send(ask, specs, { request: { toolChoice: "required" } });
      expect(answer).toMatchObject({ type: "tool_calls", toolCalls: [{ tool: "lookup_part", args: { part_number: "PN-4471" } }] });
      expect(forced.injected).toEqual([]);
    }
  });

  it("turns the oracle's text into a call of the workflow's terminal tool, the text in its first string parameter", async () => {
    const oracle = (): OracleStep => ({ text: "No quote possible." });
    const client = new SimulatedClient({ oracle, workflow: demo.workflow, profile: allBare, seed: 3 });
    const answer = await client.send(ask, specs, { request: { toolChoice: "required" } });
    expect(answer.type).toBe("tool_calls");
    const [call] = answer.type === "tool_calls" ? answer.toolCalls : [];
    expect(call?.tool).toBe("submit_quote");
    // part_number is submit_quote's first string parameter; the other required fields are improvised.
    expect(call?.args).toMatchObject({ part_number: "No quote possible." });
    expect(Object.keys(call?.args as object).sort()).toEqual(["part_number", "quantity", "supplier", "unit_price"]);
    // Streaming decides the same answer.
    const streamed: unknown[] = [];
    for await (const chunk of client.sendStream(ask, specs, { request: { toolChoice: "required" } })) if (chunk.type === "final") streamed.push(chunk.response);
    expect((streamed[0] as { toolCalls: { tool: string }[] }).toolCalls[0]!.tool).toBe("submit_quote");
  });

  it("without a workflow calls the first tool offered; a named function is the one called", async () => {
    const note = defineTool({ name: "note", description: "Keep a note", parameters: z.object({ count: z.number(), text: z.string() }), execute: () => "ok" });
    const reply = defineTool({ name: "reply", description: "Answer", parameters: z.object({ message: z.string() }), execute: () => "ok" });
    const wf = new Workflow({ name: "w", description: "d", tools: { note, reply }, requiredSteps: [], terminalTool: "reply", systemPromptTemplate: "s" });
    const tools = wf.getToolSpecs();
    const oracle = (): OracleStep => ({ text: "hello" });
    const bare = new SimulatedClient({ oracle });
    expect(await bare.send(ask, tools, { request: { toolChoice: "required" } })).toEqual({
      type: "tool_calls",
      toolCalls: [{ tool: "note", args: { count: expect.any(Number), text: "hello" }, id: expect.any(String) }],
    });
    const named = await bare.send(ask, tools, { request: { toolChoice: { type: "function", function: { name: "reply" } } } });
    expect(named).toMatchObject({ type: "tool_calls", toolCalls: [{ tool: "reply", args: { message: "hello" } }] });
    await expect(bare.send(ask, tools, { request: { toolChoice: { type: "function", function: { name: "nope" } } } })).rejects.toThrow(InvalidArgumentError);
  });

  it("applies tool_choice only with tools, and auto changes nothing", async () => {
    const oracle = (): OracleStep => ({ text: "plain" });
    const client = new SimulatedClient({ oracle });
    expect(await client.send(ask, [], { request: { toolChoice: "required" } })).toEqual({ type: "text", content: "plain" });
    for (let seed = 0; seed < 10; seed++) {
      const a = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: "chaotic", seed });
      const b = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: "chaotic", seed });
      expect(await a.send(ask, specs, { request: { toolChoice: "auto" } })).toEqual(await b.send(ask, specs));
    }
  });
});
