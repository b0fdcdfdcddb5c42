/**
 * `new WorkflowRunner({ metrics })`: the runner counts its runs in the shared metric set —
 * runs by outcome and their duration, active runs, and each ended run's nudges, rescues,
 * spent budget and tokens from its final stats — read back from the Prometheus text.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedClient } from "../../src/clients/scripted.js";
import { ContextManager, NoCompact } from "../../src/context/index.js";
import type { LLMResponse } from "../../src/core/llm.js";
import { defineTool } from "../../src/core/tool.js";
import { Workflow } from "../../src/core/workflow.js";
import { WorkflowRunner } from "../../src/runner.js";
import { createForgeMetrics } from "../../src/telemetry/metrics.js";
import { readScrape } from "../support/prometheus.js";

const workflow = new Workflow({
  name: "weather",
  description: "Weather desk",
  tools: {
    get_weather: defineTool({ name: "get_weather", description: "Weather for a city", parameters: z.object({ city: z.string() }), execute: async ({ city }) => `12C in ${city}` }),
    answer: defineTool({ name: "answer", description: "Final answer", parameters: z.object({ text: z.string() }), execute: async ({ text }) => text }),
  },
  requiredSteps: ["get_weather"],
  terminalTool: "answer",
});
const usage = { inputTokens: 100, outputTokens: 10 };
const text = (content: string): LLMResponse => ({ type: "text", content, usage });
const calls = (tool: string, args: Record<string, unknown>): LLMResponse => ({ type: "tool_calls", toolCalls: [{ tool, args, id: `c-${tool}` }], usage });
const cm = () => new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000 });

describe("WorkflowRunner metrics", () => {
  it("counts runs by outcome, and an ended run's nudges, rescues, spent budget and tokens", async () => {
    const metrics = createForgeMetrics({ processMetrics: false });
    const ok = new ScriptedClient({
      responses: [
        text("Let me think about it."), // a retry nudge
        text('<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'), // a rescue
        calls("answer", { text: "12C" }),
      ],
    });
    expect(await new WorkflowRunner({ client: ok, contextManager: cm(), metrics }).run(workflow, "Weather in Oslo?")).toBe("12C");
    const failing = new ScriptedClient({ responses: [text("no"), text("still no")] });
    await expect(new WorkflowRunner({ client: failing, contextManager: cm(), metrics, maxRetries: 1 }).run(workflow, "Weather?")).rejects.toMatchObject({ code: "FORGE_TOOL_CALL" });

    const s = readScrape(await metrics.registry.metrics());
    expect(s.value("forge_runs_total", { surface: "runner", workflow: "weather", outcome: "done" })).toBe(1);
    expect(s.value("forge_runs_total", { surface: "runner", workflow: "weather", outcome: "failed" })).toBe(1);
    expect(s.count("forge_run_duration_seconds")).toBe(2);
    expect(s.value("forge_active_runs", { surface: "runner" })).toBe(0);
    const at = { surface: "runner", backend: "ScriptedClient" };
    // One in each run: the second run's second refusal spends its budget instead of earning a nudge.
    expect(s.value("forge_nudges_total", { ...at, kind: "retry" })).toBe(2);
    expect(s.value("forge_rescues_total", { ...at, format: "hermes" })).toBe(1); // counted as it happened, by format
    expect(s.value("forge_budgets_exhausted_total", { surface: "runner", kind: "retries" })).toBe(1);
    expect(s.value("forge_tokens_total", { ...at, direction: "input" })).toBe(100 * 5);
    expect(s.value("forge_tokens_total", { ...at, direction: "output" })).toBe(10 * 5);
  });

  it("refuses a metrics option that is not a metric set", () => {
    expect(() => new WorkflowRunner({ client: new ScriptedClient({ responses: [] }), contextManager: cm(), metrics: {} as never })).toThrow(/createForgeMetrics/);
  });
});
