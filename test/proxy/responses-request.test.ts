/**
 * POST /v1/responses bodies → ProxyRequest: Codex's real first request and its request after a
 * tool ran (test/fixtures/agents/codex*.json), input items, tools (flat, namespace, built-in),
 * tool_choice, text.format, sampling fields, statelessness and the 400s for malformed fields.
 *
 * The fixtures were captured from Codex CLI 0.171.0 (`codex exec`), run in a network namespace
 * with only loopback (`unshare --net`) against a loopback capture server, with HOME and
 * CODEX_HOME in a temp dir and this `$CODEX_HOME/config.toml`:
 *
 *   model = "qwen3:8b"
 *   model_provider = "forge"
 *   check_for_update_on_startup = false
 *   approval_policy = "never"
 *   sandbox_mode = "workspace-write"
 *
 *   [model_providers.forge]
 *   name = "forge-ts proxy"
 *   base_url = "http://127.0.0.1:PORT/v1"
 *   wire_api = "responses"
 *   env_key = "FORGE_API_KEY"
 *
 *   [analytics]
 *   enabled = false
 *   [feedback]
 *   enabled = false
 *
 * and `FORGE_API_KEY=sk-local codex exec --skip-git-repo-check "create hello.txt containing forge" < /dev/null`.
 * The authorization, host and content-length headers were dropped; the work and home paths
 * replaced with <CWD>, <HOME> and <CODEX_HOME>.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HttpError } from "../../src/proxy-request/http-error.js";
import { requestToolDefs } from "../../src/proxy-request/request-tools.js";
import { parseResponsesRequest } from "../../src/proxy/responses-request.js";

interface Fixture {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/agents/${name}.json`, import.meta.url), "utf8")) as Fixture;
const codex = fixture("codex");
const codexAfterTool = fixture("codex-tool-result");

const parse = (body: Record<string, unknown>) => parseResponsesRequest(body);
const base = { model: "m", input: "hi" };

/** The 400 a body gets, as its message. */
function refusal(body: Record<string, unknown>): string {
  try {
    parse(body);
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    return (error as HttpError).message;
  }
  throw new Error("expected a 400");
}

/** Fields that mean something only to OpenAI's hosted API. */
const OPENAI_ONLY = /encrypted_content|prompt_cache_key|client_metadata|x-codex|web_search|"store"|"include"/;

describe("Codex CLI request shapes", () => {
  it("posts a streamed request to /v1/responses with store: false", () => {
    expect(codex.path).toBe("/v1/responses");
    expect(codex.headers["user-agent"]).toMatch(/^codex_exec\/0\.171\.0/);
    expect(codex.body).toMatchObject({ stream: true, store: false, tool_choice: "auto", parallel_tool_calls: true });
  });

  it("parses the first request: developer items fold into one system prompt, namespace tools are flattened, web_search is dropped", () => {
    const { request, shape } = parse(structuredClone(codex.body));
    expect(request.messages.map((m) => [m.role, m.meta.type])).toEqual([
      ["system", "system_prompt"],
      ["user", "user_input"],
      ["user", "user_input"],
    ]);
    expect(request.messages[0]!.content).toMatch(/^You are a coding agent running in the Codex CLI[\s\S]*\n\n<skills_instructions>/);
    expect(request.messages.at(-1)!.content).toBe("create hello.txt containing forge");
    expect(request.tools.map((t) => t.name)).toEqual([
      "exec_command",
      "write_stdin",
      "request_user_input",
      "view_image",
      "multi_agent_v1__close_agent",
      "multi_agent_v1__resume_agent",
      "multi_agent_v1__send_input",
      "multi_agent_v1__spawn_agent",
      "multi_agent_v1__wait_agent",
      "get_goal",
      "create_goal",
      "update_goal",
    ]);
    expect(shape.names["multi_agent_v1__spawn_agent"]).toEqual({ name: "spawn_agent", namespace: "multi_agent_v1" });
    expect(shape.names["exec_command"]).toBeUndefined();
    expect(shape.dropped).toEqual(["web_search"]);
    expect(request.omittedTools).toEqual(["web_search"]);
    expect(request).toMatchObject({ model: "qwen3:8b", stream: true, toolChoice: "auto" });
    // reasoning: { summary: "auto" } carries no effort; only what a chat backend understands goes on.
    expect(request.body).toEqual({ parallel_tool_calls: true });
    // What reaches the backend (omittedTools only names, for the caller's header, what did not).
    expect(JSON.stringify({ ...request, omittedTools: undefined })).not.toMatch(OPENAI_ONLY);
    expect(() => requestToolDefs(request.tools)).not.toThrow();
  });

  it("parses the request after a tool ran: the function_call and its output become a call turn and a tool result", () => {
    const { request } = parse(structuredClone(codexAfterTool.body));
    const [call, result] = request.messages.slice(-2);
    expect(call).toMatchObject({ role: "assistant", content: "", toolCalls: [{ name: "exec_command", args: { cmd: "printf forge > hello.txt" }, callId: "call_1" }] });
    expect(result).toMatchObject({ role: "tool", toolCallId: "call_1", toolName: "exec_command", content: expect.stringContaining("Process exited with code 0") });
  });

  it("echoes the request as OpenAI does: tools as sent, store false", () => {
    const { shape } = parse(structuredClone(codex.body));
    expect(shape.echo).toMatchObject({ store: false, tool_choice: "auto", parallel_tool_calls: true, instructions: null, reasoning: { effort: null, summary: "auto" } });
    expect(shape.echo.tools).toEqual(codex.body.tools);
  });
});

