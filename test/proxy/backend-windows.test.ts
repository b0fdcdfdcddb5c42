/**
 * BackendWindows against loopback Ollama fakes: what it asks, when it asks again, and what a
 * backend that is down or unreachable gets.
 */
import { describe, expect, it } from "vitest";
import { OllamaClient } from "../../src/clients/ollama.js";
import { createMessage } from "../../src/core/messages.js";
import { BackendWindows } from "../../src/proxy/backend-windows.js";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { windowAnswer } from "./support/harness.js";

const serve = useFakeServers();
const request = (chars: number) => ({ model: undefined, messages: [createMessage("user", "x".repeat(chars), "user_input")], tools: [], body: {} });
const signal = new AbortController().signal;

function health(up: boolean) {
  const downs: string[] = [];
  return { downs, isUp: () => up, markDown: (name: string, reason: string) => void downs.push(`${name}: ${reason}`) };
}

describe("BackendWindows", () => {
  it("asks once per backend and model, shares the question between concurrent requests, and sizes num_ctx from the answer", async () => {
    const server = await serve((req, res) => sendJson(res, 200, windowAnswer(req.path, 8192)));
    const backend = { name: "b", client: new OllamaClient({ model: "qwen3:8b", baseUrl: server.url, logger: () => {} }) };
    const windows = new BackendWindows({ warn: () => {} });
    const admissions = await Promise.all([windows.admit([backend], request(100), signal), windows.admit([backend], request(20_000), signal)]);
    expect(server.requests.map((r) => r.body)).toEqual([{ model: "qwen3:8b" }]);
    expect(admissions.map((a) => a.numCtx(backend))).toEqual([4096, 8192]);
    await windows.admit([backend], { ...request(100), model: "qwen3:4b" }, signal);
    expect(server.requests.map((r) => r.body.model)).toEqual(["qwen3:8b", "qwen3:4b"]);
    await expect(windows.admit([backend], request(40_000), signal)).rejects.toMatchObject({ status: 400, details: { code: "context_length_exceeded" } });
  });

  it("an unreachable backend is marked down, said once, and asked again by a later request", async () => {
    const gone = await serve(() => {});
    const url = gone.url;
    await gone.close();
    const h = health(true);
    const warnings: string[] = [];
    const backend = { name: "b", client: new OllamaClient({ model: "qwen3:8b", baseUrl: url, logger: () => {} }) };
    const windows = new BackendWindows({ health: h, warn: (line) => void warnings.push(line) });
    expect((await windows.admit([backend], request(100), signal)).numCtx(backend)).toBe(4096);
    await windows.admit([backend], request(100), signal);
    expect(h.downs).toHaveLength(2);
    expect(warnings).toEqual([expect.stringMatching(/^forge-ts proxy: cannot learn the context length of backend "b" \(No usable HTTP answer from .*ECONNREFUSED.*\); prompts are not checked/)]);
  });

  it("a backend that is down is not asked: its configured window or its client's numCtx still apply", async () => {
    const server = await serve((req, res) => sendJson(res, 200, windowAnswer(req.path, 8192)));
    const windows = new BackendWindows({ health: health(false), warn: () => {} });
    const fixed = { name: "fixed", client: new OllamaClient({ model: "m", baseUrl: server.url, numCtx: 4096, logger: () => {} }) };
    const configured = { name: "configured", client: new OllamaClient({ model: "m", baseUrl: server.url, logger: () => {} }), contextLength: 6000 };
    const admission = await windows.admit([fixed, configured], request(20_000), signal);
    expect([...admission.skip]).toEqual(["fixed"]);
    expect([admission.numCtx(fixed), admission.numCtx(configured)]).toEqual([undefined, 6000]);
    expect(server.requests).toHaveLength(0);
  });
});
