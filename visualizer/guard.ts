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
import { browserRefusal, isLoopbackAddress, isLoopbackName, peerAddress } from "../src/server/browser-guard.js";
import { HttpProblem } from "./http-problem.js";

const digest = (value: string) => createHash("sha256").update(value).digest();

export { isLoopbackAddress, isLoopbackName as isLoopbackHost } from "../src/server/browser-guard.js";

/** The API takes its own page's requests only: no other origin, loopback or not. */
const OWN_PAGE_ONLY = { loopbackBind: false, loopbackOrigins: false } as const;

function bearer(authorization: string | undefined): string | undefined {
  const match = authorization === undefined ? null : /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return match ? match[1] : undefined;
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
    if (browserRefusal({ host, origin }, OWN_PAGE_ONLY) !== undefined) {
      throw new HttpProblem(403, "cross_origin", `requests from ${origin} are refused: use the page this visualizer serves`);
    }
    const peer = peerAddress(c.env);
    // No socket: the embedding process called fetch() itself, and trusts itself.
    if (peer === undefined || (isLoopbackAddress(peer) && isLoopbackName(host))) return next();
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
