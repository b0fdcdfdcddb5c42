/**
 * The runner bench's loop in AI SDK 7 (`generateText` + MockLanguageModelV4 +
 * `stopWhen: isStepCount(N)`), in its own module because `ai` 7 needs Node >= 22: the runner
 * suite imports it only there, and says so when it cannot.
 */
import { generateText, isStepCount, tool } from "ai-v7";
import { MockLanguageModelV4 } from "ai-v7/test";
import { z } from "zod";

const SYSTEM = "You are a benchmark agent. Call step until told otherwise, then call finish.";
const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const tools = {
  step: tool({ description: "No-op step", inputSchema: z.object({ i: z.number() }), execute: async () => "ok" }),
  finish: tool({ description: "End the run", inputSchema: z.object({}), execute: async () => "done" }),
};

/** The same loop as forge's and AI SDK 6's; throws unless it ran n steps and ended on `finish`. */
export async function aiSdk7Run(n: number): Promise<void> {
  let calls = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      const i = calls++;
      const last = i === n - 1;
      return {
        content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: last ? "finish" : "step", input: last ? "{}" : `{"i":${i}}` }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
  });
  const result = await generateText({ model, system: SYSTEM, prompt: "go", tools, stopWhen: isStepCount(n) });
  const lastResult = result.steps.at(-1)?.toolResults[0];
  if (result.steps.length !== n || calls !== n || lastResult?.toolName !== "finish" || lastResult.output !== "done") {
    throw new Error(`AI SDK 7 run of ${n}: ${result.steps.length} steps, ${calls} model calls, last ${lastResult?.toolName}`);
  }
}
