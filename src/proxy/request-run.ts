/**
 * Runs one proxy request through machines/proxy-request.machine.ts. Supplies the `infer`
 * service (the backend client, the caller's pass-through fields, the request's AbortSignal)
 * and turns the final state into a ProxyOutcome. A streaming caller gets text through `onDelta`
 * as releaseMode says: unguarded text live, guarded prose as the streaming judge releases it
 * (the machine still judges the whole answer), or nothing before the whole answer is judged.
 */
import type { Context } from "@opentelemetry/api";
import type { ProxyInferInput } from "../../machines/proxy-request.machine.js";
import { StreamError } from "../core/errors.js";
import type { LLMClient, LLMResponse, RequestOverrides } from "../core/llm.js";
import { serializeMessages } from "../core/wire-messages.js";
import { assertLLMResponse, clientName } from "../core/response-contract.js";
import type { BackendPool } from "./fleet/backend-pool.js";
import type { BackendWindows } from "./backend-windows.js";
import { withNumCtx } from "../proxy-request/context-window.js";
import type { ProxyInput } from "../proxy-request/request-context.js";
import { releaseMode, toolsGuarded, type ProxyOutcome } from "../proxy-request/proxy-request.js";
import type { RequestTelemetry } from "./request-telemetry.js";
import { requestDriver } from "../request-driver.js";
import { LiveRelease, NOTHING_SENT, type DeltaChannel, type SentText } from "../proxy-request/live-release.js";

export interface RunRequestOptions {
  input: ProxyInput;
  /** Aborted when the caller disconnects or the proxy shuts down; its reason names which. */
  signal: AbortSignal;
  /** Text for a streaming caller, as soon as it may go out (releaseMode). */
  onDelta?: ((channel: DeltaChannel, text: string) => void) | undefined;
  /** The caller's own backend credential (`forwardAuth`); kept out of the machine's JSON context. */
  apiKey?: string | undefined;
  /** The request's spans and counts: each attempt is traced, each guardrail event reported. */
  telemetry?: RequestTelemetry | undefined;
}

export interface RunResult {
  outcome: ProxyOutcome;
  /** Time spent waiting on the backend, to tell the proxy's own latency apart. */
  backendMs: number;
  /** What of the answering attempt's text already went out through onDelta. */
  sent: SentText;
}

/** What the infer service needs of one request beyond its JSON input. */
interface RequestIo {
  /** The caller's model name ("" for none): what the pool routes by. */
  model: string;
  overrides: RequestOverrides;
  guarded: boolean;
  /** Deltas go out: live, or through the streaming judge (guarded) — undefined when the answer is judged whole first. */
  stream: { judged: boolean; onDelta: (channel: DeltaChannel, text: string) => void } | undefined;
  /** The latest attempt's live text; a retry's attempt starts afresh (earlier prose stays with the caller). */
  sent: SentText;
  backendMs: number;
  telemetry: RequestTelemetry | undefined;
}

function overridesOf(ctx: ProxyInput, forwardModel: boolean, guarded: boolean, apiKey: string | undefined): RequestOverrides {
  const { request } = ctx;
  const overrides: RequestOverrides = { body: request.body };
  if (apiKey !== undefined) overrides.apiKey = apiKey;
  if (forwardModel && request.model !== "") overrides.model = request.model;
  if (guarded && request.toolChoice !== undefined) overrides.toolChoice = request.toolChoice;
  return overrides;
}

/**
 * One runner per proxy, on the shared request driver (src/request-driver.ts). Each inference
 * is first judged against the windows of the backends serving its model (a prompt none can
 * take is the caller's 400; Ollama gets a num_ctx that fits), then goes through
 * the pool: it picks a backend the prompt fits (waiting for a slot if need be) and fails over to
 * the next while nothing has reached the caller.
 *
 * @example
 * const run = createRequestRunner(pool, { forwardModel: true, windows: new BackendWindows() });
 * const { outcome } = await run({ input, signal: AbortSignal.timeout(60_000) });
 */
