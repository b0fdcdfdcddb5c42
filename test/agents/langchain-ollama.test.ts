/**
 * LangChain's `ChatOllama` (`@langchain/ollama`) pointed at the proxy's Ollama-native door, the
 * file-writing tool bound with `bindTools`, the loop run by hand: `invoke()` (ChatOllama streams
 * /api/chat underneath either way); each call is run by its tool and answered with the
 * ToolMessage it returns; the address given as `baseUrl` and as OLLAMA_BASE_URL. Plus
 * `withStructuredOutput(zod)`: Ollama's `format` through the proxy. And the docs page's sample.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOllama } from "@langchain/ollama";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { caseProxy } from "./support/case-proxy.js";
import { clientSuite, FILE_JSON, MAX_TURNS, MODEL, TASK, WRITE_FILE, type ClientRun } from "./support/client-cases.js";
import { startFakeOllama } from "./support/fake-ollama.js";

/** `ChatOllama` given the address (`baseUrl`), or left to find it in OLLAMA_BASE_URL. */
function chatOllama(url: string, via: "baseUrl" | "env"): ChatOllama {
  if (via === "baseUrl") return new ChatOllama({ baseUrl: url, model: MODEL });
  const before = process.env.OLLAMA_BASE_URL;
  process.env.OLLAMA_BASE_URL = url;
  try {
    return new ChatOllama({ model: MODEL }); // reads the variable here, once
  } finally {
    if (before === undefined) delete process.env.OLLAMA_BASE_URL;
    else process.env.OLLAMA_BASE_URL = before;
  }
}

async function bindToolsLoop({ url, bench }: ClientRun, via: "baseUrl" | "env"): Promise<string | null> {
  const writeFile = tool((args) => bench.run(WRITE_FILE.name, args), { name: WRITE_FILE.name, description: WRITE_FILE.description, schema: WRITE_FILE.schema });
  const model = chatOllama(url, via).bindTools([writeFile]);
  const messages: BaseMessage[] = [new HumanMessage(TASK)];
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const reply = await model.invoke(messages);
    messages.push(reply);
    if (!reply.tool_calls?.length) return reply.text;
    for (const call of reply.tool_calls) {
      // A name the model made up gets a result saying so, as the tool would have.
      messages.push(call.name === writeFile.name ? await writeFile.invoke({ ...call, type: "tool_call" }) : new ToolMessage({ tool_call_id: call.id ?? "", content: bench.run(call.name, call.args) }));
    }
  }
  return null;
}

clientSuite(
  "langchain-ollama",
  {
    "@langchain/ollama (baseUrl)": (run) => bindToolsLoop(run, "baseUrl"),
    "@langchain/ollama (OLLAMA_BASE_URL)": (run) => bindToolsLoop(run, "env"),
  },
  { page: "docs/clients/langchain-ollama.md" },
);

describe("@langchain/ollama withStructuredOutput through forge-ts proxy", () => {
  it("sends the zod schema as Ollama's format and parses the scripted JSON answer", async () => {
    const workdir = mkdtempSync(path.join(tmpdir(), "forge-client-"));
    const model = await startFakeOllama("native", workdir);
    const proxy = caseProxy(model.url);
    try {
      const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
      const structured = new ChatOllama({ baseUrl: url, model: MODEL }).withStructuredOutput(WRITE_FILE.schema);
      expect(await structured.invoke("Which file should I create, and with what contents?")).toEqual(FILE_JSON);
      // The schema reached the model as Ollama's `format` (a model answers JSON only when asked).
      const asked = model.requests.filter((r) => r.path === "/api/chat").map((r) => r.body.format);
      expect(asked).toEqual([expect.objectContaining({ type: "object", properties: expect.objectContaining({ path: expect.anything(), content: expect.anything() }) })]);
      expect(proxy.stats().failed).toBe(0);
    } finally {
      await proxy.close();
      await model.close();
      rmSync(workdir, { recursive: true, force: true });
    }
  });
});
