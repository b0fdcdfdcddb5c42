/**
 * The one guard against the web that every local server here applies (the proxy, the MCP server,
 * the visualizer): a page the user visits must not reach them through the user's browser.
 *
 * - **DNS rebinding.** On a loopback bind, a request whose Host is not a loopback name is refused:
 *   a rebinding page reaches 127.0.0.1 under its own name (the hole Ollama closed in 0.1.29,
 *   CVE-2024-28224), so the Host header gives it away.
 * - **Cross-site requests.** A request whose Origin is present and not allowed is refused. Allowed:
 *   the server's own origin (Origin's host = Host), a loopback origin on a loopback bind (unless
 *   the server takes its own page's origin only, as the visualizer does), and the origins named
 *   in `corsOrigins` — for those alone the answers carry CORS headers and preflights are answered.
 * - **Simple requests.** `jsonOnly()` refuses a body that is not `application/json` (415): a
 *   cross-site form or `text/plain` POST is sent without a preflight, so without it the request
 *   would reach the model even though the page cannot read the answer.
 *
 * Each server says its policy once it knows its bind; with none (an app that mounts the proxy's
 * `fetch()` in its own server decides for itself) requests pass. The rules are pure
 * (`browserRefusal`) and tested on their own.
 */
import type { MiddlewareHandler } from "hono";

export interface BrowserPolicy {
  /** The server listens on a loopback address only (its Host must then name loopback). */
  loopbackBind: boolean;
  /** Other loopback origins may call (default true; the visualizer's API takes its own page only). */
  loopbackOrigins?: boolean;
  /** Origins (`scheme://host[:port]`) that may call from a browser: CORS headers and preflights for exactly these. */
  corsOrigins?: readonly string[];
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (how a dual-stack socket reports 127.0.0.1). */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^::ffff:/, "");
  return a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/**
 * A host name or Host header (port allowed) that can only mean this machine.
 *
 * @example isLoopbackName("localhost:8081") // true; isLoopbackName("evil.example") // false
 */
export function isLoopbackName(host: string | undefined): boolean {
  if (!host) return false;
  const name = (host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.includes("::") ? host : host.split(":")[0]!).toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || isLoopbackAddress(name);
}

function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === "http:" || url.protocol === "https:" ? url.host : undefined;
  } catch {
    return undefined; // "null" (sandboxed frames, file://) or garbage
  }
}

/**
 * An origin as `--cors-origin` takes it: `scheme://host[:port]`, nothing after; undefined when not one.
 *
 * @example normalOrigin("https://app.example.com/") // "https://app.example.com"
 */
export function normalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** Why a request is refused, or undefined when it may pass. */
export interface Refusal {
  status: 403;
  message: string;
}

/**
 * @example
 * browserRefusal({ host: "evil.example", origin: undefined }, { loopbackBind: true })?.status; // 403
 */
export function browserRefusal(request: { host: string | undefined; origin: string | undefined }, policy: BrowserPolicy): Refusal | undefined {
  const { host, origin } = request;
  if (policy.loopbackBind && !isLoopbackName(host)) {
    return { status: 403, message: `Host ${JSON.stringify(host ?? "")} is not this loopback server (a DNS-rebinding page names its own host); call it as localhost or 127.0.0.1` };
  }
  if (origin === undefined || isAllowedOrigin(origin, host, policy)) return undefined;
  return { status: 403, message: `requests from the web page at ${origin} are refused; a browser app calls from an origin the server names (forge-ts proxy --cors-origin ${origin})` };
}

function isAllowedOrigin(origin: string, host: string | undefined, policy: BrowserPolicy): boolean {
  if (policy.corsOrigins?.includes(origin)) return true;
  const from = originHost(origin);
  if (from === undefined) return false;
  if (host !== undefined && from.toLowerCase() === host.toLowerCase()) return true;
  return policy.loopbackBind && (policy.loopbackOrigins ?? true) && isLoopbackName(from);
}

/** The socket's peer when served by @hono/node-server (its bindings are the app's env). */
export function peerAddress(env: unknown): string | undefined {
  const bindings = env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return bindings?.incoming?.socket?.remoteAddress;
}

const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Applies `browserRefusal` to every request while `policy()` gives one, rendering a refusal with
 * `refuse`; answers the preflights of `corsOrigins` and adds CORS headers to their answers.
 * `policy()` is read per request: a server learns its bind when it listens.
 *
 * @example
 * app.use("*", browserGuard(() => ({ loopbackBind: true, corsOrigins }), (c, r) => c.json({ error: r.message }, r.status)));
 */
export function browserGuard(policy: () => BrowserPolicy | undefined, refuse: (c: Parameters<MiddlewareHandler>[0], refusal: Refusal) => Response): MiddlewareHandler {
  return async function guardBrowsers(c, next) {
    const current = policy();
    if (current === undefined) return next();
    const origin = c.req.header("origin");
    // @hono/node-server builds the URL from the Host header; a Request made in-process has no Host header.
    const refusal = browserRefusal({ host: c.req.header("host") ?? new URL(c.req.url).host, origin }, current);
    if (refusal !== undefined) return refuse(c, refusal);
    const cors = origin !== undefined && current.corsOrigins?.includes(origin) === true;
    if (cors && c.req.method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined) {
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-origin": origin,
          "access-control-allow-methods": "GET, POST, HEAD, OPTIONS",
          "access-control-allow-headers": c.req.header("access-control-request-headers") ?? "authorization, content-type",
          "access-control-max-age": String(PREFLIGHT_MAX_AGE_S),
          vary: "Origin",
        },
      });
    }
    await next();
    if (cors) {
      c.res.headers.set("access-control-allow-origin", origin);
      c.res.headers.append("vary", "Origin");
      c.res.headers.set("access-control-expose-headers", "x-forge-request-id, x-forge-attempts, x-forge-exhausted, x-forge-omitted-tools, retry-after");
    }
  };
}

/**
 * Refuses a body that is not JSON (415): what makes a cross-site POST need a preflight.
 *
 * @example
 * app.post("/v1/chat/completions", jsonOnly((c, message) => c.json({ error: message }, 415)), handler);
 */
export function jsonOnly(refuse: (c: Parameters<MiddlewareHandler>[0], message: string) => Response): MiddlewareHandler {
  return async function requireJson(c, next) {
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type === "application/json") return next();
    return refuse(c, `Content-Type must be application/json, not ${type === "" ? "none" : JSON.stringify(type)} (curl: -H 'content-type: application/json')`);
  };
}
