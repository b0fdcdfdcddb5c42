/**
 * The AI SDK 6 (`ai` 6) with `ollama-ai-provider-v2` 3.x pointed at the proxy's Ollama-native
 * door (`baseURL: <proxy>/api`), running its own multi-step tool loop: `generateText` and
 * `streamText` with a `tool()` whose `execute` writes the file, `stopWhen: stepCountIs(n)`.
 */
import { generateText, stepCountIs, streamText, tool } from "ai";
import { createOllama } from "ollama-ai-provider-v2";
import { clientSuite, MAX_TURNS, MODEL, TASK, WRITE_FILE, type ClientRun } from "./support/client-cases.js";

async function toolLoop({ url, bench }: ClientRun, stream: boolean): Promise<string> {
  const tools = { [WRITE_FILE.name]: tool({ description: WRITE_FILE.description, inputSchema: WRITE_FILE.schema, execute: async (args) => bench.run(WRITE_FILE.name, args) }) };
  const args = { model: createOllama({ baseURL: `${url}/api` })(MODEL), tools, prompt: TASK, stopWhen: stepCountIs(MAX_TURNS), maxRetries: 0 };
  if (!stream) return (await generateText(args)).text;
  // streamText reports a failed stream to onError, not as a rejection: the case should see it.
  let failure: unknown;
  const text = await streamText({ ...args, onError: ({ error }) => void (failure = error) }).text;
  if (failure !== undefined) throw failure;
  return text;
}

clientSuite("ollama-ai-provider", {
  "ollama-ai-provider-v2 3 + ai 6 (generateText)": (run) => toolLoop(run, false),
  "ollama-ai-provider-v2 3 + ai 6 (streamText)": (run) => toolLoop(run, true),
});
