/**
 * AI SDK 7 (`ai-v7`) with `ollama-ai-provider-v2` 4.x (`ollama-ai-provider-v2-v4`, installed in
 * .ci/ai-sdk7 beside it) pointed at the proxy's Ollama-native door, its own multi-step tool loop:
 * `generateText` and `streamText`, `stopWhen: isStepCount(n)`; and the docs page's sample (AI SDK
 * 7 is what the docs show). Needs Node >= 22 (vitest.config.ts
 * leaves it out on older Node, with a note).
 */
import { generateText, isStepCount, streamText, tool } from "ai-v7";
import { createOllama } from "ollama-ai-provider-v2-v4";
import { clientSuite, MAX_TURNS, MODEL, TASK, WRITE_FILE, type ClientRun } from "./support/client-cases.js";

async function toolLoop({ url, bench }: ClientRun, stream: boolean): Promise<string> {
  const tools = { [WRITE_FILE.name]: tool({ description: WRITE_FILE.description, inputSchema: WRITE_FILE.schema, execute: async (args) => bench.run(WRITE_FILE.name, args) }) };
  const args = { model: createOllama({ baseURL: `${url}/api` })(MODEL), tools, prompt: TASK, stopWhen: isStepCount(MAX_TURNS), maxRetries: 0 };
  if (!stream) return (await generateText(args)).text;
  // streamText reports a failed stream to onError, not as a rejection: the case should see it.
  let failure: unknown;
  const text = await streamText({ ...args, onError: ({ error }) => void (failure = error) }).text;
  if (failure !== undefined) throw failure;
  return text;
}

clientSuite(
  "ollama-ai-provider (AI SDK 7)",
  {
    "ollama-ai-provider-v2 4 + ai 7 (generateText)": (run) => toolLoop(run, false),
    "ollama-ai-provider-v2 4 + ai 7 (streamText)": (run) => toolLoop(run, true),
  },
  { page: "docs/clients/ollama-ai-provider.md" },
);
