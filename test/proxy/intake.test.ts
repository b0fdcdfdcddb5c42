/**
 * A request's intake (src/proxy/intake.ts): a large body is taken in turns of the event loop, so
 * other requests and /health run between its stages (issue 46). Turns are counted, never timed.
 */
import { describe, expect, it } from "vitest";
import { intake, LARGE_BODY_CHARS } from "../../src/proxy/intake.js";
import { TOOLS_PER_TURN } from "../../src/proxy-request/request-tools.js";
import { HttpError } from "../../src/proxy-request/http-error.js";
import { unique } from "../support/schema-work.js";

function bodyWith(toolCount: number): string {
  const tag = unique();
  const tools = Array.from({ length: toolCount }, (_, i) => ({
    type: "function",
    function: { name: `tool_${i}`, description: `Tool ${i}`, parameters: { type: "object", properties: { [`${tag}_${i}`]: { type: "string" } } } },
  }));
  return JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], tools });
}

/** How many times a chain of immediates ran while `work` was under way. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; value: T }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work();
  running = false;
  return { turns, value };
}

describe("intake", () => {
  it("a body of 5,000 tools lets others run between its parse, its checks and every few hundred tools", async () => {
    const text = bodyWith(5_000);
    expect(text.length).toBeGreaterThan(LARGE_BODY_CHARS);
    const { turns, value } = await turnsDuring(() => intake(text, "openai"));
    expect(turns).toBeGreaterThanOrEqual(2 + Math.ceil(5_000 / TOOLS_PER_TURN) - 1);
    expect(value.request.tools).toHaveLength(5_000);
  });

  it("a small body runs straight through", async () => {
    const text = bodyWith(3);
    expect(text.length).toBeLessThan(LARGE_BODY_CHARS);
    const { turns, value } = await turnsDuring(() => intake(text, "openai"));
    expect(turns).toBe(0);
    expect(value.request.tools.map((t) => t.name)).toEqual(["tool_0", "tool_1", "tool_2"]);
  });

  it("a large body's malformed tool schema is the caller's 400 after its turns", async () => {
    const body = JSON.parse(bodyWith(2_000)) as { tools: { function: { parameters: unknown } }[] };
    body.tools[1_900]!.function.parameters = { type: "object", properties: { a: { type: 12 } } };
    const failure = await intake(JSON.stringify(body), "openai").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(HttpError);
    expect(failure).toMatchObject({ status: 400 });
    expect((failure as Error).message).toMatch(/tool "tool_1900"/);
  });
});
