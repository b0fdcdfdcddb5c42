/**
 * A real third-party harness over the proxy: the Vercel AI SDK's OpenAI-compatible provider
 * running a multi-step tool loop (`generateText` / `streamText` + tools). The small model
 * writes its first call as Hermes text; the proxy rescues it, the AI SDK executes the tool and
 * sends the result back, and the model answers.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { RecordedRequest } from "../clients/support/fake-server.js";
import type { ModelReply } from "../clients/support/wire.js";
import { hermes, proxyRig } from "./support/harness.js";

/** First a text-format call (with a wrong tool name on the first try), then the answer once a tool result is in. */
function smallModel(n: number, req: RecordedRequest): ModelReply {
  // The proxy's unknown-tool nudge is a tool message too: only a real result counts.
  const sawResult = (req.body.messages as { role: string; content: string }[]).some((m) => m.role === "tool" && m.content.includes("tempC"));
  if (sawResult) return { content: "It is 21 °C in Oslo." };
  return { content: n === 0 ? hermes("weather", { city: "Oslo" }) : hermes("get_weather", { city: "Oslo" }) };
}

const calls: unknown[] = [];
const tools = {
  get_weather: tool({
    description: "Current weather for a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return { city, tempC: 21 };
    },
  }),
};

describe("Vercel AI SDK over the proxy", () => {
  it.each([false, true])("a multi-step tool loop completes (streamText %s)", async (streaming) => {
    calls.length = 0;
    const rig = await proxyRig(smallModel);
    const model = createOpenAICompatible({ name: "forge", baseURL: `${rig.url}/v1` }).chatModel("qwen3:8b");
    const args = { model, tools, stopWhen: stepCountIs(5), prompt: "Weather in Oslo?", maxRetries: 0 };
    let text: string;
    let steps: number;
    if (streaming) {
      const result = streamText(args);
      text = await result.text;
      steps = (await result.steps).length;
    } else {
      const result = await generateText(args);
      text = result.text;
      steps = result.steps.length;
    }
    expect(text).toBe("It is 21 °C in Oslo.");
    expect(steps).toBe(2);
    expect(calls).toEqual(["Oslo"]);
    // Backend: the unknown-tool try, the retried call, the answer after the tool result.
    expect(rig.chats()).toHaveLength(3);
    const last = rig.chats()[2]!.body.messages as { role: string; content: string }[];
    expect(last.find((m) => m.role === "tool")?.content).toContain('"tempC":21');
    expect(rig.proxy.stats()).toMatchObject({ rescues: 1, retries: 1, exhausted: 0 });
  });
});
