/**
 * Token estimation for context budgeting. The default is the seed's chars/4 heuristic: cheap,
 * tokenizer-free and deliberately a little pessimistic, which is the safe side for a budget.
 */
import { messageText, type Message } from "../core/messages.js";
import { schemaText, type ToolSpec } from "../core/tool.js";

/** Estimates how many tokens a history occupies in the model's context. */
export type TokenEstimator = (messages: readonly Message[]) => number;

/**
 * Tokens charged per message on top of its text: chat templates wrap every message in role
 * markers and separators (ChatML's `<|im_start|>role\n … <|im_end|>\n` is about 4 tokens).
 *
 * @example
 * const emptyHistoryOf = (n: number) => n * MESSAGE_OVERHEAD_TOKENS;
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * The chars/4 estimate of one message: `ceil(messageText(m).length / 4)` plus
 * {@link MESSAGE_OVERHEAD_TOKENS}. Tool calls count through `messageText` (name and JSON args).
 *
 * @example
 * estimateMessageTokensChars4(createMessage("user", "12345678", "user_input")); // 2 + 4 = 6
 */
export function estimateMessageTokensChars4(message: Message): number {
  const cached = estimates.get(message);
  if (cached !== undefined) return cached;
  const tokens = Math.ceil(messageText(message).length / 4) + MESSAGE_OVERHEAD_TOKENS;
  estimates.set(message, tokens);
  return tokens;
}

/**
 * Messages are never mutated (strategies copy, the loop appends), so each one is measured once;
 * the loop re-estimates the whole history every iteration.
 */
const estimates = new WeakMap<Message, number>();

/**
 * Default estimator: the sum of {@link estimateMessageTokensChars4} over the history. Because it
 * is a per-message sum, strategies may estimate incrementally when they are handed this
 * exact function (TieredCompact does).
 *
 * @example
 * const tokens = estimateTokensChars4(messages);
 */
export const estimateTokensChars4: TokenEstimator = (messages) => {
  let total = 0;
  for (const m of messages) total += estimateMessageTokensChars4(m);
  return total;
};

/**
 * Tool definitions take context too (rendered into the chat template or the system prompt);
 * counted like message text: chars/4 of the tools as JSON, their names and descriptions unescaped.
 *
 * @example
 * estimateToolTokensChars4([weather.spec]); // e.g. 38
 */
export function estimateToolTokensChars4(tools: readonly ToolSpec[]): number {
  if (tools.length === 0) return 0;
  let chars = tools.length + 1; // the list's brackets and the commas between its tools
  for (const t of tools) chars += toolChars(t);
  return Math.ceil(chars / 4);
}

/** `{"name":"","description":"","parameters":}`: what JSON adds around a tool's three fields. */
const TOOL_JSON_FRAME = 42;

/**
 * One tool as `{"name":…,"description":…,"parameters":…}`, its name and description counted as
 * text (unescaped, like message text: JSON.stringify of a coding agent's long descriptions cost
 * a tenth of a request, issue 46) and its schema from the text made once (schemaText).
 */
function toolChars(tool: ToolSpec): number {
  return TOOL_JSON_FRAME + tool.name.length + (tool.description?.length ?? 0) + (tool.parameters === undefined ? 0 : schemaText(tool.parameters).length);
}

/**
 * The chars/4 estimate of a whole request's prompt: its messages and the tools offered with them
 * (what the proxy's count_tokens answers without a tokenizer, and its context-window check).
 *
 * @example
 * estimatePromptTokensChars4(messages, tools) === estimateTokensChars4(messages) + estimateToolTokensChars4(tools); // true
 */
export function estimatePromptTokensChars4(messages: readonly Message[], tools: readonly ToolSpec[] = []): number {
  return estimateTokensChars4(messages) + estimateToolTokensChars4(tools);
}
