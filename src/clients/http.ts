/**
 * The one place backend clients touch the network: an undici request with forge-ts error
 * mapping, plus the small option checks and logger every client shares.
 *
 * Mapping (what the loop sees):
 * - non-2xx answer            → BackendError(status, body text)
 * - headers/body idle timeout → BackendError(408, ...)  (bodyTimeout is the gap between chunks)
 * - no HTTP answer (refused, reset, closed mid-body) → BackendError(0, ...) with the cause
 * - an aborted signal         → the abort reason, untouched (a DOMException "AbortError" by default)
 */
import { propagation, type Context } from "@opentelemetry/api";
import { request, type Dispatcher } from "undici";
import { BackendError, ForgeError, InvalidArgumentError } from "../core/errors.js";

export type ClientLogLevel = "info" | "warn";
export type ClientLogger = (level: ClientLogLevel, message: string) => void;

/** Logged decisions (auto-mode fallback, think fallback) go to stderr unless a logger is given. */
export const defaultLogger: ClientLogger = (level, message) => {
  console.error(`[forge-ts] ${level}: ${message}`);
};

/** The `{ info, warn }` logger shape of src/server, backed by a client logger. */
export function asForgeLogger(logger: ClientLogger): { info(message: string): void; warn(message: string): void } {
  return { info: (m) => logger("info", m), warn: (m) => logger("warn", m) };
}

export interface HttpCallOptions {
  method?: "GET" | "POST";
  /** Serialized as JSON when given. */
  json?: unknown;
  headers?: Record<string, string>;
  /** Applied both as headersTimeout and bodyTimeout (idle gap between chunks). */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Sent as trace headers (`traceparent`, ...) by the registered OpenTelemetry propagator. */
  traceContext?: Context | undefined;
}

export interface HttpResponse {
  statusCode: number;
  /** The body as an async iterable of chunks; errors while reading are already mapped. */
  body: AsyncIterable<Uint8Array>;
  /** Read the rest of the body as text (mapped errors). */
  text(): Promise<string>;
  /** Release the connection without reading the rest. */
  discard(): void;
}

/** Longest a consumer that stopped early waits for the rest of a body before it is cut. */
const REST_WAIT_MS = 100;
/** Most of a body read after the consumer stopped; more means the backend is still generating. */
const REST_LIMIT = 64 * 1024;

/**
 * A consumer stopped before the body's end (break, FINAL seen, a throw). After an answer's last
 * event the rest is a few bytes already on their way: read it, which keeps the connection for the
 * next request. A backend still generating is cut (past the limit or the wait), as is every body
 * once the request is aborted.
 */
function releaseEarly(stream: Dispatcher.ResponseData["body"], signal: AbortSignal | undefined): void {
  if (stream.destroyed || stream.readableEnded) return;
  if (signal?.aborted) return void stream.destroy();
  // The dump settles when the body closes, cut or not; either way nothing is left to do.
  stream.dump({ limit: REST_LIMIT, signal: AbortSignal.timeout(REST_WAIT_MS) }).catch(() => undefined);
}

/**
 * Send one request; resolve once the headers are in with a 2xx status. Any other status
 * rejects with BackendError carrying the body text.
 *
 * @example
 * const res = await httpCall("http://127.0.0.1:11434/api/chat", { method: "POST", json: body, timeoutMs: 300_000 });
 * const data = JSON.parse(await res.text());
 */
