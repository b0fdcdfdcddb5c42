import type { ServerResponse } from "node:http";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { OpenAICompatClient } from "../../src/clients/openai-compat.js";
import { clientContract, type ContractTarget } from "./contract.js";
import { sendJson, sendNdjson, sendSse } from "./support/fake-server.js";
import { ollamaChat, ollamaStreamLines, openaiCompletion, openaiSseEvents, type ModelReply } from "./support/wire.js";

const quiet = () => {};

const ollamaTarget: ContractTarget = {
  name: "OllamaClient",
  makeClient: (url, o) => new OllamaClient({ model: "llama3.1:8b", baseUrl: url, logger: quiet, ...o }),
  reply: (res, reply, stream) => (stream ? sendNdjson(res, ollamaStreamLines(reply)) : sendJson(res, 200, ollamaChat(reply))),
  malformed: (res) => sendNdjson(res, [ollamaStreamLines({ content: "Hi" })[0], "{not json", ...ollamaStreamLines({ content: "Hi" })]),
  truncated: (res) => sendNdjson(res, ollamaStreamLines({ content: "It is sunny" }).slice(0, -1)),
  stallMidStream: (res) => sendNdjson(res, ollamaStreamLines({ content: "Hi" }).slice(0, 1), { end: false }),
};

function openaiWriters(render: (reply: ModelReply) => ModelReply): Omit<ContractTarget, "name" | "makeClient"> {
  return {
    reply: (res: ServerResponse, reply, stream) =>
      stream ? sendSse(res, openaiSseEvents(render(reply))) : sendJson(res, 200, openaiCompletion(render(reply))),
    malformed: (res) => sendSse(res, [openaiSseEvents({ content: "Hi" })[1]!, "{not json"]),
    truncated: (res) => sendSse(res, openaiSseEvents({ content: "It is sunny" }).slice(0, 3), { done: false }),
    stallMidStream: (res) => sendSse(res, openaiSseEvents({ content: "Hi" }).slice(1, 2), { done: false, end: false }),
  };
}

/** Prompt mode: the model writes its calls as the fenced JSON the tool prompt asks for. */
function asPromptText(reply: ModelReply): ModelReply {
  if (!reply.toolCalls?.length) return reply;
  const text = reply.toolCalls.map((c) => "```json\n" + JSON.stringify({ tool: c.name, args: c.args }) + "\n```").join("\n");
  const { toolCalls: _drop, ...rest } = reply;
  return { ...rest, content: text };
}

clientContract({
  name: "LlamafileClient (native)",
  makeClient: (url, o) => new LlamafileClient({ ggufPath: "/m/Model-Q4_K_M.gguf", baseUrl: `${url}/v1`, mode: "native", logger: quiet, ...o }),
  ...openaiWriters((r) => r),
});
clientContract({
  name: "LlamafileClient (prompt)",
  makeClient: (url, o) => new LlamafileClient({ ggufPath: "/m/Model-Q4_K_M.gguf", baseUrl: `${url}/v1`, mode: "prompt", logger: quiet, ...o }),
  ...openaiWriters(asPromptText),
});
clientContract({
  name: "OpenAICompatClient",
  makeClient: (url, o) => new OpenAICompatClient({ model: "Qwen/Qwen3-8B", baseUrl: `${url}/v1`, apiKey: "sk-test", ...o }),
  ...openaiWriters((r) => r),
});
clientContract(ollamaTarget);
