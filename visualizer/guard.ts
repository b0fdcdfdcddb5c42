/**
 * Who may use the visualizer's API (everything under /api: run contexts, the feeds, ingest,
 * decisions). Without the token, this machine only: the peer is a loopback address and the
 * Host header a loopback name (a DNS-rebinding page on 127.0.0.1 still names its own host).
 * With the token, any peer: `Authorization: Bearer <token>`, or `?token=` from EventSource,
 * which cannot send headers. The page's own files carry no data and stay open, so the URL the
 * server prints (`http://host:port/#token=…`) can load the page, which then sends the token.
 *
 * A browser request from another origin is refused either way: a page elsewhere may not read
 * runs or post decisions through a visitor's browser (CSRF). Same-origin fetches of the page
 * send a matching Origin or none; undici (the inspector) sends none.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { HttpProblem } from "./http-problem.js";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (how a dual-stack socket reports 127.0.0.1). */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^::ffff:/, "");
  return a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** A host name or Host header (port allowed) that can only mean this machine. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = (host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.includes("::") ? host : host.split(":")[0]!).toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || isLoopbackAddress(name);
}

/** The socket's peer when served by @hono/node-server (its bindings are the app's env). */
function peerAddress(env: unknown): string | undefined {
  const bindings = env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return bindings?.incoming?.socket?.remoteAddress;
}

function bearer(authorization: string | undefined): string | undefined {
  const match = authorization === undefined ? null : /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return match ? match[1] : undefined;
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return new URL(origin).host === host;
  } catch {
    return false; // "null" (sandboxed frames, file://) or garbage
  }
}

/**
 * @example
 * app.use("/api/*", accessGuard(() => token));
 */
export function accessGuard(token: () => string | undefined): MiddlewareHandler {
  let expected: { token: string; digest: Buffer } | undefined;
  return async function guardAccess(c, next) {
    const host = c.req.header("host");
    const origin = c.req.header("origin");
    if (origin !== undefined && !sameOrigin(origin, host)) {
      throw new HttpProblem(403, "cross_origin", `requests from ${origin} are refused: use the page this visualizer serves`);
    }
    const peer = peerAddress(c.env);
    // No socket: the embedding process called fetch() itself, and trusts itself.
    if (peer === undefined || (isLoopbackAddress(peer) && isLoopbackHost(host))) return next();
    const current = token();
    if (current === undefined) {
      throw new HttpProblem(403, "loopback_only", "this visualizer answers this machine only: bind it beyond loopback (listen({ host })) to get a token for other hosts");
    }
    if (expected?.token !== current) expected = { token: current, digest: digest(current) };
    const presented = bearer(c.req.header("authorization")) ?? c.req.query("token");
    if (presented === undefined) throw new HttpProblem(401, "token_required", "from another host this visualizer needs its token: open the URL it printed (…/#token=…), or send Authorization: Bearer <token>");
    if (!timingSafeEqual(digest(presented), expected.digest)) throw new HttpProblem(401, "bad_token", "wrong token: use the one in the URL the visualizer printed");
    return next();
  };
}
