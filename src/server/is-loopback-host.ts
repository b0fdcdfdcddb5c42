/**
 * Whether `host` (a --host value) is a loopback address: what the proxy, the MCP server and the
 * visualizer may serve without a key, since only this machine reaches them.
 *
 * @example isLoopbackHost("127.0.0.1") // true; isLoopbackHost("0.0.0.0") // false
 */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}