describe("input items", () => {
  it("puts instructions first, then a string input as the user's message", () => {
    const { request } = parse({ ...base, instructions: "Be brief." });
    expect(request.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "Be brief."],
      ["user", "hi"],
    ]);
  });

  it("takes text parts or strings, in message items with or without a type", () => {
    const input = [
      { role: "system", content: "S" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_text", text: "b" }] },
      { role: "assistant", content: [{ type: "output_text", text: "c", annotations: [] }] },
      { role: "developer", content: "late rule" },
    ];
    const { request } = parse({ ...base, input });
    expect(request.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "S"],
      ["user", "a\nb"],
      ["assistant", "c"],
      ["system", "late rule"],
    ]);
  });

  it("joins text and parallel function_call items into one assistant turn, restores namespaced names, and skips reasoning", () => {
    const input = [
      { role: "user", content: "go" },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "xyz" },
      { role: "assistant", content: "Two calls." },
      { type: "function_call", call_id: "c1", name: "a", arguments: '{"x":1}' },
      { type: "function_call", call_id: "c2", name: "spawn", namespace: "agents", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "one" },
      { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "two" }] },
    ];
    const { request } = parse({ ...base, input });
    expect(request.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool"]);
    expect(request.messages[1]).toMatchObject({
      content: "Two calls.",
      toolCalls: [
        { name: "a", args: { x: 1 }, callId: "c1" },
        { name: "agents__spawn", args: {}, callId: "c2" },
      ],
    });
    expect(request.messages[3]).toMatchObject({ content: "two", toolName: "agents__spawn" });
    expect(JSON.stringify(request)).not.toContain("xyz");
  });

  it("accepts unknown items and parts; images and files become a visible placeholder", () => {
    const input = [
      { type: "item_reference", id: "msg_1" },
      { role: "user", content: [{ type: "input_text", text: "look" }, { type: "input_image", image_url: "data:," }, { type: "something_new" }] },
      { type: "web_search_call", id: "ws_1", status: "completed" },
    ];
    const { request } = parse({ ...base, input });
    expect(request.messages.map((m) => m.content)).toEqual(["look\n[image omitted: the forge-ts proxy passes only text to its backend]"]);
  });

  it("ignores unknown top-level fields", () => {
    const extra = { include: ["reasoning.encrypted_content"], prompt_cache_key: "k", service_tier: "auto", metadata: { a: "b" }, truncation: "auto", user: "u", safety_identifier: "s", client_metadata: {}, brand_new: 1 };
    expect(parse({ ...base, ...extra }).request.body).toEqual({});
  });
});

