/**
 * A scripted 8B-class model for a two-tool task — get_weather(city), then
 * convert_temperature(celsius, to), then a plain answer — that gets each call wrong on its first
 * try, each time differently, and right once the proxy nudges it:
 *
 *   get_weather          1st try: a call to a misspelled tool, `get_wether`, as bare JSON text
 *                        (or, with `misspelling: "native"`, as a native call)
 *                        retry:   a native call
 *   convert_temperature  1st try: a native call with schema-invalid arguments (celsius "warm")
 *                        retry:   prose, then the call written as Hermes `<tool_call>` text
 *   answer               plain text
 *
 * Like a model, it reads only the request: the number of real tool results in the messages says
 * which step it is on, and a proxy nudge as the last message says this is a retry.
 */
import type { RecordedRequest } from "../../../clients/support/fake-server.js";
import type { ModelReply } from "../../../clients/support/wire.js";
import { hermes } from "../../support/harness.js";

export const PROMPT = "What is the temperature in Oslo, in Fahrenheit?";
export const PROSE = "Let me check the conversion.";
export const FINAL_ANSWER = "It is 21 °C in Oslo, which is 69.8 °F.";
export const BARE_JSON_MISSPELLING = '{"name": "get_wether", "arguments": {"city": "Oslo"}}';

export interface SmallModelOptions {
  /** How the first try misspells the first call (default "bare-json"). */
  misspelling?: "bare-json" | "native";
}

/** A message as the backend received it, Ollama or OpenAI wire. */
export interface WireMessage {
  role: string;
  content?: unknown;
}

/** Tool-channel nudges open with a bracketed marker such as `[UnknownTool]`. */
const TOOL_ERROR_MARKER = /^\[[A-Za-z]+\]/;

export function textOf(message: WireMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
}

export const messagesOf = (req: RecordedRequest | undefined): WireMessage[] => (req?.body.messages ?? []) as WireMessage[];

/** A tool result the caller sent, not a tool-channel nudge from the proxy. */
export const isToolResult = (m: WireMessage): boolean => m.role === "tool" && !TOOL_ERROR_MARKER.test(textOf(m));

/** Something the proxy added to make the model try again: a user-channel or tool-channel nudge. */
export const isNudge = (m: WireMessage): boolean =>
  (m.role === "user" && textOf(m) !== PROMPT) || (m.role === "tool" && TOOL_ERROR_MARKER.test(textOf(m)));

/** The texts of the nudges in one backend request. */
export const nudgesIn = (req: RecordedRequest | undefined): string[] => messagesOf(req).filter(isNudge).map(textOf);

/**
 * The script for `proxyRig`.
 *
 * @example
 * const rig = await proxyRig(smallModel(), { wire: "ollama" });
 */
export function smallModel(options: SmallModelOptions = {}): (n: number, req: RecordedRequest) => ModelReply {
  const misspelled: ModelReply =
    options.misspelling === "native" ? { toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] } : { content: BARE_JSON_MISSPELLING };
  return (_n, req) => {
    const messages = messagesOf(req);
    const step = messages.filter(isToolResult).length;
    const retry = messages.length > 0 && isNudge(messages.at(-1)!);
    if (step === 0) return retry ? { toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] } : misspelled;
    if (step === 1) {
      return retry
        ? { content: `${PROSE} ${hermes("convert_temperature", { celsius: 21, to: "fahrenheit" })}` }
        : { toolCalls: [{ name: "convert_temperature", args: { celsius: "warm", to: "fahrenheit" } }] };
    }
    return { content: FINAL_ANSWER };
  };
}
