/**
 * `visualizerInspector(url)`: an XState inspection observer that streams a process's workflow
 * runs to a `forge-ts visualize` server. Pass it as `WorkflowRunner({ inspect })`.
 *
 * Inspection callbacks run inside XState transitions, so `next()` only converts the event and
 * queues it; batches go out in order, one POST at a time, every `intervalMs`. A visualizer
 * that is down or refuses a batch never fails the run: the batch is counted as dropped and the
 * failure reported to `onError` (by default one warning per outage on stderr).
 *
 * A visualizer bound beyond loopback prints its URL with `#token=…`: given such a URL, the
 * inspector sends the token (`Authorization: Bearer`); the fragment never goes on the wire.
 */
import type { InspectionEvent, Observer } from "xstate";
import { request } from "undici";
import { describeError, InvalidArgumentError } from "../src/core/errors.js";
import type { StreamChunk } from "../src/core/llm.js";
import type { WireEvent } from "./protocol.js";
import { wireSerializer } from "./wire.js";

export const DEFAULT_VISUALIZER_URL = "http://127.0.0.1:4848";

export interface VisualizerInspectorOptions {
  /** How often queued events are sent (default 25 ms). */
  intervalMs?: number;
  /** Events per POST at most (default 500). */
  batchSize?: number;
  /** Events held while the visualizer is slow or away; the oldest go first beyond it (default 20,000). */
  maxQueued?: number;
  /** A failed delivery (default: a warning on stderr, once until a delivery succeeds again). */
  onError?: (error: VisualizerDeliveryError) => void;
}

export class VisualizerDeliveryError extends Error {
  override readonly name = "VisualizerDeliveryError";
  constructor(
    readonly url: string,
    /** Events lost with this failure. */
    readonly dropped: number,
    override readonly cause: unknown,
  ) {
    super(`visualizer at ${url} did not take ${dropped} inspection event(s): ${describeError(cause)}`);
  }
}

export interface VisualizerInspector extends Observer<InspectionEvent> {
  next(event: InspectionEvent): void;
  /** A streamed chunk of run `runId` (the runner forwards its onChunk chunks here). */
  chunk(runId: string, chunk: StreamChunk): void;
  /** Resolves once everything queued so far was delivered (or dropped). */
  flush(): Promise<void>;
  /** Flush, then stop the timer. */
  close(): Promise<void>;
  readonly stats: { sent: number; dropped: number; queued: number };
}

/**
 * @example
 * const runner = new WorkflowRunner({ client, contextManager, inspect: visualizerInspector() });
 */
export function visualizerInspector(url: string = DEFAULT_VISUALIZER_URL, options: VisualizerInspectorOptions = {}): VisualizerInspector {
  const endpoint = apiUrl(url, "/api/ingest");
  const headers = { "content-type": "application/json", ...authHeader(url) };
  // Errors name the visualizer, never its token.
  const shown = withoutToken(url);
  const intervalMs = options.intervalMs ?? 25;
  const batchSize = options.batchSize ?? 500;
  const maxQueued = options.maxQueued ?? 20_000;
  let warned = false;
  const onError =
    options.onError ??
    ((error: VisualizerDeliveryError) => {
      if (warned) return;
      warned = true;
      process.emitWarning(`${error.message} (further failures are not reported until a delivery succeeds)`, "VisualizerDeliveryWarning");
    });

  const serialize = wireSerializer();
  const queue: WireEvent[] = [];
  const stats = { sent: 0, dropped: 0, get queued() { return queue.length; } };
  let sending: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const enqueue = (events: readonly WireEvent[]) => {
    if (events.length === 0) return;
    queue.push(...events);
    if (queue.length > maxQueued) {
      const lost = queue.splice(0, queue.length - maxQueued).length;
      stats.dropped += lost;
      onError(new VisualizerDeliveryError(shown, lost, new Error(`more than ${maxQueued} events queued (the visualizer is slower than the run)`)));
    }
    // unref: a pending delivery never keeps a finished process alive (flush() when it must arrive).
    timer ??= setTimeout(() => {
      timer = undefined;
      void pump();
    }, intervalMs).unref();
  };

  // One POST at a time keeps the events in order.
  const pump = (): Promise<void> => {
    if (sending) return sending;
    if (queue.length === 0) return Promise.resolve();
    sending = deliver().finally(() => (sending = undefined));
    return sending;
  };
  const deliver = async () => {
    while (queue.length > 0) {
      const batch = queue.splice(0, batchSize);
      try {
        const response = await request(endpoint, {
          method: "POST",
          headers,
          body: JSON.stringify({ events: batch }),
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
        const text = await response.body.text();
        if (response.statusCode !== 204 && response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
        stats.sent += batch.length;
        warned = false;
      } catch (error) {
        stats.dropped += batch.length;
        onError(new VisualizerDeliveryError(shown, batch.length, error));
      }
    }
  };

  const flush = async () => {
    if (timer) clearTimeout(timer), (timer = undefined);
    while (queue.length > 0 || sending) await pump();
  };
  return {
    next: (event) => enqueue(serialize(event)),
    chunk: (runId, chunk) => {
      const event = serialize.chunk(runId, chunk);
      if (event) enqueue([event]);
    },
    flush,
    close: flush,
    stats,
  };
}

/**
 * A visualizerInspector once the visualizer answers at `url`; a VisualizerDeliveryError naming
 * the URL otherwise (commands check first: a run streamed to nobody would show nothing).
 *
 * @example
 * const inspect = await connectVisualizer("http://127.0.0.1:4848");
 * const runner = new WorkflowRunner({ client, contextManager, inspect });
 */
export async function connectVisualizer(url: string = DEFAULT_VISUALIZER_URL, options: VisualizerInspectorOptions = {}): Promise<VisualizerInspector> {
  const inspector = visualizerInspector(url, options);
  try {
    const response = await request(apiUrl(url, "/api/info"), { headers: authHeader(url), headersTimeout: 3_000, bodyTimeout: 3_000 });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}`);
  } catch (error) {
    const problem = new VisualizerDeliveryError(withoutToken(url), 0, error);
    problem.message = `no visualizer answers at ${withoutToken(url)} (${describeError(error)}): start it first with "forge-ts visualize" (in a checkout: npm run visualize)`;
    throw problem;
  }
  return inspector;
}

function apiUrl(url: string, path: string): URL {
  let endpoint: URL;
  try {
    endpoint = new URL(path, url);
  } catch {
    throw new InvalidArgumentError("url", `expected the visualizer's http URL (e.g. ${DEFAULT_VISUALIZER_URL}), got ${JSON.stringify(url)}`);
  }
  if (endpoint.protocol !== "http:" && endpoint.protocol !== "https:") throw new InvalidArgumentError("url", `expected http(s), got ${endpoint.protocol}`);
  return endpoint;
}

const withoutToken = (url: string) => url.replace(/#.*$/, "");

/** The token of a `…/#token=…` URL as a header (none for a plain URL). */
function authHeader(url: string): Record<string, string> {
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
  return token ? { authorization: `Bearer ${token}` } : {};
}
