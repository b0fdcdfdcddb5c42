/**
 * The one place that knows each front door: how a dialect's body becomes a ProxyRequest, and how
 * an outcome goes back out in that dialect (the JSON body, the stream, extra headers). The HTTP
 * app asks for a front door and never checks the dialect itself.
 */
import type { Dialect } from "../proxy-request/http-error.js";
import type { ProxyRequest } from "../proxy-request/proxy-request.js";
import { parseMessagesRequest } from "./anthropic-request.js";
import { AnthropicStreamEncoder, anthropicMessage } from "./anthropic-response.js";
import { parseOllamaChatRequest } from "./ollama-request.js";
import { OllamaStreamEncoder, ollamaChatResponse } from "./ollama-response.js";
import { parseChatCompletionRequest } from "./openai-request.js";
import { OpenAIStreamEncoder, chatCompletion } from "./openai-response.js";
import { parseResponsesRequest } from "./responses-request.js";
import { ResponsesStreamEncoder, responsesResponse } from "./responses-response.js";
import type { AnswerOutcome, ResponseMeta, StreamEncoder } from "./sse-frames.js";

export interface FrontDoor {
  request: ProxyRequest;
  /** Prefix of the response id (`chatcmpl-`, `msg_`, `resp_`; Ollama's answers carry none). */
  idPrefix: string;
  /** How the stream is framed: server-sent events, or Ollama's one JSON object per line. */
  wire: "sse" | "ndjson";
  body(outcome: AnswerOutcome, meta: ResponseMeta): Record<string, unknown>;
  encoder(meta: ResponseMeta): StreamEncoder;
}

/**
 * @example
 * frontDoor("openai", { messages: [{ role: "user", content: "hi" }] }).idPrefix; // "chatcmpl-"
 */
export function frontDoor(dialect: Dialect, body: Record<string, unknown>): FrontDoor {
  switch (dialect) {
    case "openai":
      return { request: parseChatCompletionRequest(body), idPrefix: "chatcmpl-", wire: "sse", body: chatCompletion, encoder: (meta) => new OpenAIStreamEncoder(meta) };
    case "anthropic":
      return { request: parseMessagesRequest(body), idPrefix: "msg_", wire: "sse", body: anthropicMessage, encoder: (meta) => new AnthropicStreamEncoder(meta) };
    case "ollama": {
      // Ollama's answers carry their durations: the request's clock starts with its door.
      const started = process.hrtime.bigint();
      return {
        request: parseOllamaChatRequest(body),
        idPrefix: "",
        wire: "ndjson",
        body: (outcome, meta) => ollamaChatResponse(outcome, meta, started),
        encoder: (meta) => new OllamaStreamEncoder(meta, started),
      };
    }
    case "responses": {
      const { request, shape } = parseResponsesRequest(body);
      return {
        request,
        idPrefix: "resp_",
        wire: "sse",
        body: (outcome, meta) => responsesResponse(outcome, meta, shape),
        encoder: (meta) => new ResponsesStreamEncoder(meta, shape),
      };
    }
  }
}