export async function httpCall(url: string, options: HttpCallOptions): Promise<HttpResponse> {
  const { signal } = options;
  signal?.throwIfAborted();
  const headers: Record<string, string> = { accept: "application/json, text/event-stream, application/x-ndjson" };
  if (options.json !== undefined) headers["content-type"] = "application/json";
  Object.assign(headers, options.headers);
  if (options.traceContext) propagation.inject(options.traceContext, headers);
  let raw: Awaited<ReturnType<typeof request>>;
  try {
    raw = await request(url, {
      method: options.method ?? (options.json === undefined ? "GET" : "POST"),
      headers,
      body: options.json === undefined ? null : JSON.stringify(options.json),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      signal: signal ?? null,
    });
  } catch (error) {
    throw mapTransportError(error, url, signal);
  }
  const stream = raw.body;
  const body: AsyncIterable<Uint8Array> = {
    async *[Symbol.asyncIterator]() {
      let read = false;
      try {
        // Not destroyed on return: a consumer stops at the answer's last event ([DONE], a done
        // line) just before the body's end, and a body destroyed before its end makes undici
        // build an abort error, stack and all, for every request.
        for await (const chunk of stream.iterator({ destroyOnReturn: false })) yield chunk as Uint8Array;
        read = true;
      } catch (error) {
        read = true; // the iterator destroyed the body
        throw mapTransportError(error, url, signal);
      } finally {
        if (!read) releaseEarly(stream, signal);
      }
    },
  };
  const text = async (): Promise<string> => {
    const decoder = new TextDecoder();
    let out = "";
    for await (const chunk of body) out += decoder.decode(chunk, { stream: true });
    return out + decoder.decode();
  };
  const response: HttpResponse = { statusCode: raw.statusCode, body, text, discard: () => stream.destroy() };
  if (raw.statusCode < 200 || raw.statusCode >= 300) {
    throw new BackendError(raw.statusCode, await text());
  }
  return response;
}

/** POST JSON and parse a JSON answer; an unparsable 2xx body is a BackendError too. */
export async function postJson(
  url: string,
  json: unknown,
  options: Omit<HttpCallOptions, "json" | "method">,
): Promise<unknown> {
  const res = await httpCall(url, { ...options, method: "POST", json });
  return parseJsonBody(await res.text(), res.statusCode);
}

/** Parse a 2xx body as JSON or fail loud with the body attached. */
export function parseJsonBody(text: string, statusCode: number): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new BackendError(statusCode, text, `Backend answered HTTP ${statusCode} with a body that is not JSON`, { cause });
  }
}

/** Translate an undici/socket failure; aborts pass through unchanged. */
export function mapTransportError(error: unknown, url: string, signal?: AbortSignal): unknown {
  if (signal?.aborted) {
    return isAbortError(error) ? error : signal.reason;
  }
  if (isAbortError(error)) return error;
  if (isBackendError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
    return new BackendError(408, "", `Backend read timeout (${String(code)}) for ${url}: ${message}`, { cause: error });
  }
  return new BackendError(0, "", `No usable HTTP answer from ${url}: ${message}`, { cause: error });
}

/** BackendError (or a subclass) from any copy of forge-ts; `BackendError.isInstance` only narrows to ForgeError. */
export function isBackendError(error: unknown): error is BackendError {
  return ForgeError.isInstance(error) && typeof (error as { statusCode?: unknown }).statusCode === "number";
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/** Join a base URL and a path without doubling or dropping slashes. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

// ── Option checks (constructors validate up front, naming the field) ──────────────────

export function requireOptionsObject(options: unknown, client: string): Record<string, unknown> {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError("options", `${client} takes one options object`);
  }
  return options as Record<string, unknown>;
}

export function checkString(value: unknown, field: string, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string" || value.length === 0) throw new InvalidArgumentError(field, "must be a non-empty string");
  return value;
}

export function checkUrl(value: unknown, field: string): string {
  const url = checkString(value, field, true)!;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError(field, `"${url}" is not an absolute URL (e.g. http://127.0.0.1:8080)`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new InvalidArgumentError(field, `protocol must be http or https, got ${parsed.protocol}`);
  }
  return url.replace(/\/+$/, "");
}

export function checkNumber(value: unknown, field: string, min: number, max = Number.POSITIVE_INFINITY): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new InvalidArgumentError(field, `must be a finite number in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
  return value;
}

export function checkPositiveInt(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw new InvalidArgumentError(field, `must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function checkBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") throw new InvalidArgumentError(field, `must be a boolean, got ${JSON.stringify(value)}`);
  return value;
}

export function checkRecord(value: unknown, field: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(field, "must be a plain object");
  }
  return value as Record<string, unknown>;
}

export function checkLogger(value: unknown): ClientLogger {
  if (value === undefined) return defaultLogger;
  if (typeof value !== "function") throw new InvalidArgumentError("logger", "must be a function (level, message) => void");
  return value as ClientLogger;
}