export function createRequestRunner(pool: BackendPool, options: { forwardModel: boolean; windows: BackendWindows }): (o: RunRequestOptions) => Promise<RunResult> {
  const { windows } = options;
  const drive = requestDriver<RequestIo>(async (input, io, signal) => {
    // tool_choice "none": the backend gets no tools (Ollama and prompt-mode servers have no
    // way to forbid calls otherwise).
    const tools = io.guarded ? input.tools : undefined;
    const started = performance.now();
    try {
      // A prompt that fits no backend's window is the caller's 400, before any backend is asked.
      const { overrides } = io;
      const admission = await windows.admit(
        pool.backendsFor(io.model),
        { model: overrides.model, messages: input.messages, tools: tools ?? [], body: overrides.body ?? {}, apiKey: overrides.apiKey },
        signal,
      );
      return await pool.run(io.model, signal, async ({ backend, commit }) => {
        const { client } = backend;
        const wire = serializeMessages(input.messages, client.apiFormat);
        // A fleet backend gets its own model name (and credential, unless the caller's is forwarded).
        const request: RequestOverrides = { ...overrides };
        if (backend.model !== undefined) request.model = backend.model;
        if (backend.apiKey !== undefined && request.apiKey === undefined) request.apiKey = backend.apiKey;
        const numCtx = admission.numCtx(backend);
        if (numCtx !== undefined) request.body = withNumCtx(request.body, numCtx);
        const attempt = io.telemetry?.attempt(backend.name, client, backend.model ?? request.model, input.attempt + 1);
        // The attempt's span goes to the backend as `traceparent` (nothing without a propagator).
        const traceContext = attempt?.context;
        try {
          const stream = io.stream;
          let response: LLMResponse;
          if (stream !== undefined && client.sendStream !== undefined) {
            // A delta that goes out commits the request to this backend (no failover after it).
            const release = new LiveRelease(stream.judged ? input.tools.map((t) => t.name) : undefined, (channel, text) => (commit(), stream.onDelta(channel, text)));
            io.sent = release.sent;
            response = await streamAnswer(client, wire, tools, { signal, request, traceContext }, release);
          } else {
            io.sent = NOTHING_SENT;
            response = await client.send(wire, tools, { signal, request, traceContext });
          }
          // A client that breaks the LLMResponse contract fails the request (502) with its name, not a TypeError.
          const checked = assertLLMResponse(response, clientName(client));
          attempt?.end(checked);
          return checked;
        } catch (error) {
          attempt?.fail(error);
          throw error;
        }
      }, { skip: admission.skip });
    } finally {
      // Includes any wait for a free backend slot: time the proxy itself did not spend.
      io.backendMs += performance.now() - started;
    }
  });

  return async function runProxyRequest(o: RunRequestOptions): Promise<RunResult> {
    const { request } = o.input;
    const guarded = toolsGuarded(request);
    const mode = releaseMode(request, o.input.options.injectRespondTool);
    const io: RequestIo = {
      model: request.model,
      overrides: overridesOf(o.input, options.forwardModel, guarded, o.apiKey),
      guarded,
      stream: o.onDelta === undefined || mode === "whole" ? undefined : { judged: mode === "judged", onDelta: o.onDelta },
      sent: NOTHING_SENT,
      backendMs: 0,
      telemetry: o.telemetry,
    };
    if (o.signal.aborted) return { outcome: { kind: "cancelled", reason: String(o.signal.reason) }, backendMs: 0, sent: NOTHING_SENT };
    const telemetry = o.telemetry;
    const outcome = await drive(o.input, io, { signal: o.signal, onGuardrail: telemetry && ((event) => telemetry.guardrail(event)) });
    return { outcome, backendMs: io.backendMs, sent: io.sent };
  };
}

/** One streamed attempt: deltas go through `release`; the client's final answer is the attempt's answer. */
async function streamAnswer(
  client: LLMClient,
  wire: ReturnType<typeof serializeMessages>,
  tools: ProxyInferInput["tools"] | undefined,
  options: { signal: AbortSignal; request: RequestOverrides; traceContext: Context | undefined },
  release: LiveRelease,
): Promise<LLMResponse> {
  for await (const chunk of client.sendStream!(wire, tools, options)) {
    if (chunk.type === "text_delta" && chunk.content !== "") release.delta(chunk.channel ?? "content", chunk.content);
    // The client re-requests after a malformed stream: fine while nothing reached the caller.
    else if (chunk.type === "retry") release.restart(chunk.reason);
    else if (chunk.type === "final") return chunk.response;
  }
  throw new StreamError("Backend stream ended without a final answer");
}
