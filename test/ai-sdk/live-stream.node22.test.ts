/**
 * forgeGuardrails' wrapStream releases prose as the wrapped model writes it (the proxy's
 * streaming judge), and the judged calls after: the model's stream is held open by the test, so
 * "before the model finished" is an ordering of events.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { isStepCount, streamText, tool, wrapLanguageModel } from "ai-v7";
import { MockLanguageModelV4 } from "ai-v7/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { forgeGuardrails } from "../../src/ai-sdk.js";
import { hermes, USAGE } from "./support/mock-model.js";

const tools = { get_weather: tool({ description: "Weather", inputSchema: z.object({ city: z.string() }) }) };

/** A model whose stream the test writes part by part; `log` records what happened in order. */
function heldModel(log: string[]) {
  let controller!: ReadableStreamDefaultController<LanguageModelV4StreamPart>;
  const model = new MockLanguageModelV4({
    modelId: "small-8b",
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(c) {
          controller = c;
          c.enqueue({ type: "stream-start", warnings: [] });
          c.enqueue({ type: "text-start", id: "t" });
        },
      }),
    }),
  });
  return {
    model,
    write: (delta: string) => controller.enqueue({ type: "text-delta", id: "t", delta }),
    end(finish: "stop" | "tool-calls" = "stop") {
      controller.enqueue({ type: "text-end", id: "t" });
      controller.enqueue({ type: "finish", usage: USAGE, finishReason: { unified: finish, raw: finish } });
      controller.close();
      log.push("model:end");
    },
  };
}

describe("forgeGuardrails wrapStream, judged prose released live", () => {
  it("prose reaches the caller before the model finished", async () => {
    const log: string[] = [];
    const inner = heldModel(log);
    const model = wrapLanguageModel({ model: inner.model, middleware: forgeGuardrails() });
    const result = streamText({ model, tools, prompt: "Weather in Oslo?" });
    const reader = result.textStream[Symbol.asyncIterator]();
    setImmediate(() => inner.write("The weather in Oslo"));
    const first = await reader.next();
    log.push(`caller:${first.value}`);
    inner.write(" is mild.");
    inner.end();
    let rest = "";
    for (let next = await reader.next(); !next.done; next = await reader.next()) rest += next.value;
    expect(log).toEqual(["caller:The weather in Oslo", "model:end"]);
    expect(first.value + rest).toBe("The weather in Oslo is mild.");
  });

  it("a Hermes call after prose: the prose streams, then the call, and no markup reaches the caller", async () => {
    const log: string[] = [];
    const inner = heldModel(log);
    const model = wrapLanguageModel({ model: inner.model, middleware: forgeGuardrails() });
    const result = streamText({ model, tools, stopWhen: isStepCount(1), prompt: "Weather in Oslo?" });
    const parts: string[] = [];
    const reading = (async () => {
      for await (const part of result.fullStream) {
        if (part.type === "text-delta") parts.push(`text:${part.text}`);
        if (part.type === "tool-call") parts.push(`call:${part.toolName}:${JSON.stringify(part.input)}`);
        if (part.type === "text-delta" && parts.length === 1) {
          inner.write(` ${hermes("get_weather", { city: "Oslo" }).slice(0, 20)}`);
          inner.write(hermes("get_weather", { city: "Oslo" }).slice(20));
          inner.end();
        }
      }
    })();
    setImmediate(() => inner.write("Let me check."));
    await reading;
    expect(parts).toEqual(["text:Let me check.", 'call:get_weather:{"city":"Oslo"}']);
    expect((await result.steps)[0]!.text).toBe("Let me check.");
  });
});
