/**
 * The two front doors to forge's request guardrails for an AI SDK 7 app, each in front of a
 * loopback fake backend that speaks OpenAI chat completions (JSON and SSE) and answers from a
 * script, as small models write: the proxy (the app's provider points at it), and the
 * `forgeGuardrails()` middleware around the provider pointed at the backend itself.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible-v3";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai-v7";
import { afterEach } from "vitest";
import { forgeGuardrails, type ForgeGuardrailsOptions } from "../../../src/ai-sdk.js";
import { sendJson, sendSse, startFakeServer, type FakeServer, type RecordedRequest } from "../../clients/support/fake-server.js";
import { openaiCompletion, openaiSseEvents } from "../../clients/support/wire.js";
import { proxyRig, type Script } from "../../proxy/support/harness.js";

export type Door = "proxy" | "middleware";

export interface DoorRig {
  model: LanguageModelV4;
  /** Chat requests the backend received, in order. */
  chats(): RecordedRequest[];
}

const open: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function openaiBackend(script: Script): Promise<FakeServer> {
  let n = 0;
  const backend = await startFakeServer((req, res) => {
    const index = n++;
    const reply = typeof script === "function" ? script(index, req) : script[index];
    if (!reply) return sendJson(res, 500, { error: `no scripted reply for request ${index}` });
    return req.body.stream ? sendSse(res, openaiSseEvents(reply, "qwen3:8b")) : sendJson(res, 200, openaiCompletion(reply, "qwen3:8b"));
  });
  open.push(backend);
  return backend;
}

// supportsStructuredOutputs: the provider sends the output schema as `response_format`
// json_schema (else only json_object), so the proxy can check the schema as the middleware does.
const provider = (baseURL: string) => createOpenAICompatible({ name: "local", baseURL, includeUsage: true, supportsStructuredOutputs: true }).chatModel("qwen3:8b");

/**
 * @example
 * const { model, chats } = await frontDoor("middleware", smallModel());
 */
export async function frontDoor(door: Door, script: Script, options: ForgeGuardrailsOptions = {}): Promise<DoorRig> {
  if (door === "proxy") {
    const rig = await proxyRig(script, { wire: "openai", proxy: options });
    return { model: provider(`${rig.url}/v1`), chats: rig.chats };
  }
  const backend = await openaiBackend(script);
  const model = wrapLanguageModel({ model: provider(`${backend.url}/v1`), middleware: forgeGuardrails(options) });
  return { model, chats: () => backend.requests.filter((r) => r.method === "POST") };
}
