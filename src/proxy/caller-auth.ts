/**
 * Caller authentication: when the proxy has an API key, every request but /health must carry
 * it as `Authorization: Bearer <key>` (OpenAI SDKs) or `x-api-key: <key>` (Anthropic SDKs).
 * Compared in constant time over fixed-length digests, so neither content nor length leaks.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "../proxy-request/http-error.js";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** The credential a request presents, if any. */
export function presentedKey(authorization: string | undefined, xApiKey: string | undefined): string | undefined {
  if (xApiKey !== undefined) return xApiKey;
  const match = authorization === undefined ? null : /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return match ? match[1] : undefined;
}

/**
 * @example
 * app.use("*", callerAuth(process.env.FORGE_PROXY_KEY!));
 */
export function callerAuth(apiKey: string): MiddlewareHandler {
  const expected = digest(apiKey);
  return async function requireApiKey(c, next) {
    const key = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
    if (key === undefined || !timingSafeEqual(digest(key), expected)) {
      // Rendered in the caller's dialect by the app's error handler.
      throw new HttpError(401, "authentication_error", key === undefined ? "Missing API key (Authorization: Bearer … or x-api-key)" : "Invalid API key");
    }
    await next();
  };
}
