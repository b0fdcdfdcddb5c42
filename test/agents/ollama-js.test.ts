/**
 * The `ollama` library (ollama-js) pointed at the proxy's Ollama-native door, `chat()` with a
 * tool, the loop run by hand as its README shows: streamed (the parts' content and tool calls
 * gathered) and not. Each tool call is executed and answered with a `tool` message. And the
 * model calls a client makes before it chats (list, show, ps, version), and the docs page's sample.
 */
import { Ollama, type ListResponse, type Message, type ShowResponse, type Tool, type ToolCall } from "ollama";
import { describe, expect, it } from "vitest";
import { clientSuite, MAX_TURNS, MODEL, runClientCase, TASK, WRITE_FILE, WRITE_FILE_JSON_SCHEMA, type ClientRun } from "./support/client-cases.js";

const tools: Tool[] = [{ type: "function", function: { name: WRITE_FILE.name, description: WRITE_FILE.description, parameters: WRITE_FILE_JSON_SCHEMA } }];

/** One assistant turn from a stream: the content pieces joined, the calls as they came. */
async function streamed(ollama: Ollama, messages: Message[]): Promise<Message> {
  let content = "";
  const calls: ToolCall[] = [];
  for await (const part of await ollama.chat({ model: MODEL, messages, tools, stream: true })) {
    content += part.message.content;
    calls.push(...(part.message.tool_calls ?? []));
  }
  return { role: "assistant", content, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

async function chatLoop({ url, bench }: ClientRun, stream: boolean): Promise<string | null> {
  const ollama = new Ollama({ host: url });
  const messages: Message[] = [{ role: "user", content: TASK }];
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const message = stream ? await streamed(ollama, messages) : (await ollama.chat({ model: MODEL, messages, tools, stream: false })).message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls) messages.push({ role: "tool", tool_name: call.function.name, content: bench.run(call.function.name, call.function.arguments) });
  }
  return null;
}

clientSuite(
  "ollama-js",
  {
    "ollama-js (stream)": (run) => chatLoop(run, true),
    "ollama-js (no stream)": (run) => chatLoop(run, false),
  },
  { page: "docs/clients/ollama-js.md" },
);

describe("ollama-js model calls through forge-ts proxy", () => {
  it("list(), show(), ps() and version() answer as Ollama's do: the model, its tools capability, its window", async () => {
    let seen: { tags: ListResponse; show: ShowResponse; ps: ListResponse; version: { version: string } } | undefined;
    const o = await runClientCase("native", "proxy", async ({ url }) => {
      const ollama = new Ollama({ host: url });
      seen = { tags: await ollama.list(), show: await ollama.show({ model: MODEL }), ps: await ollama.ps(), version: await ollama.version() };
      return null;
    });
    expect(o.error).toBeUndefined();
    expect(seen!.tags.models.map((m) => m.name)).toContain(MODEL);
    expect(seen!.ps.models.map((m) => m.name)).toContain(MODEL);
    // What a client reads to decide it can send tools, and how much history fits.
    expect(seen!.show.capabilities).toContain("tools");
    const window = Object.entries(seen!.show.model_info).find(([key]) => key.endsWith(".context_length"))?.[1];
    expect(window).toBeGreaterThan(0);
    expect(seen!.version.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
