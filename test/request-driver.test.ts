/**
 * The proxy-request machine's one driver (src/request-driver.ts), which the proxy and the AI SDK
 * middleware share: each request reaches its own I/O, a rescue and a nudge come out as guardrail
 * events, a cancelled signal ends the run as `cancelled`, a request id runs once at a time.
 */
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../src/core/errors.js";
import { createMessage, MessageType } from "../src/core/messages.js";
import { textResponse, toolCallsResponse, type LLMResponse } from "../src/core/llm.js";
import type { ProxyGuardrailEvent } from "../src/proxy-request/guardrail-events.js";
import type { ProxyInput } from "../src/proxy-request/request-context.js";
import { requestDriver } from "../src/request-driver.js";

const input = (requestId: string): ProxyInput => ({
  requestId,
  request: {
    model: "m",
    messages: [createMessage("user", "weather in Paris?", MessageType.USER_INPUT)],
    tools: [{ name: "weather", description: "the weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }],
    toolChoice: undefined,
    stream: false,
    includeUsage: false,
    body: {},
  },
  options: { maxRetries: 3, maxToolErrors: 2, rescueEnabled: true, injectRespondTool: false },
});

/** Answers each attempt from the request's own list, in order. */
interface Io {
  answers: LLMResponse[];
  seen: number[];
}

describe("requestDriver", () => {
  const drive = requestDriver<Io>(async (attempt, io) => {
    io.seen.push(attempt.attempt);
    return io.answers.shift()!;
  });

  it("runs each request on its own I/O; an unknown tool is nudged, a call written as text is rescued, and both are reported", async () => {
    const events: ProxyGuardrailEvent[] = [];
    const a: Io = { answers: [toolCallsResponse([{ tool: "wether", args: { city: "Paris" } }]), textResponse('<tool_call>{"name": "weather", "arguments": {"city": "Paris"}}</tool_call>')], seen: [] };
    const b: Io = { answers: [toolCallsResponse([{ tool: "weather", args: { city: "Oslo" } }])], seen: [] };
    const [outA, outB] = await Promise.all([drive(input("a"), a, { onGuardrail: (e) => events.push(e) }), drive(input("b"), b)]);
    expect(outA).toMatchObject({ kind: "answer", attempts: 2, rescued: true, answer: { type: "tool_calls", calls: [{ name: "weather", args: { city: "Paris" } }] } });
    expect(outB).toMatchObject({ kind: "answer", attempts: 1, answer: { type: "tool_calls", calls: [{ name: "weather", args: { city: "Oslo" } }] } });
    expect([a.seen, b.seen]).toEqual([[0, 1], [0]]);
    expect(events.map((e) => e.type)).toEqual(["guardrail.nudge", "guardrail.rescue"]);
  });

  it("ends a request whose signal fires as cancelled, with the signal's reason", async () => {
    const controller = new AbortController();
    const hang = requestDriver<null>((_, __, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error))));
    const running = hang(input("c"), null, { signal: controller.signal });
    controller.abort("caller left");
    await expect(running).resolves.toEqual({ kind: "cancelled", reason: "caller left" });
  });

  it("refuses a request id that is already running, and frees it when the run ends", async () => {
    let release!: (r: LLMResponse) => void;
    const held = requestDriver<null>(() => new Promise((resolve) => (release = resolve)));
    const first = held(input("d"), null);
    await expect(held(input("d"), null)).rejects.toThrow(InvalidArgumentError);
    release(toolCallsResponse([{ tool: "weather", args: { city: "Rome" } }]));
    await expect(first).resolves.toMatchObject({ kind: "answer" });
    const again = held(input("d"), null);
    release(toolCallsResponse([{ tool: "weather", args: { city: "Rome" } }]));
    await expect(again).resolves.toMatchObject({ kind: "answer" });
  });
});
