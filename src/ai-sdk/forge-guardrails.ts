/**
 * `forgeGuardrails()`: the proxy's per-request guardrails as an AI SDK 7 language-model
 * middleware. One doGenerate / doStream is one run of machines/proxy-request.machine.ts, the
 * machine the proxy runs for one HTTP request, through the proxy's own driver
 * (src/request-driver.ts); the wrapped model plays the backend client's part
 * (the machine's `infer` service), so rescue, nudges, budgets and structured-output checks are
 * the proxy's own code, not a copy.
 *
 * Unjudged calls (no tools to guard and no JSON format) go straight to the model, streams live.
 * Judged streams release prose as the proxy does (the same streaming judge: text is held only
 * from where a call may start), then the judged answer's calls as tool-call parts; a required or
 * named tool choice and JSON formats run the model to a whole answer first.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Middleware, LanguageModelV4StreamResult, LanguageModelV4Usage } from "@ai-sdk/provider";
import { GuardrailsExhaustedError, InvalidArgumentError } from "../core/errors.js";
import { budgetOption } from "../guardrails/budget.js";
import type { ProxyGuardrailEvent } from "../proxy-request/guardrail-events.js";
import { HttpError } from "../proxy-request/http-error.js";
import { isJudged, releaseMode, type ProxyOutcome, type ProxyRequest } from "../proxy-request/proxy-request.js";
import type { ProxyGuardrailOptions } from "../proxy-request/request-context.js";
import { requestToolDefs, responseSchemaCheck } from "../proxy-request/request-tools.js";
import { requestDriver } from "../request-driver.js";
import { attemptPrompt, callRequest } from "./call-request.js";
import { generateResult, streamParts } from "./guarded-result.js";
import { LiveParts } from "./live-parts.js";
import { generatedAttempt, streamedAttempt, sumUsage, type ModelAttempt } from "./model-attempt.js";

export interface ForgeGuardrailsOptions {
  /** Unusable answers in a row (text where a call is due, unknown tools, not the requested JSON) before giving up. Default 3, as the proxy. */
  maxRetries?: number;
  /** Answers in a row with schema-invalid arguments before giving up. Default 2, as the proxy. */
  maxToolErrors?: number;
  /** Turn calls the model wrote as text (Hermes, Mistral `[TOOL_CALLS]`, bare JSON, ...) into tool calls. Default true. */
  rescueEnabled?: boolean;
  /**
   * When a budget runs out: `"throw"` (default) a GuardrailsExhaustedError; `"return"` the
   * model's last answer as it was, marked in `providerMetadata.forge.exhausted` (the proxy's
   * behaviour, for loops that handle invalid calls themselves).
   */
  onExhausted?: "throw" | "return";
  /** Each intervention (a rescue, a nudge, a spent budget), e.g. for logs or metrics. */
  onGuardrail?: (event: ProxyGuardrailEvent) => void;
}

/** What the infer service needs of one call beyond the machine's JSON input. */
interface CallIo {
  model: LanguageModelV4;
  params: LanguageModelV4CallOptions;
  stream: boolean;
  /** How many machine messages are the caller's prompt: the rest are the machine's retries. */
  callerMessages: number;
  last?: ModelAttempt;
  usage?: LanguageModelV4Usage;
  /** The model's own error, rethrown as it was (an APICallError keeps its retry semantics). */
  error?: unknown;
  /** Judged streams: where released prose goes while the run goes on. */
  live?: LiveParts | undefined;
}

const noop = () => undefined;

function checkOptions(o: ForgeGuardrailsOptions) {
  if (typeof o !== "object" || o === null) throw new InvalidArgumentError("options", "forgeGuardrails takes an options object or nothing");
  if (o.rescueEnabled !== undefined && typeof o.rescueEnabled !== "boolean") throw new InvalidArgumentError("rescueEnabled", "must be a boolean");
  if (o.onExhausted !== undefined && o.onExhausted !== "throw" && o.onExhausted !== "return") throw new InvalidArgumentError("onExhausted", 'must be "throw" or "return"');
  if (o.onGuardrail !== undefined && typeof o.onGuardrail !== "function") throw new InvalidArgumentError("onGuardrail", "must be a function");
  const guardrails: ProxyGuardrailOptions = {
    maxRetries: budgetOption("maxRetries", o.maxRetries, 3),
    maxToolErrors: budgetOption("maxToolErrors", o.maxToolErrors, 2),
    rescueEnabled: o.rescueEnabled ?? true,
    // The caller's tool list is the AI SDK's to define: no `respond` tool is added to it.
    injectRespondTool: false,
  };
  return { guardrails, onExhausted: o.onExhausted ?? "throw", onGuardrail: o.onGuardrail };
}

