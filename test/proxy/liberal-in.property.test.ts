/**
 * Liberal in, as a property over real agents' requests (test/fixtures/agents/): adding unknown
 * top-level fields and blocks or parts of unknown types to a request the proxy answers with
 * 200 still gets 200, and the backend receives exactly what it received without them — on the
 * Anthropic surface (fields dropped), and on the Chat Completions surface, where unknown
 * top-level fields are the one thing that changes: they ride through to an OpenAI-compatible
 * backend as they are (vendor extensions such as `chat_template_kwargs` mean something there).
 */
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { proxyRig, type Rig } from "./support/harness.js";

type Body = Record<string, unknown> & { messages: { role: string; content: unknown }[] };
const fixture = (name: string): Body => (JSON.parse(readFileSync(new URL(`../fixtures/agents/${name}.json`, import.meta.url), "utf8")) as { body: Body }).body;

/** Block and part types the proxy gives a meaning to, on any surface. */
const KNOWN_TYPES = new Set(["text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document", "tool_reference", "refusal", "search_result", "image_url", "input_audio", "file", "input_image", "input_file", "input_text", "output_text"]);
/** Top-level fields either surface reads (or the backend client sets itself). */
const KNOWN_FIELDS = new Set([
  "model", "messages", "max_tokens", "system", "tools", "tool_choice", "stream", "stream_options", "temperature", "top_p", "top_k", "stop_sequences",
  "output_config", "output_format", "n", "functions", "function_call", "response_format", "__proto__",
]);

const unknownType = fc
  .oneof(
    fc.constantFrom("server_tool_use", "web_search_tool_result", "code_execution_tool_result", "mcp_tool_use", "mcp_tool_result", "container_upload", "web_fetch_tool_result", "input_video"),
    fc.stringMatching(/^[a-z][a-z0-9_]{0,24}$/),
  )
  .filter((t) => !KNOWN_TYPES.has(t));
const unknownBlock = fc.tuple(unknownType, fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 })).map(([type, extra]) => ({ ...extra, type }));
const insertion = fc.record({ list: fc.nat(), at: fc.nat(), block: unknownBlock });
const extraFields = (base: Body) =>
  fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }).filter((k) => !KNOWN_FIELDS.has(k) && !(k in base)), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 4 });

/** Every content list in the request: message contents, and tool results' own contents. */
function contentLists(body: Body): unknown[][] {
  const lists: unknown[][] = [];
  for (const m of body.messages) {
    if (!Array.isArray(m.content)) continue;
    lists.push(m.content);
    for (const b of m.content as { type?: string; content?: unknown }[]) if (b.type === "tool_result" && Array.isArray(b.content)) lists.push(b.content);
  }
  return lists;
}

function withUnknowns(base: Body, extras: Record<string, unknown>, insertions: { list: number; at: number; block: unknown }[]): Body {
  const body = structuredClone(base);
  const lists = contentLists(body);
  for (const { list, at, block } of insertions) {
    const target = lists[list % lists.length]!;
    target.splice(at % (target.length + 1), 0, block);
  }
  for (const [k, v] of Object.entries(extras)) Object.defineProperty(body, k, { value: v, enumerable: true, writable: true, configurable: true });
  return body;
}

async function post(rig: Rig, path: string, body: Body): Promise<{ status: number; sent: Record<string, unknown> | undefined }> {
  const before = rig.chats().length;
  const res = await fetch(`${rig.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  const chats = rig.chats();
  return { status: res.status, sent: chats.length > before ? (chats[chats.length - 1]!.body as Record<string, unknown>) : undefined };
}

const answer = { content: "Done: hello.txt contains forge." };

describe("unknown fields and block types never change a 200 into a 400, nor what the backend receives", () => {
  it("Anthropic /v1/messages (Claude Code after a ToolSearch)", async () => {
    const rig = await proxyRig(() => answer, {
      wire: "openai",
      client: (url) => new LlamafileClient({ model: "qwen3-coder", baseUrl: `${url}/v1`, mode: "native", logger: () => {} }),
    });
    const base = { ...fixture("claude-code-tool-search"), stream: false };
    const plain = await post(rig, "/v1/messages", base);
    expect(plain.status).toBe(200);
    await fc.assert(
      fc.asyncProperty(fc.option(extraFields(base), { nil: {} }), fc.array(insertion, { maxLength: 4 }), async (extras, insertions) => {
        const got = await post(rig, "/v1/messages", withUnknowns(base, extras, insertions));
        expect(got.status).toBe(200);
        expect(got.sent).toEqual(plain.sent);
      }),
      { numRuns: 25 },
    );
  });

  it("OpenAI /v1/chat/completions (pi): parts ignored, unknown top-level fields passed on as they are", async () => {
    const rig = await proxyRig(() => answer, { wire: "openai" });
    const { stream: _s, stream_options: _o, ...rest } = fixture("pi");
    const base = rest as Body;
    const plain = await post(rig, "/v1/chat/completions", base);
    expect(plain.status).toBe(200);
    await fc.assert(
      fc.asyncProperty(fc.option(extraFields(base), { nil: {} }), fc.array(insertion, { maxLength: 4 }), async (extras, insertions) => {
        const got = await post(rig, "/v1/chat/completions", withUnknowns(base, extras, insertions));
        expect(got.status).toBe(200);
        expect(got.sent).toEqual({ ...plain.sent, ...(JSON.parse(JSON.stringify(extras)) as object) });
      }),
      { numRuns: 25 },
    );
  });
});
