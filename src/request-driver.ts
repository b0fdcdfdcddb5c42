/**
 * The one driver of machines/proxy-request.machine.ts: the proxy (every dialect) and the AI SDK
 * middleware run each request through it, and differ only in their `infer` service.
 *
 * The machine gets its service once per driver (building a machine per request would cost more
 * than the rest of the request); what one request needs beyond the machine's JSON input (a
 * client, live deltas, the caller's model) is registered under its request id for the run.
 */
import { createActor, fromPromise } from "xstate";
import { proxyRequestMachine, type ProxyInferInput } from "../machines/proxy-request.machine.js";
import { InvalidArgumentError } from "./core/errors.js";
import type { LLMResponse } from "./core/llm.js";
import type { ProxyGuardrailEvent } from "./proxy-request/guardrail-events.js";
import type { ProxyOutcome } from "./proxy-request/proxy-request.js";
import type { ProxyInput } from "./proxy-request/request-context.js";
import { outcomeOf } from "./proxy-request/request-outcome.js";

/** One attempt at the model: the machine's input, the request's own I/O, the run's signal. */
export type RequestInfer<Io> = (input: ProxyInferInput, io: Io, signal: AbortSignal) => Promise<LLMResponse>;

export interface DriveOptions {
  /** Cancels the run (the outcome is `cancelled`, with the signal's reason). */
  signal?: AbortSignal | undefined;
  /** Each guardrail intervention the machine emits (rescue, nudge, spent budget). */
  onGuardrail?: ((event: ProxyGuardrailEvent) => void) | undefined;
}

/**
 * @example
 * const drive = requestDriver<Io>((input, io, signal) => io.client.send(input.messages, input.tools, { signal }));
 * const outcome = await drive(input, { client }, { signal: AbortSignal.timeout(60_000) });
 */
export function requestDriver<Io>(infer: RequestInfer<Io>): (input: ProxyInput, io: Io, options?: DriveOptions) => Promise<ProxyOutcome> {
  const inFlight = new Map<string, Io>();
  const machine = proxyRequestMachine.provide({
    actors: {
      infer: fromPromise<LLMResponse, ProxyInferInput>(({ input, signal }) => {
        const io = inFlight.get(input.requestId);
        if (io === undefined) throw new Error(`proxy request ${input.requestId} has no I/O registered`);
        return infer(input, io, signal);
      }),
    },
  });

  return async function drive(input, io, options = {}) {
    const { signal, onGuardrail } = options;
    if (inFlight.has(input.requestId)) throw new InvalidArgumentError("requestId", `proxy request ${input.requestId} is already running`);
    inFlight.set(input.requestId, io);
    const actor = createActor(machine, { input });
    if (onGuardrail) actor.on("*", onGuardrail);
    const finished = new Promise<void>((resolve, reject) => actor.subscribe({ complete: resolve, error: reject }));
    const cancel = () => actor.send({ type: "request.cancel", reason: String(signal?.reason ?? "cancelled") });
    signal?.addEventListener("abort", cancel, { once: true });
    try {
      actor.start();
      await finished;
    } finally {
      signal?.removeEventListener("abort", cancel);
      inFlight.delete(input.requestId);
    }
    const snapshot = actor.getSnapshot();
    return outcomeOf(String(snapshot.value), snapshot.context);
  };
}