describe("fields the backend gets", () => {
  it("maps max_output_tokens, sampling and reasoning.effort to chat names", () => {
    const { request } = parse({ ...base, max_output_tokens: 64, temperature: 0.2, top_p: 0.9, reasoning: { effort: "low" }, parallel_tool_calls: false });
    expect(request.body).toEqual({ max_tokens: 64, temperature: 0.2, top_p: 0.9, reasoning_effort: "low", parallel_tool_calls: false });
  });

  it("checks text.format json_schema as chat's response_format, and sends it on in chat's shape", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    const { request } = parse({ ...base, text: { format: { type: "json_schema", name: "out", schema, strict: true } } });
    expect(request.format).toEqual({ kind: "json_schema", name: "out", schema, strict: true });
    expect(request.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "out", schema, strict: true } });
    expect(parse({ ...base, text: { format: { type: "json_object" } } }).request.format).toEqual({ kind: "json_object" });
    expect(parse({ ...base, text: { format: { type: "text" }, verbosity: "low" } }).request.format).toBeUndefined();
  });

  it("narrows the tools with allowed_tools and forces a named function", () => {
    const tools = [
      { type: "function", name: "a" },
      { type: "function", name: "b" },
    ];
    const allowed = parse({ ...base, tools, tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "b" }] } }).request;
    expect(allowed.tools.map((t) => t.name)).toEqual(["b"]);
    expect(allowed.toolChoice).toBe("required");
    expect(parse({ ...base, tools, tool_choice: { type: "function", name: "a" } }).request.toolChoice).toEqual({ type: "function", function: { name: "a" } });
  });
});

describe("400s", () => {
  it("refuses what needs stored state, saying the proxy is stateless", () => {
    expect(refusal({ ...base, previous_response_id: "resp_1" })).toMatch(/^previous_response_id: the forge-ts proxy is stateless .* send the whole conversation in `input`/);
    expect(refusal({ ...base, conversation: "conv_1" })).toMatch(/^conversation: the forge-ts proxy is stateless/);
    expect(refusal({ ...base, background: true })).toMatch(/^background: /);
    expect(parse({ ...base, store: true, previous_response_id: null }).request.messages).toHaveLength(1);
  });

  it.each([
    ["no input", { model: "m" }, /^input: /],
    ["a function_call without call_id", { ...base, input: [{ type: "function_call", name: "a", arguments: "{}" }] }, /^input\[0\]\.call_id/],
    ["a message with an unknown role", { ...base, input: [{ role: "tool", content: "x" }] }, /^input\[0\]\.role/],
    ["only system items", { ...base, input: [{ role: "developer", content: "x" }] }, /^input: at least one/],
    ["a function tool without a name", { ...base, tools: [{ type: "function" }] }, /^tools\[0\]\.name/],
    ["a nested tool without a name", { ...base, tools: [{ type: "namespace", name: "ns", tools: [{ type: "function" }] }] }, /^tools\[0\]\.tools\[0\]\.name/],
    ["two tools with one flat name", { ...base, tools: [{ type: "function", name: "ns__a" }, { type: "namespace", name: "ns", tools: [{ type: "function", name: "a" }] }] }, /more than one tool is called "ns__a"/],
    ["tool_choice naming a missing function", { ...base, tools: [{ type: "function", name: "a" }], tool_choice: { type: "function", name: "b" } }, /tool_choice names "b"/],
    ["tool_choice forcing a dropped built-in", { ...base, tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } }, /tool_choice forces a "web_search" tool/],
    ["a text.format schema without a name", { ...base, text: { format: { type: "json_schema", schema: {} } } }, /^text\.format\.name/],
    ["a text.format schema that does not compile", { ...base, text: { format: { type: "json_schema", name: "x", schema: { type: "nonsense" } } } }, /schema/],
    ["max_output_tokens that is not a positive integer", { ...base, max_output_tokens: 0 }, /^max_output_tokens/],
  ])("refuses %s", (_name, body, message) => {
    expect(refusal(body)).toMatch(message);
  });

  it("never refuses a built-in tool for being there", () => {
    const tools = [{ type: "web_search" }, { type: "file_search", vector_store_ids: [] }, { type: "computer_use_preview" }, { type: "mcp", server_label: "wiki" }, { type: "code_interpreter" }, { type: "image_generation" }, { type: "local_shell" }];
    const { request, shape } = parse({ ...base, tools });
    expect(request.tools).toEqual([]);
    expect(shape.dropped).toEqual(["web_search", "file_search", "computer_use_preview", "mcp:wiki", "code_interpreter", "image_generation", "local_shell"]);
  });
});
