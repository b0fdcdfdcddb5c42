/**
 * Workflow policy without session state: the proxy reads the step record from each request's
 * own history, blocks a premature terminal call, a missing prerequisite or a repeated call
 * with WorkflowRunner's nudges, and the client only ever sees calls the policy allows.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../clients/support/fake-server.js";
import type { ModelReply } from "../clients/support/wire.js";
import { proxyRig, type Rig } from "./support/harness.js";

const fn = (name: string, properties: Record<string, unknown> = {}): OpenAI.ChatCompletionTool => ({
  type: "function",
  function: { name, description: name, parameters: { type: "object", properties, additionalProperties: false } },
});
const tools = [fn("search", { q: { type: "string" } }), fn("summarize"), fn("submit", { text: { type: "string" } })];
const policy = { requiredSteps: ["search", "summarize"], terminalTool: "submit" };

type Wire = { role: string; content: string | null; tool_calls?: { function: { name: string } }[] };
const lastRole = (req: RecordedRequest) => (req.body.messages as Wire[]).at(-1)!.role;
const results = (req: RecordedRequest) => (req.body.messages as Wire[]).filter((m) => m.role === "tool" && !String(m.content).startsWith("["));

/** An eager small model: after each real result it tries to submit at once, then does as told. */
function eager(_: number, req: RecordedRequest): ModelReply {
  const done = results(req).length;
  const nudged = lastRole(req) === "tool" && String((req.body.messages as Wire[]).at(-1)!.content).startsWith("[StepEnforcementError]");
  if (!nudged && done < 2) return { toolCalls: [{ name: "submit", args: { text: "done" } }] };
  return { toolCalls: [done === 0 ? { name: "search", args: { q: "x" } } : done === 1 ? { name: "summarize", args: {} } : { name: "submit", args: { text: "done" } }] };
}

async function runLoop(rig: Rig): Promise<string[]> {
  const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Research and submit." }];
  const seen: string[] = [];
  for (let turn = 0; turn < 6; turn++) {
    const reply = await client.chat.completions.create({ model: "qwen3:8b", messages, tools });
    const message = reply.choices[0]!.message;
    const calls = message.tool_calls ?? [];
    messages.push(message);
    for (const call of calls) {
      if (call.type !== "function") continue;
      seen.push(call.function.name);
      messages.push({ role: "tool", tool_call_id: call.id, content: `${call.function.name} ok` });
    }
    if (calls.some((c) => c.type === "function" && c.function.name === "submit")) break;
  }
  return seen;
}

describe("workflow policy in the proxy", () => {
  it("a premature terminal call gets a step nudge; the client sees only the correct next calls", async () => {
    const rig = await proxyRig(eager, { wire: "openai", proxy: { policy } });
    expect(await runLoop(rig)).toEqual(["search", "summarize", "submit"]);
    const nudges = rig.chats().flatMap((c) => (c.body.messages as Wire[]).filter((m) => String(m.content).startsWith("[StepEnforcementError]")));
    expect(nudges.length).toBeGreaterThan(0);
    expect(nudges[0]!.content).toMatch(/"submit" cannot run yet.*Call "search" next/);
  });

  it("a failed result does not count as a step", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "submit", args: { text: "x" } }] }, { toolCalls: [{ name: "search", args: { q: "y" } }] }], { wire: "openai", proxy: { policy } });
    const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const reply = await client.chat.completions.create({
      model: "m",
      tools,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: '{"q":"x"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "Error: search backend down" },
      ],
    });
    expect(reply.choices[0]!.message.tool_calls![0]).toMatchObject({ function: { name: "search" } });
  });

  it("a model that keeps calling early fails the request (422): the blocked call is never handed out", async () => {
    const rig = await proxyRig(() => ({ toolCalls: [{ name: "submit", args: { text: "now" } }] }), { wire: "openai", proxy: { policy: { ...policy, maxPrematureAttempts: 1 } } });
    const response = await fetch(`${rig.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", tools, messages: [{ role: "user", content: "go" }] }),
    });
    expect(response.status).toBe(422);
    expect(await response.text()).toMatch(/forge policy.*step, 2 attempt/);
    expect(rig.chats()).toHaveLength(2);
  });

  it("the same call repeated past maxToolRepeat gets a loop break", async () => {
    const rig = await proxyRig([{ toolCalls: [{ name: "search", args: { q: "x" } }] }, { toolCalls: [{ name: "search", args: { q: "other" } }] }], { wire: "openai", proxy: { policy: { ...policy, maxToolRepeat: 1 } } });
    const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const reply = await client.chat.completions.create({
      model: "m",
      tools,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: '{"q":"x"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "3 hits" },
      ],
    });
    expect(reply.choices[0]!.message.tool_calls![0]).toMatchObject({ function: { name: "search", arguments: '{"q":"other"}' } });
    expect(JSON.stringify(rig.chats()[1]!.body.messages)).toContain("[LoopBreak]");
  });

  it("createProxy refuses a malformed policy up front", async () => {
    await expect(proxyRig([], { proxy: { policy: { requiredSteps: ["a"] } } })).rejects.toThrow(/policy.*need a terminalTool/);
  });
});
