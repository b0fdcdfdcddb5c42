/**
 * The Streamable HTTP app in-process (its fetch handler, no socket): sessions, the loopback
 * Host/Origin guard, the API key; the SDK's Client reaches it through the transport's `fetch`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { ContextManager } from "../../src/context/context-manager.js";
import { isLoopbackHost, mcpHttpApp, type McpHttpApp } from "../../src/mcp-server/mcp-http-app.js";
import { workflowMcpServer } from "../../src/mcp-server/workflow-mcp-server.js";
import { SimulatedClient } from "../../src/testing.js";

const demo = supplierQuoteWorkflow();
const newServer = () =>
  workflowMcpServer({
    workflows: [demo.workflow],
    runner: (workflow) => ({ client: new SimulatedClient({ oracle: demo.oracle, workflow }), contextManager: new ContextManager({ budgetTokens: 8192 }) }),
  });
const URL_ = "http://127.0.0.1:8765/mcp";
const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
const post = (body: unknown, headers: Record<string, string> = {}) =>
  new Request(URL_, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(body) });

let app: McpHttpApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe("mcpHttpApp", () => {
  it("serves the SDK's Client: list, call, and a session that ends on close", async () => {
    app = mcpHttpApp({ newServer, loopbackOnly: true });
    const client = new Client({ name: "t", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_), { fetch: (input, init) => app!.fetch(new Request(input, init)) }));
    expect(app.sessions).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["supplier_quote"]);
    const result = await client.callTool({ name: "supplier_quote", arguments: { task: demo.userInput, promptVars: demo.promptVars } });
    expect(result.structuredContent).toMatchObject({ part_number: "PN-4471", quantity: 250, unit_price: 0.34 });
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    await client.close();
    expect(app.sessions).toBe(0);
  });

  it("makes no session for a request that is not an initialize, and 404s an unknown session", async () => {
    app = mcpHttpApp({ newServer });
    const notInit = await app.fetch(post({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
    expect(notInit.status).toBe(400);
    expect(app.sessions).toBe(0);
    const unknown = await app.fetch(post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { "mcp-session-id": "nope" }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringContaining("Session not found") } });
  });

  it("on loopback, refuses a Host or Origin that is not loopback (DNS rebinding)", async () => {
    app = mcpHttpApp({ newServer, loopbackOnly: true });
    const rebound = await app.fetch(new Request("http://evil.example:8765/mcp", { method: "POST", body: "{}" }));
    expect(rebound.status).toBe(403);
    const foreign = await app.fetch(post(initialize, { origin: "http://evil.example" }));
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain("evil.example");
    const local = await app.fetch(post(initialize, { origin: "http://localhost:3000" }));
    expect(local.status).toBe(200);
    expect(app.sessions).toBe(1);
  });

  it("beyond loopback (with a key), takes any Host but still refuses a foreign web page, key or not", async () => {
    app = mcpHttpApp({ newServer, apiKey: "s3cret" });
    const foreign = await app.fetch(post(initialize, { authorization: "Bearer s3cret", origin: "http://evil.example" }));
    expect(foreign.status).toBe(403);
    const lan = await app.fetch(new Request("http://192.168.1.5:8765/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: "Bearer s3cret" }, body: JSON.stringify(initialize) }));
    expect(lan.status).toBe(200);
  });

  it("with an API key, refuses callers without it (401, WWW-Authenticate) and serves those with it", async () => {
    app = mcpHttpApp({ newServer, apiKey: "s3cret" });
    const missing = await app.fetch(post(initialize));
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toBe("Bearer");
    expect(await missing.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000, message: expect.stringContaining("Missing API key") } });
    expect((await app.fetch(post(initialize, { authorization: "Bearer wrong" }))).status).toBe(401);
    expect((await app.fetch(post(initialize, { authorization: "Bearer s3cret" }))).status).toBe(200);
    expect((await app.fetch(post(initialize, { "x-api-key": "s3cret" }))).status).toBe(200);
  });

  it.each([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["localhost", true],
    ["::1", true],
    ["0.0.0.0", false],
    ["192.168.1.10", false],
    ["::", false],
  ])("isLoopbackHost(%j) is %j", (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});
