/**
 * `forwardAuth`: the caller's own credential reaches the backend in place of the client's;
 * without it the caller's header never leaves the proxy.
 */
import { describe, expect, it } from "vitest";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { openaiCompletion } from "../clients/support/wire.js";

const serve = useFakeServers();
const chat = (headers: Record<string, string>) =>
  new Request("http://proxy/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
  });

describe("proxy forwardAuth", () => {
  it("passes the caller's Bearer or x-api-key to the backend instead of the operator's", async () => {
    const backend = await serve((_req, res) => sendJson(res, 200, openaiCompletion({ content: "ok" })));
    const client = new OpenAICompatClient({ model: "m", baseUrl: `${backend.url}/v1`, apiKey: "operator" });
    const proxy = createProxy({ client, forwardAuth: true });
    expect((await proxy.fetch(chat({ authorization: "Bearer caller-1" }))).status).toBe(200);
    expect((await proxy.fetch(chat({ "x-api-key": "caller-2" }))).status).toBe(200);
    expect((await proxy.fetch(chat({}))).status).toBe(200);
    const chats = backend.requests.filter((r) => r.path === "/v1/chat/completions");
    expect(chats.map((r) => r.headers.authorization)).toEqual(["Bearer caller-1", "Bearer caller-2", "Bearer operator"]);
  });

  it("off by default: the caller's header never reaches the backend", async () => {
    const backend = await serve((_req, res) => sendJson(res, 200, openaiCompletion({ content: "ok" })));
    const proxy = createProxy({ client: new OpenAICompatClient({ model: "m", baseUrl: `${backend.url}/v1`, apiKey: "operator" }) });
    await proxy.fetch(chat({ authorization: "Bearer caller-1" }));
    expect(backend.to("/v1/chat/completions")[0]!.headers.authorization).toBe("Bearer operator");
  });

  it("cannot be combined with apiKey", () => {
    const client = new OpenAICompatClient({ model: "m", baseUrl: "http://127.0.0.1:1/v1" });
    expect(() => createProxy({ client, forwardAuth: true, apiKey: "k" })).toThrow(InvalidArgumentError);
  });
});
