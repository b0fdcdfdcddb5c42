/**
 * The proxy's one HTTP error: a status, the API's error type and a message for the caller.
 * It renders itself in the caller's dialect — OpenAI `{ error: { type, message, param, code } }`
 * (chat completions and Responses alike), Anthropic `{ type: "error", error: { type, message } }`
 * or Ollama `{ error: "message" }` (its clients read `error` as a string) — and never carries a
 * stack trace. Errors clients act on by their exact words or code (a
 * prompt over the context window) carry OpenAI's `code`/`param` and each dialect's own wording
 * in `details`.
 */
import { ForgeError } from "../core/errors.js";
import { redactText } from "../core/redact.js";

/** The proxy's front doors: /v1/chat/completions, /v1/messages, /v1/responses, /api/chat (Ollama). */
export type Dialect = "openai" | "anthropic" | "responses" | "ollama";

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "api_error"
  | "rate_limit_error"
  | "timeout_error";

/** What an error says beyond status, type and message; plain JSON (it crosses the request machine). */
export interface HttpErrorDetails {
  /** OpenAI's `error.code`, e.g. "context_length_exceeded". */
  code?: string;
  /** OpenAI's `error.param`, e.g. "messages". */
  param?: string;
  /** A dialect whose API words this error its own way (its message, its param). */
  dialects?: Partial<Record<Dialect, { message?: string; param?: string }>>;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    /** Sent with the rendered response (e.g. `retry-after` on a 429). */
    readonly headers: Record<string, string> = {},
    readonly details: HttpErrorDetails = {},
  ) {
    super(redactText(message));
    this.name = "HttpError";
  }

  /** The error body in the caller's dialect (Chat Completions and Responses share OpenAI's shape). */
  body(dialect: Dialect): Record<string, unknown> {
    const own = this.details.dialects?.[dialect];
    const message = own?.message ?? this.message;
    if (dialect === "anthropic") return { type: "error", error: { type: this.type, message } };
    if (dialect === "ollama") return { error: message };
    return { error: { type: this.type, message, param: own?.param ?? this.details.param ?? null, code: this.details.code ?? null } };
  }

  render(dialect: Dialect, headers: Record<string, string> = {}): Response {
    return Response.json(this.body(dialect), { status: this.status, headers: { ...this.headers, ...headers } });
  }
}

/** Backend statuses that describe the caller's request (context too long, unknown model...). */
const CALLER_STATUSES = new Set([400, 404, 413, 422, 429]);

/** A failure as the request machine's context keeps it (plain JSON); an HttpError keeps its type and details. */
export interface ErrorRecord {
  name: string;
  message: string;
  statusCode?: number;
  retryAfterMs?: number;
  type?: ErrorType;
  details?: HttpErrorDetails;
}

/**
 * What a failure behind the proxy means to the caller: an unreachable or broken backend is a
 * 502, a backend that stopped answering a 504, a request the backend refused keeps its status.
 *
 * @example
 * toHttpError(new BackendError(0, "", "connection refused")).status; // 502
 */
export function toHttpError(error: ErrorRecord): HttpError {
  const status = error.statusCode;
  if (status === 429 && error.retryAfterMs !== undefined) {
    // The proxy's own backends are all busy (BackendBusyError): say when to come back.
    return new HttpError(429, "rate_limit_error", error.message, { "retry-after": String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))) });
  }
  if (error.name === "HttpError" && status !== undefined) {
    return new HttpError(status, error.type ?? (status >= 500 ? "api_error" : "invalid_request_error"), error.message, {}, error.details ?? {});
  }
  if (status === 408) return new HttpError(504, "timeout_error", `Backend did not answer in time: ${error.message}`);
  if (status !== undefined && CALLER_STATUSES.has(status)) {
    return new HttpError(status, status === 404 ? "not_found_error" : status === 413 ? "request_too_large" : "invalid_request_error", `Backend refused the request: ${error.message}`);
  }
  if (status === 0) return new HttpError(502, "api_error", `Backend unreachable: ${error.message}`);
  if (error.name === "StreamError") return new HttpError(502, "api_error", `Backend stream broke: ${error.message}`);
  return new HttpError(502, "api_error", `Backend failed: ${error.message}`);
}

/**
 * A thrown value as the JSON-safe record the machine context keeps.
 *
 * @example
 * toHttpError(errorRecord(httpError)).body("openai"); // the same body httpError renders
 */
export function errorRecord(error: unknown): ErrorRecord {
  if (error instanceof HttpError) {
    const record: ErrorRecord = { name: error.name, message: error.message, statusCode: error.status, type: error.type };
    if (Object.keys(error.details).length > 0) record.details = structuredClone(error.details);
    return record;
  }
  if (error instanceof Error) {
    const { statusCode, retryAfterMs } = error as { statusCode?: unknown; retryAfterMs?: unknown };
    // BackendError carries the backend's status (0 unreachable, 408 stalled); BackendBusyError a 429 and when to retry.
    if (!ForgeError.isInstance(error) || typeof statusCode !== "number") return { name: error.name, message: error.message };
    return typeof retryAfterMs === "number" ? { name: error.name, message: error.message, statusCode, retryAfterMs } : { name: error.name, message: error.message, statusCode };
  }
  return { name: "Error", message: safeString(error) };
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "(unprintable error value)";
  }
}
