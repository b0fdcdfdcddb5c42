/**
 * Runs one proxy request through machines/proxy-request.machine.ts. Supplies the `infer`
 * service (the backend client, the caller's pass-through fields, the request's AbortSignal)
 * and turns the final state into a ProxyOutcome. Unguarded streaming requests get their text
 * live through `onDelta`; guarded ones are judged whole before anything is sent.
 */
import { createActor, fromPromise } from "xstate";
import { proxyRequestMachine, type ProxyInferInput } from "../../machines/proxy-request.machine.js";
import { StreamError } from "../core/errors.js";
import type { LLMClient, LLMResponse, RequestOverrides } from "../core/llm.js";
import { serializeMessages } from "../core/messages.js";
import type { ProxyContext, ProxyInput } from "./request-context.js";
import type { ProxyOutcome } from "./proxy-request.js";

export interface RunRequestOptions {
  client: LLMClient;
  input: ProxyInput;
  /** Aborted when the caller disconnects or the proxy shuts down; its reason names which. */
  signal: AbortSignal;
  /** Use the caller's model name for the backend (else the client's configured model). */
  forwardModel: boolean;
  /** Live text for unguarded streaming requests. */
  onDelta?: ((channel: "content" | "reasoning", text: string) => void) | undefined;
}

export interface RunResult {
  outcome: ProxyOutcome;
  /** Time spent waiting on the backend, to tell the proxy's own latency apart. */
  backendMs: number;
}

function overridesOf(ctx: ProxyInput, forwardModel: boolean, guarded: boolean): RequestOverrides {
  const { request } = ctx;
  const overrides: RequestOverrides = { body: request.body };
  if (forwardModel && request.model !== "") overrides.model = request.model;
  if (guarded && request.toolChoice !== undefined) overrides.toolChoice = request.toolChoice;
  return overrides;
}

/**
 * @example
 * const { outcome } = await runProxyRequest({ client, input, signal: AbortSignal.timeout(60_000), forwardModel: true });
 */
export async function runProxyRequest(o: RunRequestOptions): Promise<RunResult> {
  let backendMs = 0;
  const guarded = o.input.request.tools.length > 0 && o.input.request.toolChoice !== "none";
  const overrides = overridesOf(o.input, o.forwardModel, guarded);
  const live = o.onDelta !== undefined && !guarded && o.client.sendStream !== undefined;

  const infer = fromPromise<LLMResponse, ProxyInferInput>(async ({ input, signal }) => {
    const wire = serializeMessages(input.messages, o.client.apiFormat);
    // tool_choice "none": the backend gets no tools (Ollama and prompt-mode servers have no
    // way to forbid calls otherwise).
    const tools = guarded ? input.tools : undefined;
    const started = performance.now();
    try {
      if (!live) return await o.client.send(wire, tools, { signal, request: overrides });
      return await streamLive(o.client, wire, tools, { signal, request: overrides }, o.onDelta!);
    } finally {
      backendMs += performance.now() - started;
    }
  });

  const actor = createActor(proxyRequestMachine.provide({ actors: { infer } }), { input: o.input });
  const cancel = () => actor.send({ type: "request.cancel", reason: String(o.signal.reason ?? "cancelled") });
  const finished = new Promise<void>((resolve, reject) => {
    actor.subscribe({ complete: resolve, error: reject });
  });
  if (o.signal.aborted) return { outcome: { kind: "cancelled", reason: String(o.signal.reason) }, backendMs };
  o.signal.addEventListener("abort", cancel, { once: true });
  try {
    actor.start();
    await finished;
  } finally {
    o.signal.removeEventListener("abort", cancel);
  }
  const snapshot = actor.getSnapshot();
  return { outcome: outcomeOf(String(snapshot.value), snapshot.context), backendMs };
}

async function streamLive(
  client: LLMClient,
  wire: ReturnType<typeof serializeMessages>,
  tools: ProxyInferInput["tools"] | undefined,
  options: { signal: AbortSignal; request: RequestOverrides },
  onDelta: (channel: "content" | "reasoning", text: string) => void,
): Promise<LLMResponse> {
  let sent = false;
  for await (const chunk of client.sendStream!(wire, tools, options)) {
    if (chunk.type === "text_delta" && chunk.content !== "") {
      sent = true;
      onDelta(chunk.channel ?? "content", chunk.content);
    } else if (chunk.type === "retry" && sent) {
      // The client would re-request after a malformed stream, but text already reached the caller.
      throw new StreamError(`Backend stream broke after part of the answer was sent (${chunk.reason}); it cannot be taken back`);
    } else if (chunk.type === "final") {
      return chunk.response;
    }
  }
  throw new StreamError("Backend stream ended without a final answer");
}

function outcomeOf(state: string, ctx: ProxyContext & { cancelReason?: string }): ProxyOutcome {
  switch (state) {
    case "responding":
    case "exhausted": {
      const outcome: ProxyOutcome = { kind: "answer", answer: ctx.answer!, usage: ctx.usage, attempts: ctx.attempts, rescued: ctx.rescued };
      if (ctx.exhausted) outcome.exhausted = ctx.exhausted;
      return outcome;
    }
    case "failed":
      return { kind: "failed", error: ctx.error!, attempts: ctx.attempts };
    case "cancelled":
      return { kind: "cancelled", reason: ctx.cancelReason ?? "cancelled" };
    default:
      throw new Error(`proxy-request machine stopped in a non-final state "${state}"`);
  }
}
