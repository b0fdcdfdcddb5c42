/**
 * A foreign orchestration loop (not forge-ts's state machine) guarded by the `Guardrails` facade.
 * The "model" is a scripted list of LLMResponses, so this runs offline and deterministically:
 * bare text → retry, unknown tool → tool_error, bad args → tool_error, premature terminal →
 * step_blocked, rescued fenced-JSON call → execute, the synthetic respond tool → done.
 *
 * Run: npx tsx eval/examples/foreign-loop.ts
 */
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { ToolResolutionError } from "../../src/core/errors.js";
import type { LLMResponse, ToolCall } from "../../src/core/llm.js";
import { defineTool, type AnyToolDef } from "../../src/core/tool.js";
import { Guardrails, type GuardrailDecision } from "../../src/runner/guardrails.js";
import { toolErrorMessage, toolResolutionMessage } from "../../src/guardrails/nudges.js";
import type { ExecutedResult } from "../../src/runner/guardrails.js";

/** The foreign loop's own message shape (OpenAI-like); forge-ts does not own it. */
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string; tool_calls?: { id: string; name: string; args: unknown }[] }
  | { role: "tool"; tool_call_id: string; content: string };

const tools: Record<string, AnyToolDef> = {
  get_weather: defineTool({
    name: "get_weather",
    description: "Current weather for a city",
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      if (city === "Atlantis") throw new ToolResolutionError(`no weather station in ${city}`, "get_weather");
      return `21C and sunny in ${city}`;
    },
  }),
  // The synthetic respond tool (seed 002): the model answers the user through a tool call.
  respond: defineTool({
    name: "respond",
    description: "Send the final answer to the user",
    parameters: z.object({ message: z.string() }),
    execute: ({ message }) => message,
  }),
};

/** The scripted model: one response per turn, in order. */
export const defaultScript: LLMResponse[] = [
  { type: "text", content: "The weather in Paris is usually pleasant." },
  { type: "tool_calls", toolCalls: [{ tool: "get_forecast", args: { city: "Paris" }, id: "c1" }] },
  { type: "tool_calls", toolCalls: [{ tool: "get_weather", args: { city: 75001 }, id: "c2" }] },
  { type: "tool_calls", toolCalls: [{ tool: "respond", args: { message: "Probably sunny!" }, id: "c3" }] },
  { type: "text", content: 'Checking first.\n```json\n{"tool": "get_weather", "args": {"city": "Paris"}}\n```' },
  { type: "tool_calls", toolCalls: [{ tool: "respond", args: { message: "It is 21C and sunny in Paris." }, id: "c5" }] },
];

export interface ForeignLoopResult {
  /** The action of every decision, in order. */
  decisions: GuardrailDecision["action"][];
  result: unknown;
  messages: ChatMessage[];
}

/** Run the loop until the terminal tool succeeds; throws the fatal error if guardrails give up. */
export async function runForeignLoop(script: readonly LLMResponse[] = defaultScript, log: (line: string) => void = console.log): Promise<ForeignLoopResult> {
  const guard = new Guardrails({ tools, requiredSteps: ["get_weather"], terminalTools: "respond", maxRetries: 2 });
  const messages: ChatMessage[] = [
    { role: "system", content: "Answer weather questions. Always check the weather before responding." },
    { role: "user", content: "What's the weather in Paris?" },
  ];
  const decisions: GuardrailDecision["action"][] = [];
  const model = script[Symbol.iterator]();

  for (let turn = 1; ; turn++) {
    const next = model.next();
    if (next.done) throw new Error(`scripted model ran out of responses after ${turn - 1} turn(s)`);
    const decision = guard.check(next.value);
    decisions.push(decision.action);
    log(`turn ${turn}: ${describe(decision)}`);

    switch (decision.action) {
      case "fatal":
        throw decision.error;
      case "retry":
        if (next.value.type === "text") messages.push({ role: "assistant", content: next.value.content });
        // Retry nudges belong on the user channel (seed 001): a positive instruction, not a tool error.
        messages.push({ role: "user", content: decision.nudge.content });
        break;
      case "tool_error":
      case "step_blocked": {
        const ids = appendCalls(messages, decision.toolCalls, turn);
        for (const r of decision.results) messages.push({ role: "tool", tool_call_id: ids[r.index] as string, content: r.content });
        break;
      }
      case "execute": {
        const ids = appendCalls(messages, decision.toolCalls, turn);
        const executed: ExecutedResult[] = [];
        let result: unknown;
        for (const [i, call] of decision.toolCalls.entries()) {
          const outcome = await execute(call.tool, call.args, turn, i);
          executed.push({ tool: call.tool, args: call.args, ...outcome.record });
          messages.push({ role: "tool", tool_call_id: ids[i] as string, content: outcome.content });
          if (outcome.record.ok && call.tool === "respond") result = outcome.value;
        }
        const { done, fatal } = guard.record(executed);
        if (fatal) throw fatal;
        if (done) {
          log(`done: ${String(result)}`);
          return { decisions, result, messages };
        }
        break;
      }
    }
  }
}

function describe(d: GuardrailDecision): string {
  switch (d.action) {
    case "execute":
      return `execute ${d.toolCalls.map((c) => `${c.tool}(${JSON.stringify(c.args)})`).join(", ")}`;
    case "retry":
      return `retry → user: ${d.nudge.content}`;
    case "tool_error":
      return `tool_error → ${d.results.map((r) => r.content).join(" | ")}`;
    case "step_blocked":
      return `step_blocked (${d.kind}, tier ${d.tier}) → ${d.results.map((r) => r.content).join(" | ")}`;
    case "fatal":
      return `fatal: ${d.error.name}: ${d.error.message}`;
  }
}

/** Echo the calls as an assistant message; returns the id each call is answered under. */
function appendCalls(messages: ChatMessage[], calls: readonly ToolCall[], turn: number): string[] {
  const ids = calls.map((c, i) => c.id ?? `call_${turn}_${i}`);
  messages.push({ role: "assistant", content: "", tool_calls: calls.map((c, i) => ({ id: ids[i] as string, name: c.tool, args: c.args })) });
  return ids;
}

async function execute(
  name: string,
  args: Record<string, unknown>,
  turn: number,
  callIndex: number,
): Promise<{ content: string; value?: unknown; record: Pick<ExecutedResult, "ok" | "resolution" | "error"> }> {
  const tool = tools[name];
  if (!tool) throw new Error(`guardrails approved unknown tool ${name}`);
  const context = { signal: new AbortController().signal, idempotencyKey: `demo:${turn}:${callIndex}`, runId: "demo", iteration: turn, callIndex };
  try {
    const value = await tool.execute(args, context);
    return { content: String(value), value, record: { ok: true } };
  } catch (error) {
    // Tool failures are data in a loop: fed back to the model, counted by guardrails.record.
    if (ToolResolutionError.isInstance(error)) return { content: toolResolutionMessage(name, error), record: { ok: false, resolution: true } };
    return { content: toolErrorMessage(name, error), record: { ok: false, error } };
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { decisions } = await runForeignLoop();
  console.log(`decisions: ${decisions.join(" → ")}`);
}