/** A malformed tool or output schema is the caller's mistake, named before the model is asked. */
function checkSchemas(request: ProxyRequest): void {
  try {
    requestToolDefs(request.tools);
    if (request.format?.kind === "json_schema") responseSchemaCheck(request.format.schema);
  } catch (error) {
    if (error instanceof HttpError) throw new InvalidArgumentError(error.message.startsWith("response_format") ? "responseFormat" : "tools", error.message);
    throw error;
  }
}

/**
 * @example
 * import { wrapLanguageModel } from "ai";
 * import { forgeGuardrails } from "forge-ts/ai-sdk";
 * const model = wrapLanguageModel({ model: ollama("qwen3:8b"), middleware: forgeGuardrails() });
 */
export function forgeGuardrails(options: ForgeGuardrailsOptions = {}): LanguageModelV4Middleware {
  const cfg = checkOptions(options);
  const drive = requestDriver<CallIo>(async (input, io, signal) => {
    // The machine's own signal: aborted when the run is cancelled (the caller's abortSignal fired).
    const params: LanguageModelV4CallOptions = { ...io.params, prompt: attemptPrompt(io.params.prompt, input.messages.slice(io.callerMessages)), abortSignal: signal };
    try {
      let attempt: ModelAttempt;
      if (io.stream) {
        const result = await io.model.doStream(params);
        const sink = io.live?.attempt(input.tools.map((t) => t.name), { request: result.request, response: result.response });
        attempt = await streamedAttempt(result, sink);
      } else attempt = generatedAttempt(await io.model.doGenerate(params));
      io.usage = io.usage === undefined ? attempt.usage : sumUsage(io.usage, attempt.usage);
      io.last = attempt;
      return attempt.llm;
    } catch (error) {
      io.error = error;
      throw error;
    }
  });
  // Web Crypto, not node:crypto: AI SDK apps also run on edge runtimes.
  const idPrefix = globalThis.crypto.randomUUID().slice(0, 8);
  let counter = 0;

  async function run(model: LanguageModelV4, params: LanguageModelV4CallOptions, stream: boolean, request: ProxyRequest, live?: LiveParts) {
    const requestId = `${idPrefix}${(counter++).toString(36)}`;
    const io: CallIo = { model, params, stream, callerMessages: request.messages.length, live };
    const signal = params.abortSignal;
    signal?.throwIfAborted();
    const outcome = await drive({ requestId, request, options: cfg.guardrails }, io, { signal, onGuardrail: cfg.onGuardrail });
    return { outcome, io };
  }

  /** The accepted answer with the attempt it came from, or the typed error that ended the call. */
  function settle(outcome: ProxyOutcome, io: CallIo, signal: AbortSignal | undefined) {
    if (outcome.kind === "cancelled") throw signal?.reason ?? new Error(`forgeGuardrails: call cancelled (${outcome.reason})`);
    if (outcome.kind === "failed") throw io.error ?? new Error(`forgeGuardrails: ${outcome.error.message}`);
    if (outcome.exhausted && cfg.onExhausted === "throw") throw new GuardrailsExhaustedError(outcome.exhausted.reason, outcome.exhausted.attempts, outcome.exhausted.lastError);
    if (!io.last || !io.usage) throw new Error("forgeGuardrails: an answer without a model attempt");
    return { outcome, last: io.last, usage: io.usage };
  }

  return {
    specificationVersion: "v4",
    async wrapGenerate({ doGenerate, params, model }) {
      const request = callRequest(params, model.modelId, false);
      if (!isJudged(request)) return doGenerate();
      checkSchemas(request);
      const { outcome, io } = await run(model, params, false, request);
      const done = settle(outcome, io, params.abortSignal);
      return generateResult(done.outcome, done.last, done.usage);
    },
    async wrapStream({ doStream, params, model }): Promise<LanguageModelV4StreamResult> {
      const request = callRequest(params, model.modelId, true);
      if (!isJudged(request)) return doStream();
      checkSchemas(request);
      const live = releaseMode(request, cfg.guardrails.injectRespondTool) === "judged" ? new LiveParts() : undefined;
      const running = run(model, params, true, request, live);
      if (live) {
        // Whichever comes first: released prose (the stream is the caller's now), or the whole run.
        await Promise.race([live.started, running.then(noop, noop)]);
        if (live.so.started) {
          void running.then(({ outcome, io }) => {
            const done = settle(outcome, io, params.abortSignal);
            return streamParts(done.outcome, done.last, done.usage, live.so);
          }).then((parts) => live.finish(parts), (error: unknown) => live.finish({ error }));
          return { stream: live.stream, ...live.records };
        }
      }
      const { outcome, io } = await running;
      const done = settle(outcome, io, params.abortSignal);
      const parts = streamParts(done.outcome, done.last, done.usage);
      const result: LanguageModelV4StreamResult = {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
      if (done.last.streamRecords?.request !== undefined) result.request = done.last.streamRecords.request;
      if (done.last.streamRecords?.response !== undefined) result.response = done.last.streamRecords.response;
      return result;
    },
  };
}
