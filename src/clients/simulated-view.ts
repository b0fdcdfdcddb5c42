/**
 * Reads serialized wire messages (OpenAI or Ollama shape) back into what the simulated model
 * "knows": the tool results so far, the user's request and whether its last turn was
 * corrected. This is the only place the simulated model looks at the conversation.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { WireMessage } from "../core/wire-messages.js";
import { isPlainObject } from "../core/json-value.js";
import type { ToolSpec } from "../core/tool.js";
import { isToolErrorContent } from "../guardrails/nudges.js";

/** What an oracle sees of the run so far. */
export interface OracleView {
  /** Every tool result seen so far, in order, parsed from the wire messages (both formats). */
  results: { tool: string; args: Record<string, unknown>; content: string; isError: boolean; callId?: string }[];
  /** Content of the first user message after the system prompt. */
  userInput: string;
  /** Tools offered on this request. */
  toolNames: string[];
  /** Assistant turns so far in the conversation. */
  turn: number;
}

export type OracleResult = OracleView["results"][number];

/** The view plus what the fault injector needs beyond it. */
export interface ConversationState {
  view: OracleView;
  /**
   * The model's previous turn was answered with a correction: a tool-error result or a
   * retry nudge (a user message after an assistant message).
   */
  corrected: boolean;
}

interface PendingCall {
  tool: string;
  args: Record<string, unknown>;
  callId?: string;
}

/** Args as the model sent them; a non-object is kept visibly instead of pretending it was `{}`. */
function parseArgs(raw: unknown): Record<string, unknown> {
  if (typeof raw === "string") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return { _invalid_arguments: raw };
    }
    return isPlainObject(parsed) ? parsed : { _invalid_arguments: parsed };
  }
  return isPlainObject(raw) ? raw : { _invalid_arguments: raw };
}

function callsOf(message: WireMessage): PendingCall[] {
  const calls = message.tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.map((c: unknown, i) => {
    if (!isPlainObject(c) || !isPlainObject(c.function) || typeof c.function.name !== "string") {
      throw new InvalidArgumentError("messages", `assistant tool_calls[${i}] has no function.name: ${JSON.stringify(c)}`);
    }
    const call: PendingCall = { tool: c.function.name, args: parseArgs(c.function.arguments) };
    if (typeof c.id === "string") call.callId = c.id;
    return call;
  });
}

/** Name a tool message carries itself (OpenAI `name`, Ollama `tool_name`). */
function ownToolName(message: WireMessage): string | undefined {
  const name = (message as { name?: unknown }).name ?? (message as { tool_name?: unknown }).tool_name;
  return typeof name === "string" ? name : undefined;
}

/**
 * Parse a wire conversation. Results are matched to the preceding assistant tool_calls by
 * `tool_call_id` when present (OpenAI), otherwise by order (Ollama). A result whose call was
 * compacted away keeps the tool name it carries and empty args.
 *
 * @example
 * const { view } = readConversation([{ role: "user", content: "Quote PN-4471" }], []);
 * view.userInput; // "Quote PN-4471"
 */
export function readConversation(messages: readonly WireMessage[], tools: readonly ToolSpec[] = []): ConversationState {
  if (!Array.isArray(messages)) throw new InvalidArgumentError("messages", "must be an array of wire messages");
  const results: OracleResult[] = [];
  let userInput: string | undefined;
  let turn = 0;
  let pending: PendingCall[] = [];
  let corrected = false;
  let sawAssistant = false;

  for (const [index, message] of messages.entries()) {
    if (!isPlainObject(message as unknown) || typeof message.role !== "string") {
      throw new InvalidArgumentError("messages", `message ${index} is not a wire message: ${JSON.stringify(message)}`);
    }
    const content = typeof message.content === "string" ? message.content : "";
    switch (message.role) {
      case "system":
        break;
      case "user":
        if (userInput === undefined) userInput = content;
        // A user message after the model spoke is a retry nudge (or a follow-up correction).
        else if (sawAssistant) corrected = true;
        break;
      case "assistant":
        turn++;
        sawAssistant = true;
        corrected = false;
        pending = callsOf(message);
        break;
      case "tool": {
        const id = typeof message.tool_call_id === "string" ? message.tool_call_id : undefined;
        let matchAt = id === undefined ? -1 : pending.findIndex((p) => p.callId === id);
        if (matchAt < 0 && id === undefined && pending.length > 0) matchAt = 0;
        const call = matchAt >= 0 ? pending.splice(matchAt, 1)[0] : undefined;
        const tool = call?.tool ?? ownToolName(message);
        if (tool === undefined) {
          throw new InvalidArgumentError("messages", `tool message ${index} matches no call and names no tool`);
        }
        const isError = isToolErrorContent(content);
        if (isError) corrected = true;
        const result: OracleResult = { tool, args: call?.args ?? {}, content, isError };
        const callId = call?.callId ?? id;
        if (callId !== undefined) result.callId = callId;
        results.push(result);
        break;
      }
      default:
        throw new InvalidArgumentError("messages", `message ${index} has unknown role "${message.role}"`);
    }
  }
  if (userInput === undefined) {
    throw new InvalidArgumentError("messages", "the conversation has no user message for the simulated model to answer");
  }
  return { view: { results, userInput, toolNames: tools.map((t) => t.name), turn }, corrected };
}

/**
 * The most recent successful result, if any (what a repeat_call fault repeats).
 *
 * @example
 * lastSuccess(readConversation(wire).view)?.tool; // "lookup_part"
 */
export function lastSuccess(view: OracleView): OracleResult | undefined {
  for (let i = view.results.length - 1; i >= 0; i--) {
    const r = view.results[i]!;
    if (!r.isError) return r;
  }
  return undefined;
}

/**
 * A canonical string of what the conversation says: roles, contents, call names and
 * arguments, result tool names — but no call ids. Runners mint their own ids (often random),
 * and an id must not change what the simulated model answers.
 *
 * @example
 * conversationKey([{ role: "user", content: "hi" }], []); // '[[["user","hi"]],[]]'
 */
export function conversationKey(messages: readonly WireMessage[], toolNames: readonly string[]): string {
  const canonical = messages.map((m) => {
    const entry: unknown[] = [m.role, typeof m.content === "string" ? m.content : ""];
    if (Array.isArray(m.tool_calls)) {
      entry.push(
        m.tool_calls.map((c: unknown) => {
          const fn = isPlainObject(c) && isPlainObject(c.function) ? c.function : {};
          return [fn.name, typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments)];
        }),
      );
    }
    if (m.role === "tool") entry.push(ownToolName(m) ?? null);
    return entry;
  });
  return JSON.stringify([canonical, toolNames]);
}
