/**
 * The one place that knows each front door: how a dialect's body becomes a ProxyRequest, and how
 * an outcome goes back out in that dialect (the JSON body, the stream, extra headers). The HTTP
 * app asks for a front door and never checks the dialect itself.
 */
import type { Dialect } from "../proxy-request/http-error.js";
import type { ProxyRequest } from "../proxy-request/proxy-request.js";
import { parseMessagesRequest } from "./anthropic-request.js";
import { AnthropicStreamEncoder, anthropicMessage } from "./anthropic-response.js";
import { parseChatCompletionRequest } from "./openai-request.js";
import { OpenAIStreamEncoder, chatCompletion } from "./openai-response.js";
import { parseResponsesRequest } from "./responses-request.js";
import { ResponsesStreamEncoder, responsesResponse } from "./responses-response.js";
import type { AnswerOutcome, ResponseMeta, StreamEncoder } from "./sse-frames.js";

export interface FrontDoor {
  request: ProxyRequest;
  /** Prefix of the response id (`chatcmpl-`, `msg_`, `resp_`). */
  idPrefix: string;
  /** Headers every answer to this request carries (e.g. the tools the backend was not offered). */
  headers: Record<string, string>;
  body(outcome: AnswerOutcome, meta: ResponseMeta): Record<string, unknown>;
  encoder(meta: ResponseMeta): StreamEncoder;
}

/** Built-in Responses tools left out of the backend request, named for the caller. */
export const DROPPED_TOOLS_HEADER = "x-forge-dropped-tools";

/**
 * @example
 * frontDoor("openai", { messages: [{ role: "user", content: "hi" }] }).idPrefix; // "chatcmpl-"
 */
export function frontDoor(dialect: Dialect, body: Record<string, unknown>): FrontDoor {
  switch (dialect) {
    case "openai":
      return { request: parseChatCompletionRequest(body), idPrefix: "chatcmpl-", headers: {}, body: chatCompletion, encoder: (meta) => new OpenAIStreamEncoder(meta) };
    case "anthropic":
      return { request: parseMessagesRequest(body), idPrefix: "msg_", headers: {}, body: anthropicMessage, encoder: (meta) => new AnthropicStreamEncoder(meta) };
    case "responses": {
      const { request, shape } = parseResponsesRequest(body);
      return {
        request,
        idPrefix: "resp_",
        headers: shape.dropped.length > 0 ? { [DROPPED_TOOLS_HEADER]: shape.dropped.join(", ") } : {},
        body: (outcome, meta) => responsesResponse(outcome, meta, shape),
        encoder: (meta) => new ResponsesStreamEncoder(meta, shape),
      };
    }
  }
}
