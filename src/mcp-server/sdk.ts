/**
 * The server side of the MCP SDK (an optional peer, not in the core install): `forge-ts mcp`
 * takes its classes from here (its types from the SDK, which cost nothing at run time), so
 * without the SDK loading the server fails here, with one line naming it.
 */
import { optionalPackages } from "../core/optional-package.js";

export const sdk = await optionalPackages("forge-ts mcp", ["@modelcontextprotocol/sdk"], async () => {
  const [mcp, http, stdio] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/mcp.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
  ]);
  return { ...mcp, ...http, ...stdio };
});
