/**
 * Errors from backends and their setup: budget and hardware discovery, HTTP and streams, model
 * contracts, servers, the proxy fleet.
 */
import { redactText } from "../redact.js";
import { ForgeError } from "./forge-error.js";

export class BudgetResolutionError extends ForgeError {
  override readonly code = "FORGE_BUDGET_RESOLUTION";
  constructor(message = "No context budget could be determined from any source", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** nvidia-smi answered, but its output could not be parsed. */
export class HardwareDetectionError extends ForgeError {
  override readonly code = "FORGE_HARDWARE_DETECTION";
  constructor(
    message: string,
    readonly output: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  override get data() {
    return { output: this.output };
  }
}

/** The backend's context-length answer could not be parsed. */
export class ContextDiscoveryError extends ForgeError {
  override readonly code = "FORGE_CONTEXT_DISCOVERY";
  constructor(
    message: string,
    readonly body: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  override get data() {
    return { body: this.body };
  }
}

/** An unexpected HTTP answer (or read timeout, as 408) from the LLM backend. */
export class BackendError extends ForgeError {
  override readonly code: string = "FORGE_BACKEND";
  /** The backend's answer, redacted (a backend may echo the key it refused). */
  readonly body: string;
  constructor(
    readonly statusCode: number,
    body: string,
    message?: string,
    options?: { cause?: unknown },
  ) {
    super(message ?? `Backend answered HTTP ${statusCode}: ${body.trim() === "" ? "(empty body)" : body.slice(0, 500)}`, options);
    this.body = redactText(body);
  }
  override get data() {
    return { statusCode: this.statusCode, body: this.body };
  }
}

export class ThinkingNotSupportedError extends BackendError {
  override readonly code = "FORGE_THINKING_NOT_SUPPORTED";
  constructor(
    readonly model: string,
    statusCode = 400,
    body = "",
  ) {
    super(statusCode, body, `Model "${model}" does not support thinking, but think=true was requested`);
  }
  override get data() {
    return { model: this.model, statusCode: this.statusCode, body: this.body };
  }
}

/** A stream ended without a FINAL chunk, or stayed malformed after its one re-request. */
export class StreamError extends ForgeError {
  override readonly code = "FORGE_STREAM";
  constructor(message = "Stream ended without FINAL chunk", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** recommendedSampling was asked for a model forge-ts has no card values for. */
export class UnsupportedModelError extends ForgeError {
  override readonly code = "FORGE_UNSUPPORTED_MODEL";
  constructor(readonly model: string) {
    super(`No recommended sampling values are known for model "${model}"; pass sampling options explicitly`);
  }
  override get data() {
    return { model: this.model };
  }
}

/**
 * An LLMClient broke the `LLMResponse` contract (not an object, unknown `type`, missing
 * `content`, `toolCalls` that are not call objects, values that are not JSON). Names the client
 * and shows (a preview of) what it returned.
 */
export class ClientContractError extends ForgeError {
  override readonly code = "FORGE_CLIENT_CONTRACT";
  constructor(
    readonly client: string,
    readonly issues: string[],
    readonly received: string,
  ) {
    super(`${client} broke the LLMResponse contract: ${issues.join("; ")} (received ${received})`);
  }
  override get data() {
    return { client: this.client, issues: this.issues, received: this.received };
  }
}

/**
 * One model call kept failing the request guardrails (unknown tools, invalid arguments, not
 * the requested JSON) until its budget ran out (`forge-ts/ai-sdk`'s `forgeGuardrails`, which
 * throws instead of handing the caller an answer it would have to re-check).
 */
export class GuardrailsExhaustedError extends ForgeError {
  override readonly code = "FORGE_GUARDRAILS_EXHAUSTED";
  constructor(
    readonly reason: "retries" | "tool_errors",
    readonly attempts: number,
    readonly lastError: string,
  ) {
    super(`The model's answer failed the guardrails ${attempts} time(s) (${reason} budget spent); last: ${lastError}`);
  }
  override get data() {
    return { reason: this.reason, attempts: this.attempts, lastError: this.lastError };
  }
}

/** A backend server process could not be started or stopped. */
export class ServerError extends ForgeError {
  override readonly code = "FORGE_SERVER";
  constructor(
    message: string,
    readonly stderrTail: string = "",
    options?: { cause?: unknown },
  ) {
    super(stderrTail ? `${message}\n--- server stderr (tail) ---\n${stderrTail}` : message, options);
  }
  override get data() {
    return { stderrTail: this.stderrTail };
  }
}

/** One problem in a proxy config file, at the line and column (1-based) of the offending JSON value. */
export interface ProxyConfigIssue {
  line: number;
  column: number;
  /** JSON path of the value, e.g. `backends.gpu0.maxConcurrent` ("" for the whole file). */
  path: string;
  message: string;
}

/**
 * The proxy's fleet config file (`forge-ts proxy --config`) is malformed: not JSON, a value of
 * the wrong type, an unknown key, a model naming a backend that is not defined, an alias used
 * twice. Names the file and every problem's line and column; the first problem's position is
 * also on the error itself.
 */
export class ProxyConfigError extends ForgeError {
  override readonly code = "FORGE_PROXY_CONFIG";
  readonly line: number;
  readonly column: number;
  readonly path: string;
  constructor(
    readonly file: string,
    readonly issues: ProxyConfigIssue[],
  ) {
    super(issues.map((i) => `${file}:${i.line}:${i.column}: ${i.path === "" ? "" : `${i.path}: `}${i.message}`).join("\n"));
    const first = issues[0] ?? { line: 1, column: 1, path: "" };
    this.line = first.line;
    this.column = first.column;
    this.path = first.path;
  }
  override get data() {
    return { file: this.file, line: this.line, column: this.column, path: this.path, issues: this.issues };
  }
}

/**
 * Every backend serving the model was at its `maxConcurrent` and the proxy's wait queue was full
 * (`queue_full`) or the request waited `maxWaitMs` without a free slot (`wait_timeout`). The
 * proxy answers 429 with `Retry-After` (seconds, rounded up from `retryAfterMs`).
 */
export class BackendBusyError extends ForgeError {
  override readonly code = "FORGE_BACKEND_BUSY";
  /** The HTTP status callers get, read by the proxy's error mapping like BackendError's. */
  readonly statusCode = 429;
  constructor(
    readonly model: string,
    readonly reason: "queue_full" | "wait_timeout",
    readonly retryAfterMs: number,
  ) {
    super(
      reason === "queue_full"
        ? `Every backend serving "${model}" is busy and the wait queue is full; retry in ${Math.ceil(retryAfterMs / 1000)} s`
        : `Every backend serving "${model}" stayed busy for as long as a request may wait; retry in ${Math.ceil(retryAfterMs / 1000)} s`,
    );
  }
  override get data() {
    return { model: this.model, reason: this.reason, retryAfterMs: this.retryAfterMs };
  }
}
