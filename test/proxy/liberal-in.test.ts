/**
 * The decisions behind "liberal in" (docs/proxy.md, "What each surface accepts"): system-role
 * messages folded into the system prompt, server and deferred tools, media placeholders,
 * non-function OpenAI tools, and the 400s that stay.
 */
import { describe, expect, it } from "vitest";
import { parseMessagesRequest } from "../../src/proxy/anthropic-request.js";
import { mediaPlaceholder } from "../../src/proxy/content-parts.js";
import { parseChatCompletionRequest } from "../../src/proxy/openai-request.js";
import { HttpError } from "../../src/proxy-request/http-error.js";
import { proxyRig } from "./support/harness.js";

const schema = { type: "object", properties: { path: { type: "string" } } };
const an = (extra: Record<string, unknown>) => parseMessagesRequest({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "hi" }], ...extra });
const refusal = (fn: () => unknown): HttpError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error("expected an HttpError");
};

describe("Anthropic: system-role messages", () => {
  it("fold into one leading system prompt in the order they appear, after the top-level system", () => {
    const req = parseMessagesRequest({
      max_tokens: 64,
      system: "top",
      messages: [
        { role: "user", content: "u1" },
        { role: "system", content: [{ type: "text", text: "env", cache_control: { type: "ephemeral" } }] },
        { role: "assistant", content: "a1" },
        { role: "system", content: "reminder" },
        { role: "user", content: "u2" },
      ],
    });
    expect(req.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "top\n\nenv\n\nreminder"],
      ["user", "u1"],
      ["assistant", "a1"],
      ["user", "u2"],
    ]);
  });

  it("make a system prompt when there is no top-level one", () => {
    const req = parseMessagesRequest({ max_tokens: 64, messages: [{ role: "user", content: "u" }, { role: "system", content: "env" }] });
    expect(req.messages.map((m) => [m.role, m.content])).toEqual([["system", "env"], ["user", "u"]]);
  });
});

describe("Anthropic: tools the backend is not offered", () => {
  it.each([
    [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }],
    [{ type: "code_execution_20250825", name: "code_execution" }],
    [{ type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" }],
    [{ type: "bash_20250124", name: "bash" }],
  ])("%j (a server or Anthropic-defined tool) is left out, not refused", (server) => {
    const req = an({ tools: [{ name: "Read", input_schema: schema }, server] });
    expect(req.tools.map((t) => t.name)).toEqual(["Read"]);
    expect(req.omittedTools).toEqual([server.name]);
  });

  it("a deferred tool is offered once a tool_reference in the history loads it", () => {
    const tools = [
      { name: "ToolSearch", input_schema: schema },
      { name: "WebFetch", input_schema: schema, defer_loading: true },
      { name: "DeferredToolPlaceholder", input_schema: { type: "object", properties: {} }, defer_loading: true },
    ];
    expect(an({ tools }).tools.map((t) => t.name)).toEqual(["ToolSearch"]);
    const loaded = an({
      tools,
      messages: [
        { role: "user", content: "fetch it" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "ToolSearch", input: { query: "select:WebFetch" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "tool_reference", tool_name: "WebFetch" }] }] },
      ],
    });
    expect(loaded.tools.map((t) => t.name)).toEqual(["ToolSearch", "WebFetch"]);
    expect(loaded.omittedTools).toEqual(["DeferredToolPlaceholder"]);
    expect(loaded.messages.at(-1)).toMatchObject({ role: "tool", content: "[tool loaded: WebFetch]", toolName: "ToolSearch" });
  });

  it("tool_choice naming a tool that is left out is a 400 that says why", () => {
    const error = refusal(() => an({ tools: [{ type: "web_search_20250305", name: "web_search" }], tool_choice: { type: "tool", name: "web_search" } }));
    expect(error.message).toMatch(/tool_choice names "web_search", a server or unloaded deferred tool/);
  });

  it("the response names them in x-forge-omitted-tools", async () => {
    const rig = await proxyRig([{ content: "ok" }]);
    const res = await fetch(`${rig.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ max_tokens: 64, messages: [{ role: "user", content: "hi" }], tools: [{ name: "Read", input_schema: schema }, { type: "web_search_20250305", name: "web_search" }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-forge-omitted-tools")).toBe("web_search");
    expect(rig.chats()[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["Read"]);
  });
});

describe("Anthropic: content", () => {
  it("a search_result block (in a tool result or a user turn) is read as its title, source and text", () => {
    const result = { type: "search_result", title: "Docs", source: "https://example.com/a", content: [{ type: "text", text: "Alpha." }, { type: "text", text: "Beta." }], citations: { enabled: true } };
    const req = an({
      tools: [{ name: "search", input_schema: schema }],
      messages: [
        { role: "user", content: "find" },
        { role: "assistant", content: [{ type: "tool_use", id: "s1", name: "search", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "s1", content: [result] }] },
      ],
    });
    expect(req.messages.at(-1)!.content).toBe("Docs — https://example.com/a\nAlpha.\nBeta.");
  });
});

describe("OpenAI Chat Completions", () => {
  const oa = (extra: Record<string, unknown>) => parseChatCompletionRequest({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra });

  it("content parts: media become placeholders, refusals their text, unknown types nothing", () => {
    const req = oa({
      messages: [
        { role: "user", content: [{ type: "text", text: "listen" }, { type: "input_audio", input_audio: { data: "UklGR", format: "wav" } }, { type: "file", file: { file_id: "f1" } }, { type: "x_new", data: 1 }] },
        { role: "assistant", content: [{ type: "refusal", refusal: "I can't." }] },
      ],
    });
    expect(req.messages.map((m) => m.content)).toEqual([`listen\n${mediaPlaceholder("audio")}\n${mediaPlaceholder("file")}`, "I can't."]);
  });

  it("tools of another type than function are left out by name", () => {
    const req = oa({ tools: [{ type: "function", function: { name: "read", parameters: schema } }, { type: "custom", custom: { name: "apply_patch", format: { type: "text" } } }, { type: "web_search" }] });
    expect(req.tools.map((t) => t.name)).toEqual(["read"]);
    expect(req.omittedTools).toEqual(["apply_patch", "web_search"]);
  });

  it.each(["function", "ipython", "wizard"])("an unknown role (%s) stays a 400: who said it cannot be guessed", (role) => {
    expect(refusal(() => oa({ messages: [{ role, content: "x" }] })).message).toMatch(/messages\[0\]\.role/);
  });
});
