/**
 * Test helper: a minimal honest tool loop (no guardrails beyond name/arg checks) that keeps
 * history as core Messages and serializes it with the real serializer, so the simulated
 * client is fed exactly what a runner would send.
 */
import { ToolResolutionError, describeError } from "../../src/core/errors.js";
import type { LLMClient, LLMResponse } from "../../src/core/llm.js";
import { createMessage, MessageType, type Message } from "../../src/core/messages.js";
import { serializeMessages, type ApiFormat } from "../../src/core/wire-messages.js";
import { isPlainObject } from "../../src/core/json-value.js";
import type { Workflow } from "../../src/core/workflow.js";
import type { Oracle, OracleStep } from "../../src/clients/simulated.js";
import { readConversation } from "../../src/clients/simulated-view.js";

export function startConversation(workflow: Workflow, userInput: string, promptVars: Record<string, string>): Message[] {
  return [
    createMessage("system", workflow.buildSystemPrompt(promptVars), MessageType.SYSTEM_PROMPT),
    createMessage("user", userInput, MessageType.USER_INPUT),
  ];
}

export interface TerminalCall {
  tool: string;
  args: Record<string, unknown>;
  result: string;
}

/** Append the model's answer and the tools' results; returns the terminal call when one succeeded. */
export async function applyResponse(messages: Message[], response: LLMResponse, workflow: Workflow): Promise<TerminalCall | undefined> {
  const step = messages.filter((m) => m.role === "assistant").length;
  if (response.type === "text") {
    messages.push(createMessage("assistant", response.content, MessageType.TEXT_RESPONSE, { stepIndex: step }));
    messages.push(createMessage("user", "Your last reply was plain text, not a tool call. Reply with a tool call.", MessageType.RETRY_NUDGE, { stepIndex: step }));
    return undefined;
  }
  const toolCalls = response.toolCalls.map((c, i) => ({ name: c.tool, args: c.args, callId: c.id ?? `h_${step}_${i}` }));
  messages.push(createMessage("assistant", "", MessageType.TOOL_CALL, { stepIndex: step, toolCalls }));
  let terminal: TerminalCall | undefined;
  for (const call of toolCalls) {
    const content = await runOne(workflow, call.name, call.args);
    const isTerminal = workflow.isTerminal(call.name) && !content.startsWith("[");
    if (isTerminal) terminal = { tool: call.name, args: call.args as Record<string, unknown>, result: content };
    messages.push(createMessage("tool", content, MessageType.TOOL_RESULT, { stepIndex: step, toolName: call.name, toolCallId: call.callId }));
  }
  return terminal;
}

async function runOne(workflow: Workflow, name: string, args: unknown): Promise<string> {
  const tool = workflow.tools[name];
  if (!tool) return `[UnknownTool] "${name}" is not a tool`;
  if (!isPlainObject(args)) return `[InvalidArguments] ${name}: arguments must be a JSON object`;
  const checked = tool.validateArgs(args);
  if (!checked.ok) return `[InvalidArguments] ${name}: ${checked.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`;
  try {
    const out = await tool.execute(checked.value, {
      signal: new AbortController().signal,
      idempotencyKey: "test",
      runId: "test",
      iteration: 0,
      callIndex: 0,
    });
    return typeof out === "string" ? out : JSON.stringify(out);
  } catch (error) {
    return ToolResolutionError.isInstance(error) ? `[ToolResolutionError] ${name}: ${error.message}` : `[ToolError] ${name}: ${describeError(error)}`;
  }
}

/** The oracle's step as the LLMResponse a perfect model would give. */
export function stepToResponse(step: OracleStep): LLMResponse {
  if ("text" in step) return { type: "text", content: step.text };
  const calls = "calls" in step ? step.calls : [step];
  return { type: "tool_calls", toolCalls: calls.map((c) => ({ tool: c.tool, args: c.args })) };
}

export interface Played {
  terminal?: TerminalCall;
  steps: OracleStep[];
  responses: LLMResponse[];
  messages: Message[];
}

/** Drive `client` (or the oracle itself when no client is given) until a terminal call succeeds. */
export async function play(
  o: { workflow: Workflow; userInput: string; promptVars: Record<string, string>; oracle: Oracle },
  client?: LLMClient,
  format: ApiFormat = "openai",
  maxTurns = 20,
): Promise<Played> {
  const messages = startConversation(o.workflow, o.userInput, o.promptVars);
  const specs = o.workflow.getToolSpecs();
  const out: Played = { steps: [], responses: [], messages };
  for (let turn = 0; turn < maxTurns; turn++) {
    const wire = serializeMessages(messages, client?.apiFormat ?? format);
    const step = o.oracle(readConversation(wire, specs).view);
    const response = client ? await client.send(wire, specs) : stepToResponse(step);
    out.steps.push(step);
    out.responses.push(response);
    const terminal = await applyResponse(messages, response, o.workflow);
    if (terminal) return { ...out, terminal };
    if (!client && response.type === "text") return out;
  }
  return out;
}

/** The wire conversation after `turns` perfect (oracle) turns — a fixed point to probe faults at. */
export async function oracleConversation(
  o: { workflow: Workflow; userInput: string; promptVars: Record<string, string>; oracle: Oracle },
  turns: number,
  format: ApiFormat = "openai",
) {
  const messages = startConversation(o.workflow, o.userInput, o.promptVars);
  const specs = o.workflow.getToolSpecs();
  for (let i = 0; i < turns; i++) {
    const step = o.oracle(readConversation(serializeMessages(messages, format), specs).view);
    await applyResponse(messages, stepToResponse(step), o.workflow);
  }
  return serializeMessages(messages, format);
}
