/**
 * A scripted small model as an AI SDK 7 `MockLanguageModelV4`: each answer is chosen from the
 * prompt alone (how many real tool results it holds, whether the last message is a nudge), so
 * the same script serves doGenerate and doStream and any number of retries.
 */
import type { LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4GenerateResult, LanguageModelV4Prompt, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai-v7/test";

export const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 4, text: 4, reasoning: undefined },
};

/** One answer: text, native calls, or both. */
export interface Reply {
  text?: string;
  calls?: { name: string; args: unknown; id?: string }[];
}

export const hermes = (name: string, args: unknown) => `<tool_call>{"name": "${name}", "arguments": ${JSON.stringify(args)}}</tool_call>`;
export const mistral = (name: string, args: unknown) => `[TOOL_CALLS][{"name": "${name}", "arguments": ${JSON.stringify(args)}}]`;

function content(reply: Reply): LanguageModelV4Content[] {
  const parts: LanguageModelV4Content[] = [];
  if (reply.text !== undefined) parts.push({ type: "text", text: reply.text });
  (reply.calls ?? []).forEach((c, i) => parts.push({ type: "tool-call", toolCallId: c.id ?? `native_${i}`, toolName: c.name, input: JSON.stringify(c.args) }));
  return parts;
}

export function generated(reply: Reply): LanguageModelV4GenerateResult {
  const calls = (reply.calls ?? []).length > 0;
  return { content: content(reply), finishReason: { unified: calls ? "tool-calls" : "stop", raw: calls ? "tool_calls" : "stop" }, usage: USAGE, warnings: [] };
}

/** The same answer as a provider streams it: text in small deltas, then whole tool-call parts. */
export function streamed(reply: Reply): ReadableStream<LanguageModelV4StreamPart> {
  const result = generated(reply);
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }, { type: "response-metadata", id: "resp-1", modelId: "mock" }];
  for (const part of result.content) {
    if (part.type === "text") {
      parts.push({ type: "text-start", id: "t" });
      for (let i = 0; i < part.text.length; i += 5) parts.push({ type: "text-delta", id: "t", delta: part.text.slice(i, i + 5) });
      parts.push({ type: "text-end", id: "t" });
    } else if (part.type === "tool-call") parts.push(part);
  }
  parts.push({ type: "finish", usage: USAGE, finishReason: result.finishReason });
  return convertArrayToReadableStream(parts);
}

/** Text of every part of a message, tool results included. */
export function messageText(m: LanguageModelV4Prompt[number]): string {
  if (typeof m.content === "string") return m.content;
  return m.content
    .map((p) => {
      if (p.type === "text") return p.text;
      if (p.type === "tool-result") return "value" in p.output ? (typeof p.output.value === "string" ? p.output.value : JSON.stringify(p.output.value)) : "";
      if (p.type === "tool-call") return JSON.stringify(p);
      return "";
    })
    .join("");
}

/** Tool-channel nudges open with a bracketed marker such as `[UnknownTool]`. */
const TOOL_ERROR_MARKER = /^\[[A-Za-z]+\]/;

export interface PromptView {
  /** Real tool results (not tool-channel nudges). */
  results: number;
  /** The last message is a nudge: this is a retry. */
  retry: boolean;
  last: string;
}

export function view(prompt: LanguageModelV4Prompt): PromptView {
  const isNudgeResult = (m: LanguageModelV4Prompt[number]) => m.role === "tool" && TOOL_ERROR_MARKER.test(messageText(m));
  const results = prompt.filter((m) => m.role === "tool" && !isNudgeResult(m)).length;
  const last = prompt.at(-1)!;
  const firstUser = prompt.findIndex((m) => m.role === "user");
  const retry = isNudgeResult(last) || (last.role === "user" && prompt.indexOf(last) !== firstUser);
  return { results, retry, last: messageText(last) };
}

/**
 * @example
 * const model = scriptedModel((v) => (v.results === 0 ? { text: hermes("get_weather", { city: "Oslo" }) } : { text: "21 °C" }));
 */
export function scriptedModel(script: (v: PromptView, options: LanguageModelV4CallOptions) => Reply): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    modelId: "small-8b",
    doGenerate: async (options) => generated(script(view(options.prompt), options)),
    doStream: async (options) => ({ stream: streamed(script(view(options.prompt), options)) }),
  });
}
